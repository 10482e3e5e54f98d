/**
 * The one way parsers read HTML: parse5 builds a domhandler tree (the same stack cheerio uses) and
 * css-select runs precompiled CSS selectors over it. Parsers keep their selectors as named
 * constants beside them and query inside the smallest subtree that holds what they want.
 */
import { compile, selectAll, selectOne } from "css-select";
import type { AnyNode, Document, Element } from "domhandler";
import { isTag, isText } from "domhandler";
import { parse } from "parse5";
import { adapter } from "parse5-htmlparser2-tree-adapter";

export type { AnyNode, Document, Element };

export function parseHtml(html: string): Document {
  return parse(html, { treeAdapter: adapter }) as unknown as Document;
}

type Root = AnyNode | AnyNode[];
const compiled = new Map<string, ReturnType<typeof compile>>();

/** A selector compiled once and cached: parsers call the same few selectors on every page. */
function query(selector: string): ReturnType<typeof compile> {
  let fn = compiled.get(selector);
  if (!fn) {
    fn = compile(selector);
    compiled.set(selector, fn);
  }
  return fn;
}

export function all(selector: string, root: Root): Element[] {
  return selectAll(query(selector), root) as Element[];
}

export function first(selector: string, root: Root): Element | null {
  return selectOne(query(selector), root) as Element | null;
}

export function attr(el: Element | null | undefined, name: string): string | undefined {
  return el?.attribs[name];
}

export function hasClass(el: Element, cls: string): boolean {
  return (el.attribs.class ?? "").split(/\s+/).includes(cls);
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
  const walk = (n: AnyNode): void => {
    if (isText(n)) parts.push(n.data);
    else if (isTag(n)) {
      if (SKIP_TEXT.has(n.name)) return;
      const block = BLOCK.has(n.name);
      if (block) parts.push(" ");
      for (const c of n.children) walk(c);
      if (block) parts.push(" ");
    } else if ("children" in n) for (const c of (n as Document).children) walk(c);
  };
  walk(node);
  return parts.join("").replace(/\s+/g, " ").trim();
}

/** Text of the first match, or undefined when there is none or it is empty. */
export function textOf(selector: string, root: Root): string | undefined {
  const t = text(first(selector, root));
  return t || undefined;
}

/** Ancestors from the parent up, nearest first. */
export function* ancestors(el: AnyNode): Generator<Element> {
  for (let p = el.parent; p; p = p.parent) if (isTag(p)) yield p;
}

export function closest(el: AnyNode, predicate: (e: Element) => boolean): Element | undefined {
  for (const a of ancestors(el)) if (predicate(a)) return a;
  return undefined;
}

const GOOGLE_HOST = /^(?:https?:)?\/\/(?:www\.)?google\.[a-z.]+(?=\/)/i;

/**
 * The real target of a result link. Unwraps the upstream's redirectors (`/url?q=`, `/url?url=`,
 * `/aclk?…&adurl=`), makes relative links absolute on `base`, and leaves other links as they are.
 */
export function targetUrl(href: string | undefined, base = "https://www.google.com"): string | undefined {
  if (!href || href.startsWith("javascript:") || href === "#") return undefined;
  let url: URL;
  try {
    url = new URL(href, base);
  } catch {
    return undefined;
  }
  const isGoogle = GOOGLE_HOST.test(`${url.protocol}//${url.host}/`);
  if (isGoogle && (url.pathname === "/url" || url.pathname === "/interstitial")) {
    const inner = url.searchParams.get("q") || url.searchParams.get("url");
    if (inner && /^https?:\/\//i.test(inner)) return inner;
  }
  if (isGoogle && url.pathname.startsWith("/aclk")) {
    const inner = url.searchParams.get("adurl");
    if (inner && /^https?:\/\//i.test(inner)) return inner;
  }
  return url.href;
}

/** `1,234` / `1.234` / `(1.4K)` / `2 mil` → a whole number, or undefined. */
export function parseCount(raw: string | undefined): number | undefined {
  if (!raw) return undefined;
  const m = raw.replace(/\u00a0/g, " ").match(/(\d[\d.,\s]*)\s*([KkMm])?/);
  if (!m?.[1]) return undefined;
  const digits = m[1].trim();
  const suffix = m[2]?.toLowerCase();
  if (suffix) {
    const n = Number(digits.replace(",", "."));
    return Number.isFinite(n) ? Math.round(n * (suffix === "k" ? 1_000 : 1_000_000)) : undefined;
  }
  const n = Number(digits.replace(/[.,\s]/g, ""));
  return Number.isFinite(n) ? n : undefined;
}

/** `4,6` / `4.6` → 4.6, or undefined. */
export function parseRating(raw: string | undefined): number | undefined {
  const m = raw?.match(/\d+(?:[.,]\d+)?/);
  if (!m) return undefined;
  const n = Number(m[0].replace(",", "."));
  return Number.isFinite(n) ? n : undefined;
}

/** `R$ 1.299,90` / `$27.00` / `1 299,90 €` → 1299.9, or undefined. */
export function parsePrice(raw: string | undefined): number | undefined {
  const m = raw?.replace(/\u00a0/g, " ").match(/\d[\d.,\s]*/);
  if (!m) return undefined;
  let s = m[0].trim().replace(/\s/g, "");
  const lastComma = s.lastIndexOf(",");
  const lastDot = s.lastIndexOf(".");
  if (lastComma > lastDot) {
    // 1.299,90 or 12,50: comma is the decimal mark when two digits follow it.
    s = /,\d{1,2}$/.test(s) ? s.replace(/\./g, "").replace(",", ".") : s.replace(/,/g, "");
  } else {
    s = /\.\d{1,2}$/.test(s) ? s.replace(/,/g, "") : s.replace(/[.,]/g, "");
  }
  const n = Number(s);
  return Number.isFinite(n) ? n : undefined;
}

const WAYBACK = /^(?:(?:https?:)?\/\/(?:web\.)?archive\.org)?\/web\/\d{1,14}(?:[a-z]{2}_)?\/(.+)$/i;

/**
 * A link as it was before the Wayback Machine rewrote it: `https://web.archive.org/web/2017…/https://x`,
 * `/web/2017…im_/https://x` → `https://x`. Other links come back unchanged.
 */
export function unwrapWayback(href: string | undefined): string | undefined {
  const inner = href?.match(WAYBACK)?.[1];
  if (!inner) return href;
  // The archive sometimes collapses the scheme's double slash (`https:/x`).
  return inner.replace(/^(https?:)\/(?!\/)/i, "$1//");
}

const SCRIPTED_IMAGE = /var s='(data:image\/[^']+)';\s*var ii=\[([^\]]*)\]/g;

