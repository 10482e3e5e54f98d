/**
 * The comparison behind html-equivalence.test.ts, run in a Node process of its own (under Jest's
 * module sandbox the same work takes five times as long; in-node.ts): `compareAll` reports the
 * number of selectors collected and each captured page's differences.
 *
 * The HTML layer's speed-ups give css-select's own answers. `all`, `first` and `scan` find elements
 * through a sieve keyed by what each selector requires (html/sieve.ts) over the tree parseHtml builds
 * with its own constructors (html/tree.ts); here every selector the parsers use (collected by running
 * every parser on every captured page) is run both ways on every captured page: by the layer on its
 * tree, and by plain css-select (`selectAll`, `selectOne`) on the tree parse5's own htmlparser2
 * adapter builds. Elements are compared by their place in the tree, and so is their text.
 * html-tree.test.ts holds the two trees to the same shape.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ENDPOINTS } from "@serp/shared";
import { compile, selectAll, selectOne } from "css-select";
import type { AnyNode, Document, Element } from "domhandler";
import { parse } from "parse5";
import { adapter } from "parse5-htmlparser2-tree-adapter";
import { all, first, parseHtml, scan, text } from "../src/html/index.js";
import { selectorsSeen } from "../src/html/sieve.js";
import { PARSERS } from "../src/kinds/index.js";
import { FIXTURES_DIR } from "./fixtures-dir.js";

/** css-select's compiled query per selector, compiled once for every page (as css-select itself would per call). */
const compiled = new Map<string, ReturnType<typeof compile<AnyNode, Element>>>();
const query = (selector: string) => {
  let q = compiled.get(selector);
  if (!q) compiled.set(selector, (q = compile<AnyNode, Element>(selector)));
  return q;
};

/** Where a node sits: its index among its parent's children, from the root down (one walk per tree, then looked up). */
const places = new WeakMap<AnyNode, string>();
function placeOf(node: AnyNode): string {
  let root: AnyNode = node;
  while (root.parent) root = root.parent;
  if (!places.has(root)) {
    places.set(root, "");
    const stack: AnyNode[] = [root];
    while (stack.length) {
      const n = stack.pop()!;
      const children = (n as { children?: AnyNode[] }).children ?? [];
      const at = places.get(n)!;
      children.forEach((c, i) => {
        places.set(c, at ? `${at}.${i}` : String(i));
        stack.push(c);
      });
    }
  }
  return places.get(node)!;
}

/** Elements by place, and with their text when `withText`. */
const described = (els: readonly (Element | null | undefined)[], withText = false) =>
  els.map((el) => (!el ? "none" : withText ? `${placeOf(el)} ${JSON.stringify(text(el))}` : placeOf(el)));

/** The children of a page's results region (else of its body): a root given as an array of nodes, as parsers pass a block's. */
function regionChildren(doc: Document): AnyNode[] {
  const region = selectOne<AnyNode, Element>("#rso, #search, #main, body", doc);
  return region ? [...region.children] : [];
}

/**
 * Every way the layer's answers on `html` differ from plain css-select's for each selector (or the
 * `reference` selector in its place): its matches under the document (and their text), under an
 * array root, its first match, and what one `scan` of all the selectors found for it.
 */
export function differences(html: string, selectors: readonly string[], reference = selectors): string[] {
  const ours = parseHtml(html);
  const plain = parse(html, { treeAdapter: adapter }) as unknown as Document;
  const [ourParts, plainParts] = [regionChildren(ours), regionChildren(plain)];
  const scanned = scan(ours, selectors);
  const found: string[] = [];
  const compare = (what: string, got: readonly (Element | null | undefined)[], want: readonly (Element | null | undefined)[], withText = false) => {
    const [a, b] = [described(got, withText), described(want, withText)];
    if (JSON.stringify(a) !== JSON.stringify(b)) found.push(`${what}: ${a.slice(0, 5).join(", ")} instead of ${b.slice(0, 5).join(", ")}`);
  };
  selectors.forEach((selector, i) => {
    const expected = reference[i]!;
    // css-select's `selectOne` is the first of `selectAll`, in document order.
    const want = selectAll<AnyNode, Element>(query(expected), plain);
    compare(`all(${selector})`, all(selector, ours), want, true);
    compare(`scan(…).all(${selector})`, scanned.all(selector), want);
    compare(`first(${selector})`, [first(selector, ours)], [want[0]]);
    compare(`all(${selector}) under the region's children`, all(selector, ourParts), selectAll<AnyNode, Element>(query(expected), plainParts));
  });
  return found;
}

/** Captured pages (`.html`, `.txt`) below `dir`, in a stable order. */
export function pagesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .flatMap((d) => (d.isDirectory() ? pagesUnder(join(dir, d.name)) : /\.(html|txt)$/.test(d.name) ? [join(dir, d.name)] : []))
    .sort();
}

export interface Report {
  selectors: number;
  /** Each page (relative to FIXTURES_DIR) and what differed on it. */
  pages: Record<string, string[]>;
}

/** Every parser on every page (each selector a parser uses is compiled on its first use), then every selector both ways on every page. */
export function compareAll(dir = FIXTURES_DIR): Report {
  const pages = pagesUnder(dir);
  for (const page of pages) {
    const body = readFileSync(page, "utf8");
    for (const endpoint of ENDPOINTS) {
      try {
        PARSERS[endpoint](body);
      } catch {
        // A page of another kind may be refused: the selectors tried before count all the same.
      }
    }
  }
  const selectors = selectorsSeen();
  const report: Report = { selectors: selectors.length, pages: {} };
  for (const page of pages) report.pages[page.slice(dir.length + 1)] = differences(readFileSync(page, "utf8"), selectors);
  return report;
}
