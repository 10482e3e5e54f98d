/**
 * The one way parsers read HTML: parse5 builds a domhandler tree (the same stack cheerio uses) and
 * css-select runs precompiled CSS selectors over it. Parsers keep their selectors as named
 * constants beside them and query inside the smallest subtree that holds what they want.
 */
import { compile } from "css-select";
import type { AnyNode } from "domhandler";
import { Comment, Document, Element, isTag, isText, Text } from "domhandler";
import { removeSubsets } from "domutils";
import { html as parse5Html, parse, parseFragment as parse5Fragment } from "parse5";
import { adapter } from "parse5-htmlparser2-tree-adapter";

export type { AnyNode, Document, Element };

export function parseHtml(html: string): Document {
  const doc = parse(html, { treeAdapter }) as unknown as Document;
  if (doc instanceof Page) doc.source = html;
  if (capture !== undefined && capture.doc === undefined) capture.doc = doc;
  return doc;
}

/** Set while `withDocument` runs: where the first document parsed goes. */
let capture: { doc: Document | undefined } | undefined;

/**
 * Runs a parser, and returns what it returned with the first document `parseHtml` built meanwhile
 * (the page: every parser parses its page first). What is read after a parser, its coverage figure
 * (coverage.ts), then walks the tree the parser walked instead of parsing the page again. Parsers
 * are synchronous, so no other parse can run in between.
 */
export function withDocument<T>(run: () => T): { value: T; doc: Document | undefined } {
  const outer = capture;
  const mine: { doc: Document | undefined } = { doc: undefined };
  capture = mine;
  try {
    return { value: run(), doc: mine.doc };
  } finally {
    capture = outer;
  }
}

/** The nodes of an HTML fragment (a snippet of a page served inside a script), parentless. */
export function parseFragment(html: string): AnyNode[] {
  const nodes = (parse5Fragment(html, { treeAdapter }) as unknown as Document).children;
  for (const node of nodes) node.parent = null;
  return nodes;
}

/** What the page walk found on a page, by registered lookup (see `pageWalk`). */
type Walked = (Element | Element[] | undefined)[];

/**
 * A document `parseHtml` built, which keeps its page walk. Kept on the page rather than in a WeakMap
 * keyed by it: once the page has been promoted to V8's old generation, young-generation collections
 * hold such an entry's value (elements, so the whole tree) as live until the next full collection,
 * copying and promoting trees of pages long done with.
 */
class Page extends Document {
  walked: Walked | undefined = undefined;
  /** The page's scripts outside `<head>`, met on the page walk (undefined until a whole walk ran). */
  scripts: Element[] | undefined = undefined;
  /** The HTML the page was parsed from: what its scripts say is read there (see `deferredHtml`). */
  source: string | undefined = undefined;
}

/**
 * parse5's htmlparser2 adapter, building the same domhandler tree without the two maps it keeps per
 * element beside `attribs`, the namespace and prefix of each attribute (`x-attribsNamespace`,
 * `x-attribsPrefix`): parse5 needs them only to serialize the tree back to HTML, which no parser
 * does, and they are two of the three dictionaries the adapter builds per element. Attribute names
 * and values are the same. Elements, text and comments are built by the constructors below.
 */
const treeAdapter: typeof adapter = {
  ...adapter,
  createDocument() {
    const page = new Page([]);
    page["x-mode"] = parse5Html.DOCUMENT_MODE.NO_QUIRKS;
    return page;
  },
  createElement(tagName, namespaceURI, attrs) {
    const attribs = new Attribs();
    for (const { name, value } of attrs) attribs[name] = value;
    return new TreeElement(tagName, attribs, namespaceURI);
  },
  createTextNode: (data) => new TreeText(data),
  createCommentNode: (data) => new TreeComment(data),
  insertText(parentNode, text) {
    const last = parentNode.children[parentNode.children.length - 1];
    if (last && isText(last)) last.data += text;
    else adapter.appendChild(parentNode, new TreeText(text));
  },
  insertTextBefore(parentNode, text, referenceNode) {
    const { prev } = referenceNode;
    if (prev && isText(prev)) prev.data += text;
    else adapter.insertBefore(parentNode, new TreeText(text), referenceNode);
  },
  /** A repeated `<html>` or `<body>` tag: its attributes the element lacks are added. */
  adoptAttributes(recipient, attrs) {
    for (const { name, value } of attrs) if (recipient.attribs[name] === undefined) recipient.attribs[name] = value;
  },
};

