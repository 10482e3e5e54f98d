/**
 * Tree building: parse5 builds a domhandler tree (the same stack cheerio uses), through its
 * htmlparser2 adapter with a few speed-ups of its own. The tree is the plain domhandler tree that
 * adapter builds (test/html-equivalence.test.ts holds them to it on every captured page).
 */
import type { AnyNode } from "domhandler";
import { Comment, Document, Element, isText, Text } from "domhandler";
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

/**
 * A document `parseHtml` built, which keeps what was found on it by its landmark sweeps. Kept on the
 * page rather than in a WeakMap keyed by it: once the page has been promoted to V8's old generation,
 * young-generation collections hold such an entry's value (elements, so the whole tree) as live until
 * the next full collection, copying and promoting trees of pages long done with.
 */
export class Page extends Document {
  /** Each landmark index's findings on this page (see landmarks.ts), by index. */
  landmarks: Map<object, unknown> | undefined = undefined;
  /** The page's scripts outside `<head>`, met on a whole sweep (undefined until one ran). */
  scripts: Element[] | undefined = undefined;
  /** The HTML the page was parsed from: what its scripts say is read there (see values.ts `deferredHtml`). */
  source: string | undefined = undefined;
}

/** The HTML a document was parsed from, when `parseHtml` built it; undefined for any other tree. */
export function pageSource(doc: AnyNode): string | undefined {
  return doc instanceof Page ? doc.source : undefined;
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