/**
 * Images a raw results page fills in by script: the `<img id="dimg_3">` it serves holds a 1×1
 * placeholder, and an inline script sets the real data URI later (`var s='data:…';var ii=['dimg_3'];
 * _setImagesSrc(ii,s)`). Reads every such script once: image id → data URI.
 */
export function scriptedImageSources(doc: Document): Map<string, string> {
  const sources = new Map<string, string>();
  for (const script of all("script", doc)) {
    const code = script.children.map((c) => (isText(c) ? c.data : "")).join("");
    for (const m of code.matchAll(SCRIPTED_IMAGE)) {
      const uri = m[1]!.replace(/\\x([0-9a-f]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
      for (const id of m[2]!.matchAll(/'([^']+)'/g)) sources.set(id[1]!, uri);
    }
  }
  return sources;
}

/** The 1×1 GIF the upstream puts in an `<img>` until a script or lazy loader sets the real image. */
export function isPlaceholderImage(src: string | undefined): boolean {
  return !src || /^data:image\/gif;base64,R0lGODlhAQABA/i.test(src);
}

/**
 * The first element carrying each of the given ids, found in one walk of the tree that stops as soon
 * as all are found. A parser that needs several landmarks of a page (`#rso`, `#tads`, `#bres`…)
 * locates them together instead of running one whole-document query each.
 */
export function elementsById(root: AnyNode, ids: readonly string[]): Map<string, Element> {
  const wanted = new Set(ids);
  const found = new Map<string, Element>();
  const stack: AnyNode[] = [root];
  while (stack.length > 0 && found.size < wanted.size) {
    const node = stack.pop()!;
    if (!("children" in node)) continue;
    if (isTag(node)) {
      if (NO_LANDMARKS.has(node.name)) continue;
      const id = node.attribs.id;
      if (id !== undefined && wanted.has(id) && !found.has(id)) found.set(id, node);
    }
    // Only elements can carry ids: text and comments (most of a page's nodes) are not stacked.
    for (let i = node.children.length - 1; i >= 0; i--) {
      const child = node.children[i]!;
      if (isTag(child)) stack.push(child);
    }
  }
  return found;
}

/** Subtrees `elementsById` does not walk: they never hold a page landmark. */
const NO_LANDMARKS = new Set(["script", "style", "noscript", "template", "svg", "head"]);

/**
 * Visible text like `text`, leaving out every element (and its subtree) for which `skip` returns
 * true: expand buttons, hidden copies, labels read separately. Scripts and styles are always skipped.
 */
export function textWithout(node: AnyNode | null | undefined, skip: (el: Element) => boolean): string {
  if (!node) return "";
  const parts: string[] = [];
  const walk = (n: AnyNode): void => {
    if (isText(n)) parts.push(n.data);
    else if (isTag(n)) {
      if (SKIP_TEXT.has(n.name) || skip(n)) return;
      // `display: contents` makes no box of its own: its text flows on the parent's line.
      const block = BLOCK.has(n.name) && !/display:\s*contents/i.test(n.attribs.style ?? "");
      if (block) parts.push(" ");
      for (const c of n.children) walk(c);
      if (block) parts.push(" ");
    } else if ("children" in n) for (const c of (n as Document).children) walk(c);
  };
  walk(node);
  return parts.join("").replace(/\s+/g, " ").trim();
}

/** Hidden by its own markup: the `hidden` attribute or an inline `display:none`. */
export function hiddenByMarkup(el: Element): boolean {
  if (el.attribs.hidden !== undefined) return true;
  const style = el.attribs.style;
  return style !== undefined && /display:\s*none/i.test(style);
}

/**
 * The first element matching each selector, found in one walk of the tree (document order, root
 * included) that stops once every selector has matched. Like `elementsById` it skips `<head>`,
 * scripts, styles and inline SVG icons, which never hold a block: a cheaper way than `first`
 * to locate a block's container, and one walk for several landmarks instead of one each. A test may
 * also be a function, e.g. a cheap look at `class` that calls `matches` only for likely elements.
 */
export function firstOfEach(
  root: AnyNode,
  selectors: readonly (string | ((el: Element) => boolean))[],
): (Element | undefined)[] {
  const tests = selectors.map((s) => (typeof s === "string" ? query(s) : s));
  const found: (Element | undefined)[] = selectors.map(() => undefined);
  let missing = selectors.length;
  const stack: AnyNode[] = [root];
  while (stack.length > 0 && missing > 0) {
    const node = stack.pop()!;
    if (isTag(node)) {
      if (NO_LANDMARKS.has(node.name)) continue;
      for (let i = 0; i < tests.length; i++) {
        if (found[i] === undefined && tests[i]!(node)) {
          found[i] = node;
          missing--;
        }
      }
      for (let i = node.children.length - 1; i >= 0; i--) if (isTag(node.children[i]!)) stack.push(node.children[i]!);
    } else if ("children" in node) {
      for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
    }
  }
  return found;
}

/** Whether the element matches the selector (compiled once, like `all` and `first`). */
export function matches(el: Element, selector: string): boolean {
  return query(selector)(el);
}

/** What marks the element a block starts at: see `landmark`. */
export interface LandmarkSpec {
  /** Candidates carry one of these classes, one of these attribute values (`true`: any value)… */
  classes?: readonly string[];
  attributes?: Readonly<Record<string, string | true>>;
  /** …or are one of these elements… */
  tags?: readonly string[];
  /** …and are the landmark when they also match this selector (tested on candidates only). */
  selector?: string;
}

const landmarkSpecs: LandmarkSpec[] = [];
const landmarksFound = new WeakMap<AnyNode, (Element | undefined)[]>();

/**
 * Registers a page landmark (once, at module load) and returns its lookup. The first lookup on a
 * page finds every registered landmark in one walk, reading each element's class and the few
 * attributes the specs name once, and remembers the answers for that page: extractors that each
 * locate their own block share one walk of the page instead of one walk each. Walking is what costs
 * (attribute lookups on every element of a large page), not the tests. The page is never changed.
 */
export function landmark(spec: LandmarkSpec): (root: AnyNode) => Element | undefined {
  const index = landmarkSpecs.push(spec) - 1;
  return (root) => {
    let found = landmarksFound.get(root);
    if (!found || found.length <= index) {
      found = findLandmarks(root, landmarkSpecs);
      landmarksFound.set(root, found);
    }
    return found[index];
  };
}

function findLandmarks(root: AnyNode, specs: readonly LandmarkSpec[]): (Element | undefined)[] {
  const byClass = new Map<string, number[]>();
  const byTag = new Map<string, number[]>();
  const byAttribute = new Map<string, { spec: number; value: string | true }[]>();
  const add = <V>(map: Map<string, V[]>, key: string, value: V) => map.set(key, [...(map.get(key) ?? []), value]);
  specs.forEach((spec, i) => {
    for (const c of spec.classes ?? []) add(byClass, c, i);
    for (const t of spec.tags ?? []) add(byTag, t, i);
    for (const [name, value] of Object.entries(spec.attributes ?? {})) add(byAttribute, name, { spec: i, value });
  });
  const escape = (c: string) => c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const classPattern = byClass.size ? new RegExp(`(?:^|\\s)(?:${[...byClass.keys()].map(escape).join("|")})(?:\\s|$)`) : null;
  const attributes = [...byAttribute.entries()];

  const found: (Element | undefined)[] = specs.map(() => undefined);
  let missing = specs.length;
  const offer = (el: Element, i: number) => {
    if (found[i] !== undefined) return;
    const selector = specs[i]!.selector;
    if (selector !== undefined && !matches(el, selector)) return;
    found[i] = el;
    missing--;
  };
  const test = (el: Element): boolean => {
    const cls = el.attribs.class;
    if (classPattern && cls !== undefined && classPattern.test(cls)) {
      for (const c of cls.split(/\s+/)) for (const i of byClass.get(c) ?? []) offer(el, i);
    }
    for (const i of byTag.get(el.name) ?? []) offer(el, i);
    for (const [name, wanted] of attributes) {
      const value = el.attribs[name];
      if (value !== undefined) for (const w of wanted) if (w.value === true || w.value === value) offer(el, w.spec);
    }
    return missing === 0;
  };
  firstOfEach(root, [test]);
  return found;
}
