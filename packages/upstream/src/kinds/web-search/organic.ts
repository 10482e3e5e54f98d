/**
 * Organic results. Every layout titles a result with a heading inside the result's link (`<a><h3>`,
 * or a level-3 `role="heading"` on mobile pages), so results are found as such headings under the
 * results column, in page order. Links inside blocks that hold something else (ads, "People also
 * ask", top stories and other carousels, recipes, local packs, knowledge panels) are left out by the
 * block they sit in; links that stay on the search engine (local pack entries, "more results") are
 * left out by their target. Each result's other fields are read inside its own block: the largest
 * ancestor of its link that holds no other result's link. What they are read from (displayed links,
 * snippets, dates, sitelinks) is found in the page's landmark sweep, and each result gets what lies in its block.
 */
import type { Link, OrganicResult } from "@serp/shared";
import {
  type AnyNode,
  type Element,
  type Scan,
  all,
  attr,
  first,
  everyMatch,
  landmarkIndex,
  matches,
  scansOf,
  text,
} from "../../html/index.js";
import { targetUrl } from "../../values.js";
import { isDateText, pieces } from "../../html/cards.js";
import { isTag } from "domhandler";

/** `full`: the JavaScript page served to browsers (desktop and mobile). `basic`: the no-JS / Lynx / WML page. */
export type Layout = "full" | "basic";

interface ResultSelectors {
  /** Headings that title a result; the result's link is the anchor around them. */
  title: string;
  snippet: string;
  /** The date some snippets start with (`Mar 22, 2023 —`). */
  date: string;
  displayedLink: string;
  /** The site's name shown above the title. */
  source: string;
  /** Inline sitelinks: rows of short links under the snippet (their links are read), or such links. */
  inlineSitelinks: string;
  /** Expanded sitelinks: table cells, each a titled link (`h3 > a`) with a line of text. */
  expandedSitelinks: string;
  expandedSnippet: string;
}

/** Desktop 2019–2026 and mobile 2018–2023 pages. */
const FULL: ResultSelectors = {
  title: 'h3, [role="heading"][aria-level="3"]',
  // .VwiC3b desktop/mobile 2021+ · span.st desktop 2019 · .hgKElc featured snippet · .ITZIwc video results 2025+
  // · .yDYNvb mobile 2020 · .LZ8hH mobile 2018
  snippet: ".VwiC3b, span.st, .hgKElc, .ITZIwc, .yDYNvb, .LZ8hH .MUxGbd",
  // .LEwnzc 2024+ · .wuQ4Ob 2021–2023 · span.f 2019
  date: ".LEwnzc, .wuQ4Ob, span.st span.f",
  // cite on desktop · .yKd8Hd mobile 2022+ · .qzEoUe mobile 2018–2020
  displayedLink: "cite, .yKd8Hd, .qzEoUe",
  source: ".VuuXrf, .BTu2cd",
  // .HiHjCd 2021+ · .osl 2019 · a.LgElHb mobile 2018
  inlineSitelinks: ".HiHjCd, .osl, a.LgElHb",
  expandedSitelinks: ".usJj9c",
  expandedSnippet: ".zz3gNc",
};

/** Basic HTML (`div.Gx5Zad` 2022–2024, `div.ezO2md` Lynx 2025, `div.zMzFAb` WML 2026). */
const BASIC: ResultSelectors = {
  title: "h3, span.CVA68e",
  // the innermost text block: outer ones also hold the sitelinks and facts rows
  snippet: ".kCrYT:not(.egMi0) .BNeawe.s3v9rd:not(:has(.BNeawe.s3v9rd)), span.FrIlee",
  date: "span.r0bn4c, span.YVIcad",
  displayedLink: ".UPmit, span.dXDvrc",
  source: "",
  inlineSitelinks: ".v9i61e",
  expandedSitelinks: "",
  expandedSnippet: "",
};

const SELECTORS: Record<Layout, ResultSelectors> = { full: FULL, basic: BASIC };

/** Inline and expanded sitelinks as one selector: rows and cells are read in page order. */
const sitelinksOf = (sel: ResultSelectors) => [sel.inlineSitelinks, sel.expandedSitelinks].filter(Boolean).join(", ");

/** Everything `details` reads in a result's block, found in one scan of the block. */
const BLOCK_PARTS: Record<Layout, readonly string[]> = {
  full: partsOf(FULL),
  basic: partsOf(BASIC),
};

