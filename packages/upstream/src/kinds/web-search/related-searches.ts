/**
 * Related searches: the query links of the "Related searches" / "Searches related to …" / "People
 * also search for" (2025+) blocks, at the foot of the results and, on mobile, between them. Each is a
 * link back to the search engine whose text is the suggested query.
 */
import type { RelatedSearch } from "@serp/shared";
import { type Element, attr, text } from "../../html/index.js";

/** One selector per era and layout; none of these classes marks anything else on a results page. */
export const RELATED_LINK = [
  "p.nVcaUb > a", // desktop 2019
  "a.k8XOCe", // desktop 2021–2024
  "a.ngTNl", // desktop 2025–2026 ("People also search for")
  "a.QsZ7bb", // mobile 2018
  "a.F3dFTe", // mobile 2019–2020
  "a.iOJVmb", // mobile 2022
  "a.Q71vJc", // basic HTML 2022–2024
  "table.HExoMb a.ZWRArf", // WML 2026
].join(", ");

const BASE = "https://www.google.com";

/**
 * The query as shown. Pages saved with their whitespace stripped run the words together around the
 * bold parts (`Dubai Schokolade<b>in</b>Dubai`); the link's own `q` then gives the spacing back.
 */
function shownQuery(shown: string, q: string | null): string {
  const squash = (s: string) => s.replace(/\s+/g, "").toLowerCase();
  if (q && squash(q) === squash(shown) && q.split(/\s+/).length > shown.split(/\s+/).length) return q.trim();
  return shown;
}

/**
 * Related searches from the links matching `RELATED_LINK` (the caller finds them in the walk of the
 * results column it makes anyway), in page order, each query once.
 */
export function readRelatedLinks(links: Element[]): RelatedSearch[] {
  const found: RelatedSearch[] = [];
  for (const a of links) {
    const href = attr(a, "href");
    let url: URL;
    try {
      url = new URL(href ?? "", BASE);
    } catch {
      continue;
    }
    const query = shownQuery(text(a), url.searchParams.get("q"));
    if (!href || !query) continue;
    if (!found.some((r) => r.query === query)) found.push({ query, link: url.href });
  }
  return found;
}
