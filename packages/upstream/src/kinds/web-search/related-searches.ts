/**
 * Related searches: the query links of the "Related searches" / "Searches related to …" / "People
 * also search for" (2025+) blocks, at the foot of the results and, on mobile, between them. Each is a
 * link back to the search engine whose text is the suggested query.
 *
 * Found by their classes (`RELATED_LINK`, one per era) and, where none of those is on the page (a
 * redesign renamed them), by their shape (`relatedByShape`): links to the results page (`/search?q=`)
 * whose text is the query they ask for, without a picture, in a group of at least two such links.
 */
import type { RelatedSearch } from "@serp/shared";
import { isTag } from "domhandler";
import { type Element, attr, text } from "../../html/index.js";
import { ENGINE_ORIGIN, engineHostPattern } from "../../hosts.js";

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

/** A link to the search engine's results page for a query: `/search?…q=…` (relative or absolute). */
const QUERY_LINK = new RegExp(String.raw`^(?:(?:https?:)?\/\/${engineHostPattern()})?\/search\?(?:[^#]*&)?q=`, "i");

/** Whether a link asks the search engine for a query (a candidate found in the web page's sweep). */
export function isQueryLink(a: Element): boolean {
  return QUERY_LINK.test(a.attribs.href ?? "");
}

/**
 * Entity links (knowledge panel facts, carousels of people and places) ask for a query too, but
 * name the entity they stand for (`stick=`, `si=`, `kgmid=`): a suggested query never does.
 */
const ENTITY_PARAMS = ["stick", "si", "kgmid", "kgs"];
/** How far above a link its group's container may sit (link → cell → row → list: 2019–2026 pages). */
const GROUP_DEPTH = 5;
/** A query's letters and digits: the text may add punctuation the query leaves out (`central park, new york map`). */
const lettersOf = (s: string) => s.replace(/[^\p{L}\p{N}]+/gu, "").toLowerCase();

/**
 * Related-search links found by their shape, for pages where no `RELATED_LINK` class is found:
 * among `links` (query links, in page order), those whose text is the query they ask for (letters
 * and digits alike), that hold no picture, name no entity and are not `excluded` (links inside
 * "People also ask", the knowledge panel), and that share a container (up to `GROUP_DEPTH` levels
 * up) with another such link: a block of suggestions, never a lone link in a snippet.
 */
export function relatedByShape(links: readonly Element[], excluded: (a: Element) => boolean): Element[] {
  const shaped = links.filter((a) => {
    let url: URL;
    try {
      url = new URL(attr(a, "href") ?? "", ENGINE_ORIGIN);
    } catch {
      return false;
    }
    const q = url.searchParams.get("q");
    if (!q || !lettersOf(q) || lettersOf(q) !== lettersOf(text(a)) || ENTITY_PARAMS.some((p) => url.searchParams.has(p))) return false;
    return !holdsPicture(a) && !excluded(a);
  });
  const counts = new Map<Element, number>();
  for (const a of shaped) for (const up of ancestorsUpTo(a, GROUP_DEPTH)) counts.set(up, (counts.get(up) ?? 0) + 1);
  return shaped.filter((a) => ancestorsUpTo(a, GROUP_DEPTH).some((up) => counts.get(up)! >= 2));
}

function ancestorsUpTo(el: Element, depth: number): Element[] {
  const out: Element[] = [];
  for (let node = el.parent; node && isTag(node) && out.length < depth; node = node.parent) out.push(node);
  return out;
}

function holdsPicture(el: Element): boolean {
  for (const c of el.children) if (isTag(c) && (c.name === "img" || holdsPicture(c))) return true;
  return false;
}

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
      url = new URL(href ?? "", ENGINE_ORIGIN);
    } catch {
      continue;
    }
    const query = shownQuery(text(a), url.searchParams.get("q"));
    if (!href || !query) continue;
    if (!found.some((r) => r.query === query)) found.push({ query, link: url.href });
  }
  return found;
}