function partsOf(sel: ResultSelectors): string[] {
  return [sel.displayedLink, sel.source, sel.snippet, sel.date, sitelinksOf(sel)];
}

/** Every match of each block part on the page, found in the landmark sweep. */
const PAGE_PARTS = { full: everyMatch(BLOCK_PARTS.full), basic: everyMatch(BLOCK_PARTS.basic) };
/** Found in the web page's one landmark sweep (web/index.ts includes this index). */
export const LANDMARKS = landmarkIndex({}, [PAGE_PARTS.full, PAGE_PARTS.basic]);

/** Blocks whose links are not organic results, checked on every ancestor of a title link. */
const NOT_ORGANIC = {
  // ads (top, bottom, the ad column), the knowledge panel column, the related-searches box (2019). The
  // lower "more results" container (`#botstuff`/`#bres`) is not listed: results loaded below the first
  // block sit there (desktop 2025, web/something-desktop-singlefile-2025), among its other blocks.
  ids: new Set(["tads", "tadsb", "bottomads", "tvcap", "rhs", "brs"]),
  // top stories, Twitter and image sections, carousels, 2019 "People also ask", knowledge-panel profile links
  tags: new Set(["g-section-with-header", "g-scrolling-carousel", "g-inner-card", "g-accordion-expander", "g-link"]),
  classes: new Set([
    "related-question-pair", // "People also ask" answers
    "uEierd", // text ad (2020+)
    "ads-ad", // text ad (2019 desktop)
    "ads-fr", // text ad (2018 mobile)
    "commercial-unit", // shopping ads
    "cu-container", // shopping ads
    "pla-unit", // shopping ads
    "uVMCKf", // mobile "Videos" block (2023)
    "HD8Pae", // mobile "Videos" block (2020)
    "sHEJob", // "Videos" carousel item (desktop 2025–2026)
    "MFYI1d", // "Explore brands" item (desktop 2023)
    "kno-kp", // knowledge panel (2019)
  ]),
  attributes: ["data-text-ad"],
  // recipe carousels (`id="isl_1"`)
  idPrefixes: ["isl_"],
};

/** Targets on the search engine itself (local pack entries, "more results", maps). */
const SEARCH_ENGINE_LINK = /^https?:\/\/(?:www\.|maps\.)?google\.[a-z.]+\//i;
const SEARCH_ENGINE_REDIRECT = /^https?:\/\/(?:www\.)?google\.[a-z.]+\/url\?/i;
/** How far above its heading a result's link may sit (mobile pages nest the heading 3–4 levels deep). */
const MAX_LINK_DEPTH = 6;

interface Candidate {
  heading: Element;
  anchor: Element;
}

/** An organic result and the link it was read from (its place in the page). */
export interface FoundResult {
  result: OrganicResult;
  anchor: Element;
}

/** The headings that title results in a layout (a caller may find them in a walk it shares). */
export function titleSelector(layout: Layout): string {
  return SELECTORS[layout].title;
}

/**
 * Organic results under `root` (the results column of `page`), from its title headings in page
 * order (found in the page's landmark sweep).
 */
export function findOrganicResults(
  page: AnyNode,
  root: Element,
  layout: Layout,
  headings: readonly Element[],
  notOrganic: InSection = () => false,
): FoundResult[] {
  const sel = SELECTORS[layout];
  const titled: Candidate[] = [];
  const seen = new Set<Element>();
  for (const heading of headings) {
    const anchor = enclosingLink(heading, root);
    if (!anchor || seen.has(anchor)) continue;
    seen.add(anchor);
    titled.push({ heading, anchor });
  }
  // Every titled link bounds its neighbours' blocks, organic or not.
  const titlesUnder = countTitlesUnder(titled, root);
  const organic: { anchor: Element; title: string; link: string; block: Element }[] = [];
  for (const { heading, anchor } of titled) {
    if (!isOrganic(anchor, root) || notOrganic(anchor)) continue;
    const link = resultLink(attr(anchor, "href"));
    const title = text(heading);
    if (!link || !title || SEARCH_ENGINE_LINK.test(link)) continue;
    organic.push({ anchor, title, link, block: resultBlock(anchor, root, titlesUnder) });
  }
  const parts = PAGE_PARTS[layout].of(page);
  const blocks = scansOf(
    organic.map((r) => r.block),
    BLOCK_PARTS[layout],
    (part) => parts[part]!,
  );
  // No snippet class anywhere on the page (a redesign renamed them): snippets are read by shape.
  const byShape = parts[sel.snippet]!.length === 0;
  return organic.map(({ anchor, title, link, block }, i) => ({
    result: { position: i + 1, title, link, ...details(blocks[i]!, anchor, sel, byShape ? block : undefined) },
    anchor,
  }));
}

