/**
 * A captured page cut in the middle of its results region, as an answer that stops there would
 * leave it: the region is found by id in parse5's own tree with source offsets, and the text is cut
 * halfway between the end of its opening tag and the start of its closing one.
 */
import { parse, type DefaultTreeAdapterMap, type Token } from "parse5";

type Node = DefaultTreeAdapterMap["node"];
type ParentNode = DefaultTreeAdapterMap["parentNode"];

/** The results landmarks of each kind, the first found wins (the 2021 image grid's tiles wait in `#is-results`). */
export const REGION_IDS = {
  "web-search": ["rso", "main"],
  "web-news": ["rso", "search", "main"],
  "web-images": ["is-results", "islrg", "rso", "search", "main"],
  "web-shopping-search": ["rso", "search", "main"],
} as const;

/** Where the first element with one of `ids` has its inside (source offsets), or undefined when the page has none of them. */
export function regionInside(html: string, ids: readonly string[]): { from: number; to: number } | undefined {
  const doc = parse(html, { sourceCodeLocationInfo: true });
  const found = new Map<string, Node>();
  const stack: Node[] = [doc];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const id = "attrs" in node ? node.attrs.find((a) => a.name === "id")?.value : undefined;
    if (id && ids.includes(id) && !found.has(id)) found.set(id, node);
    if ("childNodes" in node) stack.push(...(node as ParentNode).childNodes);
  }
  const region = ids.map((id) => found.get(id)).find((n) => n !== undefined);
  const at = region && "sourceCodeLocation" in region ? (region.sourceCodeLocation as Token.ElementLocation | undefined) : undefined;
  if (!at?.startTag) return undefined;
  return { from: at.startTag.endOffset, to: at.endTag?.startOffset ?? at.endOffset };
}

/** The page cut inside the first of `ids` it has (halfway through its inside), or undefined when it has none of them. */
export function cutInRegion(html: string, ids: readonly string[], inside = regionInside(html, ids)): string | undefined {
  if (!inside) return undefined;
  return html.slice(0, Math.floor((inside.from + inside.to) / 2));
}

/**
 * The page with everything inside its results region replaced by markup no parser knows: each link
 * of the region kept, once, as `<x-unit><a href="…"><h4>…</h4></a></x-unit>` (a titled link, so the
 * coverage figure counts it as a result), and nothing else. What a redesign the parsers have never
 * seen leaves: the results are on the page, in unknown markup. Undefined when the page has none of `ids`.
 */
export function unknownRegion(html: string, ids: readonly string[], inside = regionInside(html, ids)): string | undefined {
  if (!inside) return undefined;
  const region = html.slice(inside.from, inside.to);
  const hrefs = new Set([...region.matchAll(/<a\b[^>]*?\shref\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)/gi)].map((m) => m[1]!.replace(/^["']|["']$/g, "")));
  const units = [...hrefs].map((href, i) => `<x-unit><a href="${href.replace(/"/g, "&quot;")}"><h4>result ${i + 1}</h4></a></x-unit>`);
  return html.slice(0, inside.from) + units.join("") + html.slice(inside.to);
}
