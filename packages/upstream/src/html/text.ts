/** Reading elements: their visible text, attributes, classes and ancestors. */
import type { AnyNode, Document, Element } from "domhandler";
import { isTag, isText } from "domhandler";

export function attr(el: Element | null | undefined, name: string): string | undefined {
  return el?.attribs[name];
}

export function hasClass(el: Element, cls: string): boolean {
  return (el.attribs.class ?? "").split(/\s+/).includes(cls);
}

/** Hidden by its own markup: the `hidden` attribute or an inline `display:none`. */
export function hiddenByMarkup(el: Element): boolean {
  if (el.attribs.hidden !== undefined) return true;
  const style = el.attribs.style;
  return style !== undefined && /display:\s*none/i.test(style);
}

/** Ancestors from the parent up, nearest first. */
export function* ancestors(el: AnyNode): Generator<Element> {
  for (let p = el.parent; p; p = p.parent) if (isTag(p)) yield p;
}

export function closest(el: AnyNode, predicate: (e: Element) => boolean): Element | undefined {
  for (const a of ancestors(el)) if (predicate(a)) return a;
  return undefined;
}

const SKIP_TEXT = new Set(["script", "style", "noscript", "template"]);
const BLOCK = new Set(["br", "div", "p", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "table"]);

/**
 * Visible text of a node with whitespace folded. Block elements and `<br>` separate words, so
 * `<div>a</div><div>b</div>` reads "a b", never "ab". Scripts and styles are skipped.
 */
export function text(node: AnyNode | null | undefined): string {
  if (!node) return "";
  const parts: string[] = [];
  collectText(node, parts, undefined);
  return folded(parts);
}

/**
 * Visible text like `text`, leaving out every element (and its subtree) for which `skip` returns
 * true: expand buttons, hidden copies, labels read separately. Scripts and styles are always skipped.
 */
export function textWithout(node: AnyNode | null | undefined, skip: (el: Element) => boolean): string {
  if (!node) return "";
  const parts: string[] = [];
  collectText(node, parts, skip);
  return folded(parts);
}

/** The text of `n` into `parts`, block elements spaced, elements `skip` says so left out. */
function collectText(n: AnyNode, parts: string[], skip: ((el: Element) => boolean) | undefined): void {
  if (isText(n)) parts.push(n.data);
  else if (isTag(n)) {
    if (SKIP_TEXT.has(n.name)) return;
    if (skip === undefined) {
      const block = BLOCK.has(n.name);
      if (block) parts.push(" ");
      for (const c of n.children) collectText(c, parts, skip);
      if (block) parts.push(" ");
      return;
    }
    if (skip(n)) return;
    // `display: contents` makes no box of its own: its text flows on the parent's line.
    const block = BLOCK.has(n.name) && !/display:\s*contents/i.test(n.attribs.style ?? "");
    if (block) parts.push(" ");
    for (const c of n.children) collectText(c, parts, skip);
    if (block) parts.push(" ");
  } else if ("children" in n) for (const c of (n as Document).children) collectText(c, parts, skip);
}

/** Whitespace other than single spaces: only then does folding change the text. */
const UNFOLDED = /[^\S ]| {2}/;

/** The parts joined, each run of whitespace folded to one space, and trimmed. */
function folded(parts: string[]): string {
  const joined = parts.join("");
  return (UNFOLDED.test(joined) ? joined.replace(/\s+/g, " ") : joined).trim();
}

/** The separate runs of text in an element, in order: its text nodes, each trimmed (scripts, styles and hidden markup left out). */
export function textLines(el: Element): string[] {
  const lines: string[] = [];
  const walk = (node: Element): void => {
    for (const child of node.children) {
      if (isTag(child)) {
        if (child.name !== "script" && child.name !== "style" && !hiddenByMarkup(child)) walk(child);
      } else if (isText(child)) {
        const t = child.data.replace(/\s+/g, " ").trim();
        if (t) lines.push(t);
      }
    }
  };
  walk(el);
  return lines;
}