/** domhandler's type tags, read off its own nodes. */
const TYPE = {
  tag: new Element("div", {}).type,
  script: new Element("script", {}).type,
  style: new Element("style", {}).type,
};

/**
 * Constructors of domhandler's elements, text and comments: they share domhandler's prototypes (so
 * `instanceof`, the DOM getters and `isTag` see domhandler nodes) and set the same own properties in
 * the same order, by plain assignment. domhandler declares them as class fields, which V8 (Node 20)
 * defines one by one in a separate initializer on every construction: over a page's thousands of
 * nodes, that alone cost about a tenth of a bare parse5 parse.
 */
const TreeElement = function (this: Element, name: string, attribs: Record<string, string>, namespace: string) {
  this.parent = null;
  this.prev = null;
  this.next = null;
  this.startIndex = null;
  this.endIndex = null;
  this.children = [];
  this.name = name;
  this.attribs = attribs;
  this.type = name === "script" ? TYPE.script : name === "style" ? TYPE.style : TYPE.tag;
  this.namespace = namespace;
} as unknown as new (name: string, attribs: Record<string, string>, namespace: string) => Element;
TreeElement.prototype = Element.prototype;

const TreeText = dataNodeConstructor(Text);
const TreeComment = dataNodeConstructor(Comment);

function dataNodeConstructor<N extends Text | Comment>(base: new (data: string) => N): new (data: string) => N {
  const type = new base("").type;
  const construct = function (this: N, data: string) {
    this.parent = null;
    this.prev = null;
    this.next = null;
    this.startIndex = null;
    this.endIndex = null;
    this.data = data;
    this.type = type;
  } as unknown as new (data: string) => N;
  construct.prototype = base.prototype;
  return construct;
}

/**
 * An element's attributes: an object built by a constructor, which V8 keeps in its fast layout
 * (`Object.create(null)` makes a hash-table object, slower to fill and to read), on a prototype that
 * inherits nothing, so an attribute named `__proto__`, `constructor` or `toString` is an attribute
 * like any other and an element without one reads undefined.
 */
const Attribs = function () {} as unknown as new () => Record<string, string>;
Attribs.prototype = Object.create(null);

type Root = AnyNode | AnyNode[];
type Test = (el: Element) => boolean;
const compiled = new Map<string, Test>();

/** A selector compiled once and cached: parsers call the same few selectors on every page. */
function query(selector: string): Test {
  let fn = compiled.get(selector);
  if (!fn) {
    fn = compile(selector) as Test;
    compiled.set(selector, fn);
  }
  return fn;
}

/**
 * Every element under `root` matching the selector, in document order. Like css-select's `selectAll`
 * (an array root's own nodes are tested too, a `<template>`'s content is not searched), but each
 * element is only tested against the selector's alternatives it could match: see `Sieve`.
 */
export function all(selector: string, root: Root): Element[] {
  const found: Element[][] = [[]];
  const { sieve } = selectionOf(selector);
  walk(start(root), (el) => {
    sieve.collect(el, found);
    return queryStep(el);
  });
  return found[0]!;
}

/** The first element under `root` matching the selector, or null; the walk stops there. */
export function first(selector: string, root: Root): Element | null {
  const found: Element[][] = [[]];
  const { sieve } = selectionOf(selector);
  walk(start(root), (el) => {
    sieve.collect(el, found);
    return found[0]!.length > 0 ? STOP : queryStep(el);
  });
  return found[0]![0] ?? null;
}

