/**
 * The comparison behind html-tree.test.ts: where parseHtml's tree of a page first differs from the one
 * parse5's own htmlparser2 adapter builds. On every captured page it runs in a Node process of its own
 * (in-node.ts: `capturedDifferences`), the hand-written markup in the test.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type AnyNode, Comment, Document, Element, isTag, Text } from "domhandler";
import { parse } from "parse5";
import { adapter } from "parse5-htmlparser2-tree-adapter";
import { parseHtml } from "../src/html/index.js";

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
export function difference(html: string): string | undefined {
  return firstDifference(parseHtml(html), parse(html, { treeAdapter: adapter }) as unknown as Document);
}

/** The captured pages (`.html`, one folder down), as `folder/file`. */
export function capturedPages(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => readdirSync(join(dir, d.name)).filter((f) => f.endsWith(".html")).map((f) => `${d.name}/${f}`));
}

/** Each captured page's first difference, or null. */
export function capturedDifferences(dir: string): Record<string, string | null> {
  return Object.fromEntries(capturedPages(dir).map((page) => [page, difference(readFileSync(join(dir, page), "utf8")) ?? null]));
}
