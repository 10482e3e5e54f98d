/**
 * The tree parseHtml builds, against the one parse5's own htmlparser2 adapter builds from the same
 * markup: the same nodes (domhandler's, to `instanceof` and `isTag`), names, namespaces, attributes,
 * text and links between nodes. On hand-written markup that takes each of the parser's tree paths and
 * on every captured page.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type AnyNode, Comment, Document, Element, isTag, Text } from "domhandler";
import { parse } from "parse5";
import { adapter } from "parse5-htmlparser2-tree-adapter";
import { attr, parseHtml } from "../src/html/index.js";
import { FIXTURES_DIR, fixturesAvailable } from "./fixtures-dir.js";

const CLASSES = [Element, Text, Comment, Document] as const;

/** What is compared of a node, beside its children. */
function fields(node: AnyNode): unknown[] {
  const kind = CLASSES.find((c) => node instanceof c)?.name ?? "other";
  const out: unknown[] = [kind, node.type, node.startIndex, node.endIndex];
  if (isTag(node)) out.push(node.name, node.namespace, Object.entries(node.attribs));
  if ("data" in node) out.push(node.data);
  return out;
}

/**
 * Where the tree under `ours` first differs from the one under `reference`, or undefined; on the way,
 * each of our nodes is checked to point to its parent and siblings.
 */
function firstDifference(ours: AnyNode, reference: AnyNode, path = "document"): string | undefined {
  const [a, b] = [JSON.stringify(fields(ours)), JSON.stringify(fields(reference))];
  if (a !== b) return `${path}: ${a.slice(0, 200)} instead of ${b.slice(0, 200)}`;
  const children = "children" in ours ? ours.children : [];
  const expected = "children" in reference ? reference.children : [];
  if (children.length !== expected.length) return `${path}: ${children.length} children instead of ${expected.length}`;
  for (let i = 0; i < children.length; i++) {
    const child = children[i]!;
    const at = `${path} > ${isTag(child) ? child.name : child.type}[${i}]`;
    if (child.parent !== ours) return `${at}: does not point to its parent`;
    if (child.prev !== (children[i - 1] ?? null) || child.next !== (children[i + 1] ?? null)) {
      return `${at}: does not point to its siblings`;
    }
    const difference = firstDifference(child, expected[i]!, at);
    if (difference) return difference;
  }
  return undefined;
}

/** Where parseHtml's tree of `html` first differs from the one parse5's own adapter builds. */
function difference(html: string): string | undefined {
  return firstDifference(parseHtml(html), parse(html, { treeAdapter: adapter }) as unknown as Document);
}

describe("parseHtml", () => {
  test.each([
    ["a plain page", "<!doctype html><html><head><title>t</title></head><body><p class=a id=b>x <b>y</b></p></body></html>"],
    ["scripts, styles, comments and inline SVG", "<style>a{}</style><script>var a = '<b>';</script><!-- c --><svg viewBox='0 0 1 1'><path d='M0'/></svg>"],
    ["text moved out of a table", "<table>a<tr><td>b</td></tr>c<tr><td>d</td></tr></table>"],
    ["misnested formatting", "<p><b>1<i>2</b>3</i>4</p><a href=x>5<div>6</a>7</div>"],
    ["repeated html and body tags", "<html lang=en><body class=a><p>x</p><html lang=fr data-x=1><body class=b id=c>"],
    ["template content", "<template><p>x</p></template><p>y</p>"],
    ["attributes named like object members", '<div __proto__="a" constructor="b" toString="c" hasOwnProperty="d">x</div>'],
  ])("builds the reference tree for %s", (_, html) => {
    expect(difference(html)).toBeUndefined();
  });

  test("reads attributes named like object members as attributes, and no others", () => {
    const html = parseHtml('<div __proto__="a" constructor="b"></div><div></div>').children[0] as Element;
    const [withNames, without] = (html.children[1] as Element).children as [Element, Element];
    expect(attr(withNames, "__proto__")).toBe("a");
    expect(attr(withNames, "constructor")).toBe("b");
    expect(attr(without, "__proto__")).toBeUndefined();
    expect(attr(without, "constructor")).toBeUndefined();
    expect(attr(without, "toString")).toBeUndefined();
    expect(Object.keys(withNames.attribs)).toEqual(["__proto__", "constructor"]);
  });
});

const describeIfFixtures = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) console.warn(`html-tree: captured pages not found at ${FIXTURES_DIR}; set SERP_FIXTURES_DIR. Skipping.`);

describeIfFixtures("parseHtml on the captured pages", () => {
  const pages = fixturesAvailable
    ? readdirSync(FIXTURES_DIR, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .flatMap((d) => readdirSync(join(FIXTURES_DIR, d.name)).filter((f) => f.endsWith(".html")).map((f) => `${d.name}/${f}`))
    : [];

  test.each(pages)("builds the reference tree for %s", (page) => {
    expect(difference(readFileSync(join(FIXTURES_DIR, page), "utf8"))).toBeUndefined();
  });
});