/** css-select does not search a `<template>`'s content: it is not part of the page. */
function queryStep(el: Element): Step {
  return el.name === "template" ? OVER : DOWN;
}

/** Every match of a fixed set of selectors under one root, read after the one walk that found them. */
export interface Scan {
  /** The selector's matches in document order (the selector must be one of those scanned). */
  all(selector: string): readonly Element[];
  first(selector: string): Element | null;
  /** Text of the first match, or undefined when there is none or it is empty (like `textOf`). */
  textOf(selector: string): string | undefined;
}

/**
 * Every match of each selector under `root`, found in one walk: a parser reading several parts of
 * one block (a result's link, snippet, date, sitelinks) scans the block once instead of querying it
 * once per part. Matches are the same as `all(selector, root)` for each selector; an empty selector
 * matches nothing. Pass the same array (a constant beside the parser) on every call: it is compiled
 * once.
 */
export function scan(root: Root, selectors: readonly string[]): Scan {
  const selected = selection(selectors);
  const found: Element[][] = [];
  for (let i = 0; i < selectors.length; i++) found.push([]);
  walk(start(root), (el) => {
    selected.sieve.collect(el, found);
    return queryStep(el);
  });
  return new Scanned(selected.index, found);
}

class Scanned implements Scan {
  constructor(
    private readonly index: ReadonlyMap<string, number>,
    private readonly found: readonly Element[][],
  ) {}

  all(selector: string): readonly Element[] {
    const i = this.index.get(selector);
    if (i === undefined) throw new Error(`scan: "${selector}" was not scanned`);
    return this.found[i]!;
  }

  first(selector: string): Element | null {
    return this.all(selector)[0] ?? null;
  }

  textOf(selector: string): string | undefined {
    return text(this.first(selector)) || undefined;
  }
}

/**
 * Scans of disjoint blocks (results, tiles, cards) answered from matches already found, by the page
 * walk (`landmarks`) or a scan of the page: each match goes to the block it lies in, found by going up
 * from it, so the blocks are not walked again. Reading a freshly parsed page costs mostly the first
 * look at each element; a second walk over the same elements costs nearly as much as the first.
 * For each selector, a block gets the matches strictly inside it, in document order: what
 * `scan(block, selectors)` finds, provided `matchesOf(selector)` holds every match under the blocks.
 * Blocks that nest are scanned one by one instead (a match would belong to more than one).
 */
export function scansOf(
  blocks: readonly Element[],
  selectors: readonly string[],
  matchesOf: (selector: string) => readonly Element[],
): Scan[] {
  const blockAt = new Map<AnyNode, number>();
  blocks.forEach((block, i) => blockAt.set(block, i));
  for (const block of blocks) {
    for (let node = block.parent; node; node = node.parent) {
      if (blockAt.has(node)) return blocks.map((b) => scan(b, selectors));
    }
  }
  const found = blocks.map(() => selectors.map((): Element[] => []));
  selectors.forEach((selector, s) => {
    for (const el of matchesOf(selector)) {
      for (let node = el.parent; node; node = node.parent) {
        const i = blockAt.get(node);
        if (i !== undefined) {
          found[i]![s]!.push(el);
          break;
        }
      }
    }
  });
  const { index } = selection(selectors);
  return found.map((f) => new Scanned(index, f));
}

interface Selection {
  sieve: Sieve;
  /** Where each selector's matches go. */
  index: ReadonlyMap<string, number>;
}

/** Selector lists compiled into sieves: by the list itself, or its text for a list built anew. */
const selectionsByList = new WeakMap<readonly string[], Selection>();
const selectionsByText = new Map<string, Selection>();

function selection(selectors: readonly string[]): Selection {
  let s = selectionsByList.get(selectors);
  if (!s) {
    const key = selectors.join("\n");
    s = selectionsByText.get(key) ?? compileSelection(selectors);
    selectionsByText.set(key, s);
    selectionsByList.set(selectors, s);
  }
  return s;
}

