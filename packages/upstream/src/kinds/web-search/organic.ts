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
import type { Link, OrganicResult, RichSnippet } from "@serp/shared";
import {
  type AnyNode,
  type Document,
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
  textWithout,
} from "../../html/index.js";
import { isDateText, pieces } from "../../html/cards.js";
import { isPlaceholderImage, parseCount, parsePrice, parseRating, scriptedImageSources, targetUrl } from "../../values.js";
import { isTag } from "domhandler";
import { ENGINE_ORIGIN, engineHostPattern, engineUrl } from "../../hosts.js";

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
  // .YrbPuc 2026 · .LEwnzc 2024+ · .wuQ4Ob 2021–2023 · span.f 2019 (a date in front of the snippet's text is also read by its shape)
  date: ".YrbPuc, .LEwnzc, .wuQ4Ob, span.st span.f",
  // cite on desktop · .yKd8Hd mobile 2022+ · .qzEoUe mobile 2018–2020
  displayedLink: "cite, .yKd8Hd, .qzEoUe",
  source: ".VuuXrf, .BTu2cd",
  // .HiHjCd 2021+ · .jEYSNd 2025 · .QRcbWb mobile 2023 · .osl 2019 · a.LgElHb mobile 2018
  inlineSitelinks: ".HiHjCd, .jEYSNd, .QRcbWb, .osl, a.LgElHb",
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
const SEARCH_ENGINE_LINK = engineUrl({ subdomains: ["www", "maps"], then: "/" });
const SEARCH_ENGINE_REDIRECT = engineUrl({ then: String.raw`\/url\?` });
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
  let scripted: Map<string, string> | undefined;
  // Data URIs the page's scripts set, and URLs they load late (a data URI first: it is the picture itself).
  const images = () =>
    (scripted ??= page.type === "root" ? scriptedImageSources(page as Document) : new Map());
  return organic.map(({ anchor, title, link, block }, i) => ({
    result: { position: i + 1, title, link, ...redirectOf(anchor), ...details(blocks[i]!, { block, anchor, link, sel, images, byShape }) },
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

/** What `details` reads a result's fields from besides the scan of its block. */
interface BlockContext {
  block: Element;
  anchor: Element;
  /** The result's link (its target). */
  link: string;
  sel: ResultSelectors;
  /** Image id → the data URI or URL the page's scripts set (read once per page, on first use). */
  images: () => Map<string, string>;
  /** No snippet class is on the page: a block without a snippet element has its snippet read by shape. */
  byShape: boolean;
}

/** The engine's click redirect a result's link goes through: `/url?q=<target>&…`. */
const RESULT_REDIRECT = new RegExp(String.raw`^(?:https?:\/\/${engineHostPattern()})?\/url\?`, "i");

/**
 * `redirect_link`: the redirect the title link goes through (absolute): its href when it is one (the
 * basic page), else the click redirect it reports to (`ping="/url?sa=t&…&url=<target>&ved=…"`, the
 * full page), which is the reference API's `redirect_link`.
 */
function redirectOf(anchor: Element): { redirect_link?: string } {
  const href = [attr(anchor, "href"), attr(anchor, "ping")].find((h) => h && RESULT_REDIRECT.test(h));
  if (!href) return {};
  try {
    return { redirect_link: new URL(href, ENGINE_ORIGIN).href };
  } catch {
    return {};
  }
}

/** The result's other fields, read from the scan of its block. */
function details(scan: Scan, ctx: BlockContext): Details {
  const { anchor, sel } = ctx;
  const out: Details = {};
  const displayed = text(scan.first(sel.displayedLink));
  // Social and forum results print a figure in the displayed link's place (`109.9M+ followers`,
  // `160+ comments · 2 years ago`): the breadcrumb is built from the link, the figure is a fact of
  // the rich snippet, the age the date.
  const social = socialLine(displayed);
  if (social) out.displayed_link = breadcrumb(ctx.link);
  else if (displayed) out.displayed_link = displayed.replace(/\s*›\s*/g, " › ");
  const source = sel.source ? text(scan.first(sel.source)) : "";
  if (source) out.source = source;
  const images = resultImages(ctx);
  if (images.thumbnail) out.thumbnail = images.thumbnail;
  if (images.favicon) out.favicon = images.favicon;
  const snippetEl = findSnippet(scan, anchor, sel);
  const dateEl = snippetEl ? scan.all(sel.date).find((d) => isInside(d, snippetEl)) : undefined;
  // The snippet's text without its "Read more" link (the result's own page, at the passage quoted).
  const full = snippetEl ? textWithout(snippetEl, (el) => el.name === "a" && isOwnPage(el, ctx.link)) : "";
  // The slot may hold a line of facts with the year among them (`by RL Siegel · 2024 · Cited by 3811`).
  const slot = dateSlot(text(dateEl));
  const marked = slot.date;
  // A date in front of the snippet's text (`Mar 3, 2024 — …`), in a span no selector names.
  const date = marked ?? leadingDate(full) ?? social?.date;
  if (date) out.date = date;
  if (snippetEl) {
    const snippet = date ? stripDatePrefix(full, marked && dateEl ? text(dateEl) : date) : full;
    if (snippet) out.snippet = snippet;
    const words = highlightedWords(snippetEl, dateEl, date);
    if (words.length) out.snippet_highlighted_words = words;
  } else if (ctx.byShape) Object.assign(out, snippetByShape(ctx.block));
  const sitelinkRows = scan.all(sitelinksOf(sel));
  const sitelinks = readSitelinks(sitelinkRows, anchor, sel) ?? otherLinks(ctx);
  if (sitelinks) out.sitelinks = sitelinks;
  const rich = richSnippet(ctx, snippetEl, sitelinkRows, [...(social ? [social.figure] : []), ...slot.facts]);
  if (rich) out.rich_snippet = rich;
  return out;
}

/** A count of followers, comments or reactions, as social and forum results print it. */
const SOCIAL_FIGURE =
  /^(\d[\d.,]*\s*[\p{L}]{0,2}\+?)\s*(?:人以上の)?(followers?|comments?|reactions?|answers?|likes?|subscribers?|posts?|フォロワー|abonnés|Follower|Kommentare|commentaires|comentarios)$/iu;
const FIGURE_KEYS: Record<string, string> = { フォロワー: "followers", abonnés: "followers", follower: "followers", kommentare: "comments", commentaires: "comments", comentarios: "comments" };

/** The displayed link's slot when it holds a figure (`160+ comments · 2 years ago`): the figure and the age. */
function socialLine(displayed: string): { figure: string; key: string; count?: number; date?: string } | undefined {
  if (!displayed || /›|\/|\.[a-z]{2,}\b/i.test(displayed)) return undefined;
  const [first, ...rest] = displayed.split(/\s*·\s*/u);
  const m = first!.match(SOCIAL_FIGURE);
  if (!m) return undefined;
  const word = m[2]!.toLowerCase();
  const key = FIGURE_KEYS[word] ?? (word.endsWith("s") ? word : `${word}s`);
  const date = rest.find((r) => isDate(r));
  return { figure: first!, key, count: parseCount(m[1]), ...(date ? { date } : {}) };
}

/** `https://x.com/realDonaldTrump` → `https://x.com › realDonaldTrump`, the breadcrumb's form. */
function breadcrumb(link: string): string {
  try {
    const url = new URL(link);
    const parts = url.pathname.split("/").filter(Boolean).map((p) => decodeURIComponent(p));
    return [url.origin, ...parts].join(" › ");
  } catch {
    return link;
  }
}

/** Whether a link leads to the result's own page (`Read more`, with or without a `#:~:text=` passage). */
function isOwnPage(a: Element, link: string): boolean {
  const target = resultLink(attr(a, "href"));
  return !!target && (target.includes("#:~:text=") || samePage(target) === samePage(link));
}

/**
 * A link without a video's start time (`&t=99`: a key moment of the same video). A fragment stays:
 * `#History` is a section of the page, a sitelink.
 */
function samePage(link: string): string {
  return link.replace(/([?&])t=\d+s?(?=&|#|$)/, "$1").replace(/[?&](?=#|$)/, "");
}

/**
 * The words the snippet shows in bold (`<em>`, `<b>`), in page order, repeats kept (as the reference
 * API gives them); the date in front of the snippet is not one of them.
 */
function highlightedWords(snippetEl: Element, dateEl: Element | undefined, date: string | undefined): string[] {
  const words: string[] = [];
  for (const el of all("em, b", snippetEl)) {
    if (dateEl && isInside(el, dateEl)) continue;
    if (all("em, b", el).length) continue;
    const word = text(el);
    if (word && word !== date) words.push(word);
  }
  return words;
}

/** Declared size of an image in pixels (`width`/`height` attributes or inline style), 0 when unknown. */
function imageSize(img: Element): number {
  const attrs = [Number(attr(img, "width")) || 0, Number(attr(img, "height")) || 0];
  for (const m of (attr(img, "style") ?? "").matchAll(/(?:^|;)\s*(?:height|width)\s*:\s*(\d+)px/gi)) attrs.push(Number(m[1]));
  return Math.max(...attrs);
}

/** The largest an icon beside the site's name is drawn (16–26 px on the pages captured). */
const ICON_MAX = 32;

/**
 * The site's icon (an image of icon size, beside the site's name) and the result's picture (any
 * larger image, or one without a declared size, outside the sitelinks): a URL or data URI, a
 * placeholder swapped for the data URI the page's script sets.
 */
function resultImages(ctx: BlockContext): { favicon?: string; thumbnail?: string } {
  const out: { favicon?: string; thumbnail?: string } = {};
  for (const img of all("img", ctx.block)) {
    const size = imageSize(img);
    const icon = size > 0 && size <= ICON_MAX;
    if (icon ? out.favicon : out.thumbnail) continue;
    const src = imageSource(img, ctx.images);
    if (!src) continue;
    if (icon) out.favicon = src;
    else out.thumbnail = src;
  }
  return out;
}

/** The engine's own logo, which some layouts put in a result's picture slot. */
const ENGINE_LOGO = engineUrl({ then: String.raw`\/(?:images\/|logos\/)?(?:branding|nav_logo)` });

function imageSource(img: Element, scripted: () => Map<string, string>): string | undefined {
  const src = attr(img, "src") ?? attr(img, "data-src");
  if (src && !isPlaceholderImage(src)) {
    if (src.startsWith("data:image/")) return src;
    const url = targetUrl(src);
    return url && !ENGINE_LOGO.test(url) ? url : undefined;
  }
  const id = attr(img, "id");
  return id ? scripted().get(id) : undefined;
}

/**
 * The first snippet-like text of the block outside the title link. A rating or price line in a
 * snippet's place (the basic page prints `Rating 8.7/10 (1,957,975)` in the same element as text) is
 * the rich snippet, not the snippet.
 */
function findSnippet(block: Scan, anchor: Element, sel: ResultSelectors): Element | undefined {
  return block.all(sel.snippet).find((el) => !isInside(el, anchor) && text(el) && !isRichLine(text(el).replace(/\u200e/g, "")));
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

/** Links the engine adds to a result: translation, cache, "more results from", the about panel. */
const ENGINE_LINK = engineUrl({ subdomains: ["[a-z]+"], also: ["usercontent", { pattern: String.raw`[^/]+\.translate\.goog` }], then: "/" });

/**
 * Inline sitelinks found by their shape, where no row the selectors name holds any: every other link
 * of the block with text that leads off the search engine to another page than the result's own
 * (not its `Read more` passage, not the displayed link). Rows of short links (2025 desktop, 2023
 * mobile) and a forum result's related threads are read this way.
 */
function otherLinks(ctx: BlockContext): OrganicResult["sitelinks"] {
  const inline: Link[] = [];
  for (const a of all("a[href]", ctx.block)) {
    if (a === ctx.anchor || isInside(a, ctx.anchor) || closestCite(a) || isOwnPage(a, ctx.link) || !standsAlone(a, ctx.block)) continue;
    const link = toLink(a);
    if (!link || ENGINE_LINK.test(link.link) || inline.some((l) => l.link === link.link)) continue;
    inline.push(link);
  }
  return inline.length ? { inline } : undefined;
}

/**
 * Whether a link is a line of its own, or one of a row of links (`a · b · c`): a link inside a
 * sentence or a facts row (`Region of origin: Kaffa in Horn of Africa`) is part of that text.
 */
function standsAlone(a: Element, block: Element): boolean {
  let line: Element = a;
  for (let node = a.parent; node && isTag(node) && node !== block; node = node.parent) {
    line = node;
    if (LINE_BLOCKS.has(node.name)) break;
  }
  const rest = textWithout(line, (el) => el.name === "a");
  return /^[\s\u200e·|•,–-]*$/u.test(rest);
}

function closestCite(el: Element): boolean {
  for (let node = el.parent; node && isTag(node); node = node.parent) if (node.name === "cite") return true;
  return false;
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

/** Dates the card reader's patterns do not hold: `2025/05/09` (ja), `21 сент. 2023 г.` (ru). */
const MORE_DATES = /^\d{4}\/\d{1,2}\/\d{1,2}$|^\d{1,2}\s+\p{L}+\.?\s+\d{4}\s*г\.?$/u;
const YEAR = /^(?:1[89]|20)\d{2}$/;

function isDate(s: string): boolean {
  return isDateText(s) || MORE_DATES.test(s);
}

/**
 * A date in front of a snippet's text, before its dash: `Mar 3, 2024 — …`, `7 days ago — …`,
 * `28 oct. 2019 - …` (2019–2022), `Jan 8, 2025—…` (a DOM saved without spaces). Only a whole date
 * counts: `Top 10 of 2023 — …` is text.
 */
function leadingDate(snippet: string): string | undefined {
  const m = snippet.match(/^(.{1,40}?)(?:\s*[—–]\s*|\s+-\s)/u);
  if (!m) return undefined;
  const date = m[1]!.trim();
  return isDate(date) ? date : undefined;
}

/**
 * The date slot's text: a date (`Mar 22, 2023 —`), or a line of facts with the year among them
 * (scholarly results: `by RL Siegel · 2024 · Cited by 3811`), whose parts are the rich snippet's.
 */
function dateSlot(raw: string): { date?: string; facts: string[] } {
  const line = raw.replace(/[\s—–·-]+$/u, "").trim();
  if (!line.includes("·")) return { date: cleanDate(line), facts: [] };
  const facts = line.split(/\s*·\s*/u).filter(Boolean);
  return { date: facts.find((f) => isDate(f) || YEAR.test(f)), facts };
}

function stripDatePrefix(snippet: string, dateText: string): string {
  const rest = snippet.startsWith(dateText) ? snippet.slice(dateText.length) : snippet;
  return rest.replace(/^[\s—–·-]+/u, "").trim();
}

/**
 * Lines a rich result shows above or below its snippet: a rating (`Rating: 4.1`, `4.9/5`, `★★★★☆`),
 * review or vote counts, prices (`$1,049.00 to $1,499.00`, `от 46$`), stock, and facts rows
 * (`Introduced: 15th century`). Told by their shape; a line longer than a rich line is text.
 */
const RATING = /(?:^|[\s·])(?:Rating|Note|Bewertung|Valutazione|Valoración|Avaliação|Ocena|Оценка|Рейтинг|評価)\s*:?\s*(\d+(?:[.,]\d+)?)|(?:^|[\s(])(\d(?:[.,]\d+)?)\s*\/\s*(?:5|10)\b|(?:^|[\s·])(\d[.,]\d)\s*\(\d[\d.,\s\u00a0]*\)|[★☆]{3,}/iu;
const COUNT_WORD = /(\d[\d.,\s\u00a0]*\d|\d)\s*\+?\s*(reviews?|votes?|avis|Rezensionen|Bewertungen|opiniones|recensioni|avaliações|recenzji|отзыв\p{L}*|голос\p{L}*|件のレビュー)(?![\p{L}])/iu;
const PAREN_COUNT = /\((\d[\d.,\s\u00a0]*)\)/u;
const CURRENCY = "[$€£¥￥₽₴₹]|US\\$|R\\$|руб\\.?|AED|USD|EUR|CHF|грн";
const PRICE = new RegExp(String.raw`(${CURRENCY})\s?(\d[\d.,\s\u00a0]*\d|\d)|(\d[\d.,\s\u00a0]*\d|\d)\s?(${CURRENCY})`, "iu");
const PRICE_RANGE = new RegExp(String.raw`(?:${PRICE.source})\s*(?:to|-|–|à|bis|a|до)\s*(?:${PRICE.source})`, "iu");
const CITED = /(?:Cited by|Zitiert von|Cité|Citado por|被引用数)\s*:?\s*(\d[\d.,]*)/iu;
const STOCK = /\b(?:In stock|Out of stock|En stock|Auf Lager|Disponible|В наличии)\b/iu;
const FACT = /^\p{Lu}[^:·]{1,30}:\s+\S/u;
/** The longest line read as a rich line: snippets and titles are longer. */
const RICH_MAX = 120;

/** The engine's notes on which query words a page lacks: not the page's facts. */
const QUERY_NOTE = /^(?:Missing|Must include|Show results with|Manquant|Fehlend|Faltan?|Отсутствует)\s*:/iu;

function isRichLine(line: string): boolean {
  if (!line || line.length > RICH_MAX || /(?:\.\.\.|…)$/u.test(line) || QUERY_NOTE.test(line)) return false;
  if (RATING.test(line) || COUNT_WORD.test(line) || STOCK.test(line) || FACT.test(line)) return true;
  // A price on a short line, or on a line of `·`-separated facts.
  return PRICE.test(line) && (line.length <= 40 || line.includes("·"));
}

/**
 * The rich snippet: lines of ratings, prices and facts in the result's block, outside its title link,
 * displayed link, snippet and sitelinks. Lines above the snippet are its `top`, lines below its
 * `bottom`; each line's `·`-separated parts are its extensions, and the figures they state its
 * detected extensions.
 */
function richSnippet(
  ctx: BlockContext,
  snippetEl: Element | undefined,
  sitelinkRows: readonly Element[],
  slotFacts: readonly string[],
): RichSnippet | undefined {
  // Sitelink rows with links (the basic page's rows also hold its rating and snippet lines).
  const skip = new Set<Element>([ctx.anchor, ...sitelinkRows.filter((r) => r.name === "a" || first("a", r))]);
  if (snippetEl) skip.add(snippetEl);
  const lines: { text: string; below: boolean }[] = [];
  let below = false;
  const visit = (el: Element): void => {
    if (el === snippetEl) below = true;
    if (skip.has(el) || el.name === "cite" || el.name === "script" || el.name === "style" || el.name === "g-accordion") return;
    // A knowledge panel's attribute (`data-attrid="kc:/people/person:born"`, `hw:/…`, `ss:/…`) is the
    // panel's, wherever the served page nests the panel: never a result's rich snippet.
    if (/^(?:kc|hw|ss):/.test(el.attribs["data-attrid"] ?? "")) return;
    // A link on its own (a sitelink, a picture, a related thread) is no line of the result's own;
    // a line holding a link (`Region of origin: Kaffa in Horn of Africa`) is read whole above.
    if (el.name === "a") return;
    if (isLine(el)) {
      // A line that is only a link's text is a link (a related thread, a sitelink), not a fact.
      const linked = all("a", el).map((a) => text(a)).join(" ");
      if (linked && lineText(linked) === lineText(text(el))) return;
      // One block may hold several facts rows, a `<br>` apart (the basic page).
      const rows = brLines(el);
      const amongFacts = rows.length > 1 ? rows.every((r) => FACT.test(r)) : factRows(el);
      for (const row of rows) if (isRichLine(row) && (!isFactOnly(row) || amongFacts)) lines.push({ text: row, below });
      return;
    }
    for (const c of el.children) if (isTag(c)) visit(c);
  };
  visit(ctx.block);
  const top = [...(slotFacts.length ? [slotFacts.join(" · ")] : []), ...lines.filter((l) => !l.below).map((l) => l.text)];
  const bottom = lines.filter((l) => l.below).map((l) => l.text);
  if (!top.length && !bottom.length) return undefined;
  return { ...(top.length ? { top: richPart(top) } : {}), ...(bottom.length ? { bottom: richPart(bottom) } : {}) };
}

/** A `Label: value` line and nothing else a rich line shows. */
function isFactOnly(line: string): boolean {
  return FACT.test(line) && !RATING.test(line) && !COUNT_WORD.test(line) && !STOCK.test(line) && !PRICE.test(line);
}

/**
 * Whether a `Label: value` line sits among facts rows: every line beside it is one too. A list
 * snippet's item (`Mission: Impossible - Dead Reckoning`) sits among items without a label.
 */
function factRows(el: Element): boolean {
  const siblings = (el.parent?.children ?? []).filter((c): c is Element => isTag(c) && !!text(c));
  return siblings.every((c) => FACT.test(lineText(text(c))));
}

/** A line's text without the left-to-right marks pages put around `:` and `·`. */
function lineText(s: string): string {
  return s.replace(/\u200e/g, "").replace(/\s+/g, " ").replace(/\s+:/g, ":").trim();
}

/** The text of a block, line by line at its `<br>`s. */
function brLines(el: Element): string[] {
  const rows: string[] = [""];
  const walk = (n: AnyNode): void => {
    if (isTag(n)) {
      if (n.name === "br") rows.push("");
      else if (n.name !== "script" && n.name !== "style") n.children.forEach(walk);
    } else if (n.type === "text") rows[rows.length - 1] += (n as unknown as { data: string }).data;
  };
  el.children.forEach(walk);
  return rows.map(lineText).filter(Boolean);
}

const LINE_BLOCKS = new Set(["div", "li", "p", "td", "tr", "table", "ul", "ol"]);

/** A block element holding no other block: one line of the card. */
function isLine(el: Element): boolean {
  if (!LINE_BLOCKS.has(el.name)) return false;
  const stack = [...el.children];
  while (stack.length) {
    const c = stack.pop()!;
    if (!isTag(c)) continue;
    if (LINE_BLOCKS.has(c.name) && text(c)) return false;
    stack.push(...c.children);
  }
  return true;
}

function richPart(lines: string[]): { extensions: string[]; detected_extensions?: Record<string, number | string> } {
  const extensions = lines.flatMap((l) => l.split(/\s*·\s*/u)).map((e) => e.trim()).filter(Boolean);
  const detected: Record<string, number | string> = {};
  for (const e of extensions) {
    const rating = e.match(RATING);
    if (rating && detected.rating === undefined) {
      const n = parseRating(rating[1] ?? rating[2] ?? rating[3]);
      if (n !== undefined) detected.rating = n;
      const count = e.match(PAREN_COUNT);
      const reviews = parseCount(count?.[1]);
      if (reviews !== undefined && detected.reviews === undefined) detected.reviews = reviews;
    }
    const counted = e.match(COUNT_WORD);
    if (counted) {
      const key = /^vot|^голос/iu.test(counted[2]!) ? "votes" : "reviews";
      const n = parseCount(counted[1]);
      if (n !== undefined && detected[key] === undefined) detected[key] = n;
    }
    const figure = socialLine(e);
    if (figure?.count !== undefined && detected[figure.key] === undefined) detected[figure.key] = figure.count;
    const cited = e.match(CITED);
    if (cited && detected.cited_by === undefined) {
      const n = parseCount(cited[1]);
      if (n !== undefined) detected.cited_by = n;
    }
    const range = e.match(PRICE_RANGE);
    const price = range ? undefined : e.match(PRICE);
    if (range && detected.price_from === undefined) {
      const from = parsePrice(range[2] ?? range[3]);
      const to = parsePrice(range[6] ?? range[7]);
      if (from !== undefined) detected.price_from = from;
      if (to !== undefined) detected.price_to = to;
      detected.currency = (range[1] ?? range[4])!;
    } else if (price && detected.price === undefined && detected.price_from === undefined) {
      const n = parsePrice(price[2] ?? price[3]);
      if (n !== undefined) {
        detected.price = n;
        detected.currency = (price[1] ?? price[4])!;
      }
    }
  }
  return Object.keys(detected).length ? { extensions, detected_extensions: detected } : { extensions };
}
