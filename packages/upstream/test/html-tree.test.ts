/**
 * The tree parseHtml builds, against the one parse5's own htmlparser2 adapter builds from the same
 * markup: the same nodes (domhandler's, to `instanceof` and `isTag`), names, namespaces, attributes,
 * text and links between nodes. On hand-written markup that takes each of the parser's tree paths and
 * on every captured page (compared in a Node process of its own: html-tree.work.ts).
 */
import type { Element } from "domhandler";
import { attr, parseHtml } from "../src/html/index.js";
import { FIXTURES_DIR, fixturesAvailable } from "./fixtures-dir.js";
import { capturedPages, difference } from "./html-tree.work.js";
import { inNode } from "./in-node.js";

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
  const pages = fixturesAvailable ? capturedPages(FIXTURES_DIR) : [];
  let differences: Record<string, string | null>;
  beforeAll(async () => {
    differences = await inNode(new URL("./html-tree.work.ts", import.meta.url), "capturedDifferences", FIXTURES_DIR);
  }, 600_000);

  test.each(pages)("builds the reference tree for %s", (page) => {
    // null: compared, no difference (a page not compared would be undefined).
    expect(differences[page]).toBeNull();
  });
});