/**
 * The target of a result link. Progressive (JSON) pages write `/url?q=&url=<target>`: the empty `q`
 * hides the target from targetUrl, which reads `q` first, so `url` is read here.
 */
function resultLink(href: string | undefined): string | undefined {
  const link = targetUrl(href);
  if (!link || !SEARCH_ENGINE_REDIRECT.test(link)) return link;
  const inner = new URL(link).searchParams.get("url");
  return inner && /^https?:\/\//i.test(inner) ? inner : link;
}

function enclosingLink(heading: Element, root: Element): Element | undefined {
  let node = heading.parent;
  for (let depth = 0; node && node !== root && depth < MAX_LINK_DEPTH; depth++, node = node.parent) {
    if (isTag(node) && node.name === "a") return node.attribs.href ? node : undefined;
  }
  return undefined;
}

/**
 * Whether a link lies in a block the organic reader sets aside on purpose (ads, top stories and other
 * sections with a header, carousels of videos and posts, "People also ask", the knowledge panel):
 * read by their own extractors, or left out as not results. Coverage counts such links as understood.
 */
export function inSetAsideBlock(anchor: Element): boolean {
  return !isOrganic(anchor, undefined);
}

function isOrganic(anchor: Element, root: Element | undefined): boolean {
  for (let node = anchor.parent; node && node !== root; node = node.parent) {
    if (!isTag(node)) continue;
    if (NOT_ORGANIC.tags.has(node.name)) return false;
    const { id, class: cls } = node.attribs;
    if (id && (NOT_ORGANIC.ids.has(id) || NOT_ORGANIC.idPrefixes.some((p) => id.startsWith(p)))) return false;
    if (cls && cls.split(/\s+/).some((c) => NOT_ORGANIC.classes.has(c))) return false;
    if (NOT_ORGANIC.attributes.some((a) => a in node.attribs)) return false;
  }
  return true;
}

/** Whether the anchor lies in a discussions-and-forums section (read as its own block). */
export type InSection = (anchor: Element) => boolean;

/** For each ancestor of a titled link, how many titled links it holds. */
function countTitlesUnder(titled: Candidate[], root: Element): Map<Element, number> {
  const counts = new Map<Element, number>();
  for (const { anchor } of titled) {
    for (let node = anchor.parent; node && node !== root; node = node.parent) {
      if (isTag(node)) counts.set(node, (counts.get(node) ?? 0) + 1);
    }
  }
  return counts;
}

/** The largest ancestor of a result's link that holds no other titled link. */
function resultBlock(anchor: Element, root: Element, titlesUnder: Map<Element, number>): Element {
  let block = anchor;
  for (let node = anchor.parent; node && node !== root && isTag(node); node = node.parent) {
    if ((titlesUnder.get(node) ?? 0) > 1) break;
    block = node;
  }
  return block;
}

type Details = Omit<OrganicResult, "position" | "title" | "link">;

/** The result's other fields, read from the scan of its block (`blockEl`: the block itself, when its snippet is read by shape). */
function details(block: Scan, anchor: Element, sel: ResultSelectors, blockEl: Element | undefined): Details {
  const out: Details = {};
  const displayed = text(block.first(sel.displayedLink));
  if (displayed) out.displayed_link = displayed.replace(/\s*›\s*/g, " › ");
  const source = sel.source ? text(block.first(sel.source)) : "";
  if (source) out.source = source;
  const snippetEl = findSnippet(block, anchor, sel);
  const dateEl = snippetEl ? block.all(sel.date).find((d) => isInside(d, snippetEl)) : undefined;
  const date = cleanDate(text(dateEl));
  if (date) out.date = date;
  if (snippetEl) {
    const full = text(snippetEl);
    const snippet = date && dateEl ? stripDatePrefix(full, text(dateEl)) : full;
    if (snippet) out.snippet = snippet;
  } else if (blockEl) Object.assign(out, snippetByShape(blockEl));
  const sitelinks = readSitelinks(block.all(sitelinksOf(sel)), anchor, sel);
  if (sitelinks) out.sitelinks = sitelinks;
  return out;
}