const singleSelections = new Map<string, Selection>();

function selectionOf(selector: string): Selection {
  let s = singleSelections.get(selector);
  if (!s) singleSelections.set(selector, (s = compileSelection([selector])));
  return s;
}

function compileSelection(selectors: readonly string[]): Selection {
  const sieve = new Sieve();
  const index = new Map<string, number>();
  selectors.forEach((selector, target) => {
    if (!index.has(selector)) index.set(selector, target);
    for (const alternative of selector.trim() ? alternatives(selector) : []) {
      sieve.add(requirement(alternative), { target, test: query(alternative) });
    }
  });
  return { sieve, index };
}

/** What a visit tells the walk: go down into the element's children, pass over them, or stop. */
const DOWN = 0;
const OVER = 1;
const STOP = 2;
type Step = typeof DOWN | typeof OVER | typeof STOP;

/** Where a query starts, as css-select has it: an array's own nodes, else a node's children. */
function start(root: Root): readonly AnyNode[] {
  if (Array.isArray(root)) return removeSubsets(root);
  return "children" in root ? root.children : [];
}

/** Visits the elements of `nodes` and below in document order, as each visit says. */
function walk(nodes: readonly AnyNode[], visit: (el: Element) => Step): void {
  const stack: Element[] = [];
  pushElements(stack, nodes);
  while (stack.length > 0) {
    const el = stack.pop()!;
    const step = visit(el);
    if (step === STOP) return;
    if (step === DOWN) pushElements(stack, el.children);
  }
}

/** Stacks the elements among `nodes`, the first on top. */
function pushElements(stack: Element[], nodes: readonly AnyNode[]): void {
  for (let i = nodes.length - 1; i >= 0; i--) {
    const node = nodes[i]!;
    if (isTag(node)) stack.push(node);
  }
}

/**
 * The simple thing an element must carry to match a selector alternative: a class, an attribute (an
 * id has a given value) or a tag name, read from the alternative's last compound. Undefined when the
 * last compound names none of them (`*`, pseudo-classes only) or uses syntax not read here (escapes,
 * namespaces, `[a!=b]`, which matches without the attribute): such alternatives are tested on every
 * element. Whatever this returns, the element still has to pass the whole compiled alternative.
 */
type Requirement = { class: string } | { attribute: string; value?: string } | { tag: string } | undefined;