/** The first snippet-like text of the block outside the title link (usually the first match). */
function findSnippet(block: Scan, anchor: Element, sel: ResultSelectors): Element | undefined {
  const firstMatch = block.first(sel.snippet);
  if (!firstMatch || (!isInside(firstMatch, anchor) && firstMatch.children.length)) return firstMatch ?? undefined;
  return block.all(sel.snippet).find((el) => !isInside(el, anchor) && text(el));
}

/**
 * Inline and expanded sitelinks from the block's rows and cells, in page order. The selectors name
 * rows and cells, not their links: a descendant selector would be tested against every ancestor of
 * every link.
 */
function readSitelinks(rows: readonly Element[], anchor: Element, sel: ResultSelectors): OrganicResult["sitelinks"] {
  const inline: Link[] = [];
  const expanded: (Link & { snippet?: string })[] = [];
  for (const el of rows) {
    if (sel.expandedSitelinks && matches(el, sel.expandedSitelinks)) {
      const link = toLink(headedLink(el));
      if (!link) continue;
      const snippet = sel.expandedSnippet ? text(first(sel.expandedSnippet, el)) : "";
      expanded.push(snippet ? { ...link, snippet } : link);
    } else {
      for (const a of el.name === "a" ? [el] : all("a", el)) {
        const link = a === anchor ? undefined : toLink(a);
        if (link) inline.push(link);
      }
    }
  }
  if (!inline.length && !expanded.length) return undefined;
  return { ...(inline.length ? { inline } : {}), ...(expanded.length ? { expanded } : {}) };
}

/** The link inside a cell's `h3`. */
function headedLink(cell: Element): Element | undefined {
  const heading = first("h3", cell);
  return heading ? (first("a", heading) ?? undefined) : undefined;
}

function toLink(a: Element | undefined): Link | undefined {
  if (!a) return undefined;
  const title = text(a);
  const link = resultLink(attr(a, "href"));
  return title && link ? { title, link } : undefined;
}

function isInside(el: Element, ancestor: Element): boolean {
  for (let node = el.parent; node; node = node.parent) if (node === ancestor) return true;
  return false;
}

/**
 * The snippet where no snippet class is found on the page (a redesign renamed them): the block's longest run of
 * text outside its links (the title, displayed link and sitelinks are links or sit in them), with
 * the date it may start with (`Mar 22, 2023 — …`) read apart.
 */
function snippetByShape(blockEl: Element): Pick<Details, "snippet" | "date"> {
  const runs = pieces(blockEl).filter((p) => p.el.name !== "a" && !enclosedByLink(p.el, blockEl));
  const longest = runs.reduce<string>((best, p) => (p.text.length > best.length ? p.text : best), "");
  if (!longest) return {};
  const dated = DATED_SNIPPET.exec(longest);
  const prefix = dated?.[1]?.trim() ?? "";
  const date = prefix && (isDateText(prefix) || prefix.length <= SHORT_DATE) ? cleanDate(prefix) : undefined;
  return date && dated ? { date, snippet: longest.slice(dated[0].length).trim() } : { snippet: longest };
}

/** A snippet starting with its date: `Mar 22, 2023 — …`, `3 days ago · …`, `2025/05/09 — …`. */
const DATED_SNIPPET = /^(.{1,40}?)\s*[—–·]\s+/u;
/** A prefix this short holding a year or an age is a date (`2025/05/09`); a longer one must read as one (an author's byline holds a year too). */
const SHORT_DATE = 16;

function enclosedByLink(el: Element, upTo: Element): boolean {
  for (let node = el.parent; node && node !== upTo; node = node.parent) if (isTag(node) && node.name === "a") return true;
  return false;
}

/**
 * What a date in front of a snippet looks like: a year, or a relative age (`2 days ago`, `il y a 3
 * jours`, `vor 2 Tagen`, `3 дня назад`, `2日前`). The same slot also holds prices and counts
 * (`13 380,00 ₽`, `201 Artikel`), which are not dates.
 */
const DATE_LIKE = /\b(?:1[89]|20)\d{2}\b|\d{4}年|\bago\b|\bil y a\b|\bvor\s+\d|\bhace\s+\d|назад|前/iu;

/** `Mar 22, 2023 —` → `Mar 22, 2023`. */
function cleanDate(raw: string): string | undefined {
  const date = raw.replace(/[\s—–·-]+$/u, "").trim();
  return DATE_LIKE.test(date) ? date : undefined;
}

function stripDatePrefix(snippet: string, dateText: string): string {
  const rest = snippet.startsWith(dateText) ? snippet.slice(dateText.length) : snippet;
  return rest.replace(/^[\s—–·-]+/u, "").trim();
}