const IDENT = /^-?[_a-zA-Z\u00a0-\uffff][\w\u00a0-\uffff-]*/;
const ATTRIBUTE = /^\[\s*([\w-]+)\s*(?:([~|^$*]?=)\s*(?:"[^"]*"|'[^']*'|[^\s\]"']+)\s*[is]?\s*)?\]/;

function requirement(alternative: string): Requirement {
  if (/[\\|]|!=/.test(alternative)) return undefined;
  // The last compound starts after the last combinator outside brackets, parentheses and quotes.
  let from = 0;
  scanTopLevel(alternative, (c, i) => {
    if (c === " " || c === ">" || c === "+" || c === "~" || c === "\t" || c === "\n") from = i + 1;
  });
  let rest = alternative.slice(from);
  let tag: string | undefined;
  let attribute: { attribute: string; value?: string } | undefined;
  const tagName = rest.match(IDENT);
  if (tagName) {
    tag = tagName[0].toLowerCase();
    rest = rest.slice(tagName[0].length);
  } else if (rest.startsWith("*")) rest = rest.slice(1);
  while (rest) {
    const sigil = rest[0];
    if (sigil === "." || sigil === "#") {
      const name = rest.slice(1).match(IDENT)?.[0];
      if (!name) return undefined;
      if (sigil === ".") return { class: name };
      attribute = { attribute: "id", value: name };
      rest = rest.slice(1 + name.length);
    } else if (sigil === "[") {
      const m = rest.match(ATTRIBUTE);
      if (!m) return undefined;
      attribute ??= { attribute: m[1]!.toLowerCase() };
      rest = rest.slice(m[0].length);
    } else if (sigil === ":") {
      // A pseudo-class only narrows the compound; its argument is passed over.
      const name = rest.slice(1).match(IDENT)?.[0];
      if (!name) return undefined;
      rest = rest.slice(1 + name.length);
      if (rest.startsWith("(")) {
        let end = -1;
        scanTopLevel(rest, (c, i) => {
          if (c === ")" && end < 0) end = i;
        }, 1);
        if (end < 0) return undefined;
        rest = rest.slice(end + 1);
      }
    } else return undefined;
  }
  return attribute ?? (tag ? { tag } : undefined);
}

/**
 * Calls `at` for each character of `s` outside quotes and at bracket depth `depth` (0: outside all
 * brackets and parentheses; 1: directly inside the opening one `s` starts with).
 */
function scanTopLevel(s: string, at: (c: string, i: number) => void, depth = 0): void {
  let level = 0;
  let quote = "";
  for (let i = 0; i < s.length; i++) {
    const c = s[i]!;
    if (quote) {
      if (c === quote) quote = "";
      continue;
    }
    if (c === '"' || c === "'") quote = c;
    else if (c === "(" || c === "[") level++;
    else if (c === ")" || c === "]") {
      level--;
      if (level === depth - 1) at(c, i);
      continue;
    }
    if (level === depth) at(c, i);
  }
}

/** The comma-separated alternatives of a selector list. */
function alternatives(selector: string): string[] {
  if (/\\/.test(selector)) return [selector];
  const parts: string[] = [];
  let from = 0;
  scanTopLevel(selector, (c, i) => {
    if (c === ",") {
      parts.push(selector.slice(from, i).trim());
      from = i + 1;
    }
  });
  parts.push(selector.slice(from).trim());
  return parts;
}

/** A test an element gets when it carries the rule's key; `target` says what the test decides. */
interface Rule {
  target: number;
  test?: Test;
}

/**
 * Rules sorted by what an element must carry to be worth testing: a class, a tag name, an attribute
 * (any value or one value). An element is tested only against the rules of what it carries, found
 * with one look at its name, one pattern over its class (for all classes at once) and one lookup per
 * attribute named: testing many selectors in a walk then costs little more than the walk, where
 * css-select would try each alternative of each selector on each element.
 */
class Sieve {
  private readonly byClass = new Map<string, Rule[]>();
  private readonly byTag = new Map<string, Rule[]>();
  private readonly byAttribute: AttributeRules[] = [];
  private readonly attributeRules = new Map<string, AttributeRules>();
  private readonly always: Rule[] = [];
  private classPattern: RegExp | null = null;

  add(key: Requirement, rule: Rule): void {
    if (key === undefined) this.always.push(rule);
    else if ("class" in key) {
      push(this.byClass, key.class, rule);
      const escape = (c: string) => c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      this.classPattern = new RegExp(`(?:^|\\s)(?:${[...this.byClass.keys()].map(escape).join("|")})(?:\\s|$)`);
    } else if ("tag" in key) push(this.byTag, key.tag, rule);
    else {
      let entry = this.attributeRules.get(key.attribute);
      if (!entry) {
        entry = { name: key.attribute, any: [], byValue: new Map() };
        this.byAttribute.push(entry);
        this.attributeRules.set(key.attribute, entry);
      }
      if (key.value === undefined) entry.any.push(rule);
      else push(entry.byValue, key.value, rule);
    }
  }

  /**
   * Adds the element to `found[target]` for each rule it passes among those of the keys it carries
   * (once per target: the element is then the last of that list).
   */
  collect(el: Element, found: Element[][]): void {
    const { attribs } = el;
    if (this.classPattern !== null) {
      const cls = attribs.class;
      if (cls !== undefined && this.classPattern.test(cls)) {
        for (const token of cls.split(/\s+/)) {
          const rules = this.byClass.get(token);
          if (rules !== undefined) offer(rules, el, found);
        }
      }
    }
    const byTag = this.byTag.get(el.name);
    if (byTag !== undefined) offer(byTag, el, found);
    const byAttribute = this.byAttribute;
    for (let i = 0; i < byAttribute.length; i++) {
      const entry = byAttribute[i]!;
      const value = attribs[entry.name];
      if (value === undefined) continue;
      if (entry.any.length > 0) offer(entry.any, el, found);
      const rules = entry.byValue.size === 0 ? undefined : entry.byValue.get(value);
      if (rules !== undefined) offer(rules, el, found);
    }
    if (this.always.length > 0) offer(this.always, el, found);
  }
}

/** The rules keyed by one attribute: whatever its value, or for one value. */
interface AttributeRules {
  name: string;
  any: Rule[];
  byValue: Map<string, Rule[]>;
}

function offer(rules: readonly Rule[], el: Element, found: Element[][]): void {
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i]!;
    const list = found[rule.target]!;
    if (list[list.length - 1] !== el && (rule.test === undefined || rule.test(el))) list.push(el);
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
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
  collectText(node, parts, undefined);
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
  const scripts = pageScripts(doc);
  if (scripts.length === 0) return sources;
  // The page's source when `parseHtml` kept it: one pass over it costs less than a first read of each
  // script's text in the tree (see `deferredHtml`).
  const texts = doc instanceof Page && doc.source !== undefined ? [doc.source] : scripts.map(scriptText);
  for (const code of texts) {
    for (const m of code.matchAll(SCRIPTED_IMAGE)) {
      const uri = m[1]!.replace(/\\x([0-9a-f]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
      for (const id of m[2]!.matchAll(/'([^']+)'/g)) sources.set(id[1]!, uri);
    }
  }
  return sources;
}

function scriptText(script: Element): string {
  const { children } = script;
  if (children.length === 1) return isText(children[0]!) ? children[0].data : "";
  return children.map((c) => (isText(c) ? c.data : "")).join("");
}

/**
 * The scripts of a page outside `<head>`, in document order: those the page walk met, for a document
 * `parseHtml` built (no walk of their own), else those under `root`.
 */
export function pageScripts(root: AnyNode): readonly Element[] {
  if (root instanceof Page) {
    pageWalk(root);
    if (root.scripts) return root.scripts;
  }
  return all("script", root);
}

const DEFERRED_CALL = "jsl.dh('";

/**
 * HTML a raw results page serves in scripts and sets into an element on load: `window.jsl.dh('<id>',
 * '<escaped HTML>')` fills the (empty) element of that id. Answers of "People also ask" come this way
 * (web/tesla-manifesto-desktop-2025, 2019–2026 raw pages): they are part of the page as served, only
 * collapsed. Returns a lookup of id → the call's string literal, still escaped: a caller can test it
 * for what it looks for before decoding it (`servedHtml`) and parsing it.
 *
 * The calls are looked for in the HTML the page was parsed from when `parseHtml` built it: a
 * script's text in the tree is built by the parser in pieces, and its first read copies it whole,
 * which costs more than finding the calls (pages carry up to a megabyte of scripts, most of it
 * code). Each id is searched for itself, on from the call found last (an answer's parts come right
 * after it), else back from the end of the page, and its literal delimited only then, so the HTML
 * other calls carry is not read; after an id no call fills, one search through the page notes where
 * every call is, for the lookups to come. A tree `parseHtml` did not build has no
 * source and gives none. An id filled twice (rare) may give either call (the later, when looked up
 * from the end, as on the page).
 */
export function deferredHtml(doc: AnyNode): (id: string) => string | undefined {
  const source = doc instanceof Page ? doc.source : undefined;
  // A page without scripts (a saved page, the basic layout) has no calls: its source is not searched.
  if (source === undefined || pageScripts(doc).length === 0) return () => undefined;
  return deferredInSource(source);
}

/** `deferredHtml` over a page's source. */
function deferredInSource(source: string): (id: string) => string | undefined {
  /** Where each call's id ends, noted once a lookup found no call. */
  let calls: Map<string, number> | undefined;
  // On from the call found last (an answer's parts follow it), else back from the page's end (the
  // calls come after the content they fill, most of them near the end).
  let from = -1;
  return (id) => {
    let idEnd: number | undefined;
    if (calls) idEnd = calls.get(id);
    else {
      const call = `${DEFERRED_CALL}${id}'`;
      let at = from < 0 ? -1 : source.indexOf(call, from);
      if (at < 0) at = source.lastIndexOf(call);
      if (at >= 0) idEnd = at + call.length - 1;
      else calls = callPositions(source);
    }
    const literal = idEnd === undefined ? undefined : literalAfter(source, idEnd);
    if (literal && !calls) from = literal.end;
    return literal && source.slice(literal.start, literal.end);
  };
}

/** Every `jsl.dh('<id>'` in `code`: id → where the id ends. */
function callPositions(code: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (let at = code.indexOf(DEFERRED_CALL); at >= 0; at = code.indexOf(DEFERRED_CALL, at + DEFERRED_CALL.length)) {
    const idStart = at + DEFERRED_CALL.length;
    const idEnd = code.indexOf("'", idStart);
    if (idEnd < 0) break;
    calls.set(code.slice(idStart, idEnd), idEnd);
  }
  return calls;
}

/** The second argument's string literal after a call's first one (closing quote at `idEnd`): its body's bounds. */
function literalAfter(code: string, idEnd: number): { start: number; end: number } | undefined {
  let p = idEnd + 1;
  while (code[p] === " ") p++;
  if (code[p++] !== ",") return undefined;
  while (code[p] === " ") p++;
  if (code[p] !== "'") return undefined;
  const start = p + 1;
  let end = code.indexOf("'", start);
  while (end >= 0 && escaped(code, end)) end = code.indexOf("'", end + 1);
  return end < 0 ? undefined : { start, end };
}

/** Whether the character at `i` is escaped: an odd run of backslashes before it. */
function escaped(code: string, i: number): boolean {
  let n = 0;
  while (code.charCodeAt(i - 1 - n) === 92) n++;
  return n % 2 === 1;
}

const JS_CHAR: Record<string, string> = { n: "\n", r: "\r", t: "\t", b: "\b", f: "\f", v: "\v", "0": "\0" };

/**
 * A JavaScript string literal's body as the string it stands for (`\x3cdiv` → `<div`): the HTML of a
 * `deferredHtml` call. Served HTML escapes every `<`, `>`, `"` and `=`, thousands per answer: the
 * escapes are found with `indexOf` and decoded by hand, not by a regex calling back per escape.
 */
export function servedHtml(literal: string): string {
  let at = literal.indexOf("\\");
  if (at < 0) return literal;
  const parts: string[] = [];
  let from = 0;
  while (at >= 0) {
    parts.push(literal.slice(from, at));
    const c = literal[at + 1] ?? "";
    const hex = c === "x" ? 2 : c === "u" ? 4 : 0;
    const code = hex ? hexValue(literal, at + 2, hex) : -1;
    if (code >= 0) {
      parts.push(String.fromCharCode(code));
      from = at + 2 + hex;
    } else {
      parts.push(JS_CHAR[c] ?? c);
      from = at + 2;
    }
    at = literal.indexOf("\\", from);
  }
  parts.push(literal.slice(from));
  return parts.join("");
}

/** The value of `length` hex digits at `at`, or -1 when they are not all hex digits. */
function hexValue(s: string, at: number, length: number): number {
  let n = 0;
  for (let i = at; i < at + length; i++) {
    const c = s.charCodeAt(i);
    const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
    if (d < 0) return -1;
    n = n * 16 + d;
  }
  return n;
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
  collectText(node, parts, skip);
  return folded(parts);
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
  /** …and are the landmark when they also match this selector (tested on candidates only)… */
  selector?: string;
  /**
   * …or pass this test instead: a look at one attribute's value (`href` naming a parameter) costs
   * less than a compiled selector on every link of a page.
   */
  match?: (el: Element) => boolean;
}

/** A landmark, or every element of a kind, looked up in the page walk; a selector alone is a spec too. */
interface Registered {
  spec: LandmarkSpec | string;
  every: boolean;
}
const registered: Registered[] = [];
let pageSieve: { sieve: Sieve; size: number } | undefined;

/**
 * Registers a page landmark (once, at module load) and returns its lookup: the first element
 * matching the spec, or a selector. The first lookup on a page runs the page walk, which finds every
 * registered landmark at once (see `pageWalk`) and is remembered for that page (a document
 * `parseHtml` built; any other root is walked on each lookup): extractors that each locate their
 * own block share one walk of the page instead of one walk each. The page's nodes are never changed.
 */
export function landmark(spec: LandmarkSpec | string): (root: AnyNode) => Element | undefined {
  const index = registered.push({ spec, every: false }) - 1;
  return (root) => pageWalk(root)[index] as Element | undefined;
}

/**
 * Like `landmark`, every element the spec or selector marks, in document order (found in the same
 * page walk): a parser that reads all cards, titles or links of a kind wherever they are on the page
 * gets them without a walk of its own.
 */
export function landmarks(spec: LandmarkSpec | string): (root: AnyNode) => readonly Element[] {
  const index = registered.push({ spec, every: true }) - 1;
  return (root) => pageWalk(root)[index] as Element[];
}

/**
 * The one walk of a page (document order, root included) that answers every registered lookup. It
 * skips `<head>`, scripts, styles, templates and inline SVG icons, which never hold a block, and
 * tests an element only against the specs naming one of its classes, its tag or an attribute it
 * carries (see `Sieve`). It stops early only when every lookup wants a first match and all are found.
 */
function pageWalk(root: AnyNode): Walked {
  const page = root instanceof Page ? root : undefined;
  let found = page?.walked;
  if (found && found.length === registered.length) return found;
  const sieve = pageSieveNow();
  const matches: Element[][] = registered.map(() => []);
  const firstOnly = registered.every((r) => !r.every);
  const scripts: Element[] = [];
  let whole = true;
  walk(isTag(root) ? [root] : "children" in root ? root.children : [], (el) => {
    if (NO_LANDMARKS.has(el.name)) {
      // Scripts are noted on the way (see `pageScripts`); they hold no block.
      if (el.name === "script") scripts.push(el);
      return OVER;
    }
    sieve.collect(el, matches);
    if (!firstOnly || !matches.every((m) => m.length > 0)) return DOWN;
    whole = false;
    return STOP;
  });
  found = registered.map((r, i) => (r.every ? matches[i]! : matches[i]![0]));
  if (page) {
    page.walked = found;
    page.scripts = whole ? scripts : undefined;
  }
  return found;
}

/** The sieve of every lookup registered so far. */
function pageSieveNow(): Sieve {
  if (pageSieve?.size !== registered.length) pageSieve = { sieve: landmarkSieve(registered), size: registered.length };
  return pageSieve.sieve;
}

/** The registered specs as one sieve: a selector's keys are read from it, a spec names its own. */
function landmarkSieve(specs: readonly Registered[]): Sieve {
  const sieve = new Sieve();
  specs.forEach(({ spec }, target) => {
    if (typeof spec === "string") {
      // An empty selector matches nothing.
      for (const alternative of spec.trim() ? alternatives(spec) : []) {
        sieve.add(requirement(alternative), { target, test: query(alternative) });
      }
      return;
    }
    const test = spec.match ?? (spec.selector === undefined ? undefined : query(spec.selector));
    for (const c of spec.classes ?? []) sieve.add({ class: c }, { target, test });
    for (const tag of spec.tags ?? []) sieve.add({ tag }, { target, test });
    for (const [attribute, value] of Object.entries(spec.attributes ?? {})) {
      sieve.add(value === true ? { attribute } : { attribute, value }, { target, test });
    }
  });
  return sieve;
}
