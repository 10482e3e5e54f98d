/**
 * The web results page, parsed once and walked once. Its landmarks (results column, ad blocks, page
 * foot, result stats), every result title, ad unit and related-search link are found in one landmark
 * sweep, which answers the extractors' own landmark indexes too (see html/landmarks.ts); organic
 * results, ads, related searches and the result stats are then read inside the landmarks. The upstream's progressive JSON format
 * (`{"c":…,"d":"<html…>"}/*""*\/` chunks) is joined back into the page it carries first.
 */
import type { WebSearchBlocks } from "@serp/shared";
import { isTag } from "domhandler";
import { type Document, type Element, landmarkIndex, parseHtml } from "../../html/index.js";
import { extractLocalPack, LANDMARKS as LOCAL_PACK } from "../web-local.js";
import { extractAds, type AdPlacement, LANDMARKS as ADS } from "./ads.js";
import { extractAiOverview, LANDMARKS as AI_OVERVIEW } from "./ai-overview.js";
import { discussionSections, extractDiscussions, inDiscussions, LANDMARKS as DISCUSSIONS } from "./discussions.js";
import { extractInlineBlocks, LANDMARKS as INLINE_BLOCKS } from "./inline-blocks.js";
import { extractInlineShopping, LANDMARKS as INLINE_SHOPPING } from "./inline-shopping.js";
import { extractKnowledgeGraph, LANDMARKS as KNOWLEDGE_GRAPH } from "./knowledge-graph.js";
import { findOrganicResults, inSetAsideBlock, type Layout, LANDMARKS as ORGANIC, titleSelector } from "./organic.js";
import { extractRelatedQuestions, LANDMARKS as RELATED_QUESTIONS, questionPairs } from "./related-questions.js";
import { isQueryLink, RELATED_LINK, readRelatedLinks, relatedByShape } from "./related-searches.js";
import { extractSearchInformation } from "./search-information.js";
import { extractTopStories, LANDMARKS as TOP_STORIES } from "./top-stories.js";
import { filled, type UpstreamKind } from "../kind.js";
import { searchTarget } from "../url-forms.js";

/** Page landmarks by id. Full pages (desktop, mobile) have a results column; basic ones only `#main`. */
const LANDMARK = {
  /** Results column, widest first: `#rcnt` also holds the featured snippet beside `#center_col`. */
  resultsColumn: ["rcnt", "center_col", "rso", "search"],
  basicMain: "main",
  topAds: ["tads"],
  bottomAds: ["tadsb", "bottomads"],
  /** The page foot, widest first: related searches, when it lies outside the results column. */
  foot: ["extrares", "botstuff", "bres", "brs"],
  /** The knowledge panel's column (inside `#rcnt`): its query links are entities, never related searches. */
  sidePanel: "rhs",
  stats: ["result-stats", "resultStats"],
} as const;
const LANDMARK_IDS = [
  ...LANDMARK.resultsColumn,
  LANDMARK.basicMain,
  LANDMARK.sidePanel,
  ...LANDMARK.topAds,
  ...LANDMARK.bottomAds,
  ...LANDMARK.foot,
  ...LANDMARK.stats,
];

/** The page's landmarks by id (coverage.ts reads the results region among them). */
export const LANDMARKS_BY_ID = landmarkIndex(Object.fromEntries(LANDMARK_IDS.map((id) => [id, { first: { attributes: { id } } }])));
/**
 * The web page's one landmark sweep: its landmarks by id, result titles of each layout and
 * related-search links wherever they are on the page, and every extractor's own landmarks.
 */
export const LANDMARKS = landmarkIndex(
  {
    fullTitles: { every: titleSelector("full") },
    basicTitles: { every: titleSelector("basic") },
    relatedLinks: { every: RELATED_LINK },
    /** Links asking for a query: related searches by shape, where no `RELATED_LINK` class is found. */
    queryLinks: { every: { tags: ["a"], match: isQueryLink } },
  },
  [LANDMARKS_BY_ID, ORGANIC, ADS, AI_OVERVIEW, RELATED_QUESTIONS, LOCAL_PACK, TOP_STORIES, DISCUSSIONS, KNOWLEDGE_GRAPH, INLINE_BLOCKS, INLINE_SHOPPING],
);
const TITLES = { full: "fullTitles", basic: "basicTitles" } as const satisfies Record<Layout, string>;

export function parseWebSearch(body: string): WebSearchBlocks {
  return extractWebSearch(parseHtml(isJsonChunks(body) ? joinJsonChunks(body) : body));
}

/** All blocks of an already parsed results page. */
export function extractWebSearch(doc: Document): WebSearchBlocks {
  const page = LANDMARKS.of(doc);
  const byId = LANDMARKS_BY_ID.of(doc);
  const mark = (id: string) => byId[id];
  const pick = (ids: readonly string[]) => ids.map(mark).filter((e): e is Element => !!e);

  const column = pick(LANDMARK.resultsColumn)[0];
  const layout: Layout = column ? "full" : "basic";
  const root = column ?? mark(LANDMARK.basicMain) ?? documentElement(doc);
  if (!root) return { organic_results: [] };
  // The titles and related-search links of the results column (a related link is never a title).
  const relatedLinks = page.relatedLinks.filter((a) => contains(root, a));
  const related = new Set(relatedLinks);
  const forums = discussionSections(doc);
  const notOrganic = inDiscussions(forums);
  const headings = page[TITLES[layout]].filter((h) => contains(root, h) && !related.has(h));
  const found = findOrganicResults(doc, root, layout, headings, notOrganic);
  // Results loaded below the first block sit in the page foot (`#botstuff`/`#bres`): inside the
  // results column on 2025 pages, read with it above; a foot outside the column is read the same way.
  const foot = pick(LANDMARK.foot)[0];
  const footOutside = foot && layout === "full" && !contains(root, foot) ? foot : undefined;
  if (footOutside) {
    const footHeadings = page.fullTitles.filter((h) => contains(footOutside, h) && !related.has(h));
    const seen = new Set(found.map((f) => f.result.link));
    for (const f of findOrganicResults(doc, footOutside, layout, footHeadings, notOrganic)) {
      if (seen.has(f.result.link)) continue;
      found.push({ ...f, result: { ...f.result, position: found.length + 1 } });
    }
  }
  const blocks: WebSearchBlocks = { organic_results: found.map((f) => f.result) };

  const placement: AdPlacement =
    layout === "full"
      ? { top: pick(LANDMARK.topAds), bottom: outermost(pick(LANDMARK.bottomAds)) }
      : { top: [], bottom: [], inline: { root, firstResult: found[0]?.anchor } };
  const ads = extractAds(doc, placement);
  if (ads.length) blocks.ads = ads;

  const ai_overview = extractAiOverview(doc);
  if (ai_overview) blocks.ai_overview = ai_overview;
  const related_questions = extractRelatedQuestions(doc);
  if (related_questions.length) blocks.related_questions = related_questions;
  const local_results = extractLocalPack(doc);
  if (local_results && local_results.places.length) blocks.local_results = local_results;
  const top_stories = extractTopStories(doc);
  if (top_stories.length) blocks.top_stories = top_stories;
  const discussions_and_forums = extractDiscussions(doc, forums);
  if (discussions_and_forums.length) blocks.discussions_and_forums = discussions_and_forums;
  const knowledge_graph = extractKnowledgeGraph(doc);
  if (knowledge_graph) blocks.knowledge_graph = knowledge_graph;
  // Sections of cards the organic reader set aside: videos, "What people are saying".
  const taken = new Set([...blocks.organic_results.map((r) => r.link), ...(top_stories.map((s) => s.link))]);
  const { inline_videos, perspectives } = extractInlineBlocks(doc, taken);
  if (inline_videos.length) blocks.inline_videos = inline_videos;
  if (perspectives.length) blocks.perspectives = perspectives;
  const shopping_results = layout === "full" ? extractInlineShopping(doc) : [];
  if (shopping_results.length) blocks.shopping_results = shopping_results;

  // Related-search blocks sit at the foot of the results and sometimes between them (mobile).
  if (foot && !contains(root, foot)) relatedLinks.push(...page.relatedLinks.filter((a) => contains(foot, a)));
  if (!page.relatedLinks.length) relatedLinks.push(...relatedSearchesByShape(doc, root, foot));
  const related_searches = readRelatedLinks(relatedLinks);
  if (related_searches.length) blocks.related_searches = related_searches;
  const search_information = extractSearchInformation(pick(LANDMARK.stats)[0]);
  if (search_information) blocks.search_information = search_information;
  return blocks;
}

/**
 * Related-search links by shape (no related-search class on the page): query links in the results
 * column and the page foot, outside the knowledge panel and "People also ask" (whose hidden "Search
 * for" lines ask for each question).
 */
function relatedSearchesByShape(doc: Document, root: Element, foot: Element | undefined): Element[] {
  const side = LANDMARKS_BY_ID.of(doc)[LANDMARK.sidePanel];
  const pairs = questionPairs(doc);
  const inPage = LANDMARKS.of(doc).queryLinks.filter((a) => contains(root, a) || (!!foot && contains(foot, a)));
  return relatedByShape(inPage, (a) => (!!side && contains(side, a)) || pairs.some((p) => contains(p, a)));
}

/** The progressive format: `{"c":1,"d":"<!doctype html>…","e":…,"u":…}/*""*\/{…}/*""*\/…`. */
export function isJsonChunks(body: string): boolean {
  return /^\s*\{"/.test(body) && body.includes('/*""*/');
}

/**
 * The page the chunks carry, in order. A segment may also be plain HTML, the rest of the page sent
 * unwrapped (2024, upstream-json/divan-krovat-dominik-upstream-json-broken-ru-2024: 22 chunks, then
 * 567 KB of markup holding most results): it is part of the page and joined as it is. A segment that
 * is neither (a chunk cut short) means part of the page is missing: the page is refused rather than
 * read in part.
 */
export function joinJsonChunks(body: string): string {
  let html = "";
  for (const chunk of body.split('/*""*/')) {
    const trimmed = chunk.trim();
    if (!trimmed) continue;
    if (trimmed.startsWith("<")) {
      html += chunk;
      continue;
    }
    let d: unknown;
    try {
      d = (JSON.parse(trimmed) as { d?: unknown }).d;
    } catch {
      throw new Error("progressive JSON page: a chunk is cut short or malformed; the page is incomplete");
    }
    if (typeof d === "string") html += d;
  }
  return html;
}

function documentElement(doc: Document): Element | undefined {
  return doc.children.find((c): c is Element => isTag(c));
}

/** `#tadsb` usually sits inside `#bottomads`: read each ad block once. */
function outermost(blocks: Element[]): Element[] {
  return blocks.filter((b) => !blocks.some((o) => o !== b && contains(o, b)));
}

function contains(ancestor: Element, el: Element): boolean {
  for (let node = el.parent; node; node = node.parent) if (node === ancestor) return true;
  return false;
}

/**
 * The blocks of a parsed page the parser knows (coverage.ts): the sections it read into blocks (the
 * AI overview with its references, "People also ask" with the answers' sources, top stories, the
 * discussions and forums), and the ones the organic reader sets aside on purpose (carousels of
 * videos and social posts, sections with a header, ads). A link inside one is understood.
 */
function knownBlocks(doc: Document, blocks: WebSearchBlocks): (anchor: Element) => boolean {
  const { overviewSlot } = AI_OVERVIEW.of(doc);
  const { storiesSection } = TOP_STORIES.of(doc);
  const roots = new Set<Element>();
  const add = (el: Element | undefined) => el && roots.add(el);
  if (blocks.ai_overview) add(overviewSlot);
  // By class, else by shape: the pairs the questions were read from.
  if (blocks.related_questions?.length) questionPairs(doc).forEach(add);
  if (blocks.top_stories?.length) add(storiesSection);
  if (blocks.discussions_and_forums?.length) discussionSections(doc).forEach(add);
  return (anchor) => {
    for (let node = anchor.parent; node && isTag(node); node = node.parent) if (roots.has(node)) return true;
    return inSetAsideBlock(anchor);
  };
}

/**
 * Web search: the results page, on a desktop or (`device=mobile`) a phone. Declared last: it names
 * the landmark index above, which must exist first.
 */
export const webSearch = {
  url: (params, form, ctx) => searchTarget(params, form, ctx),
  /** A phone's page is asked for with a phone's recipes. */
  variants: [{ set: "web-search-mobile", when: (params) => params.device === "mobile" }],
  parse: parseWebSearch,
  coverage: {
    /**
     * Titled links, those inside blocks the parser knows counted as understood (`known`): every
     * captured results page reads 1.00, and their copies with every class renamed at random or
     * dropped read 0.50 or more (the lowest: a 2021 page whose renamed copy loses half its results to
     * the parser). A page whose results region is markup no parser knows reads 0.26 at most (the
     * conformance run prints each page's margin). The threshold sits between the two.
     */
    threshold: 0.4,
    /** The results column and the lower "more results" container (full pages); the basic page's `#main`. */
    region: [["rso", "botstuff", "bres"], ["main"]],
    /** Among the page's landmarks by id, which the parser's one sweep finds. */
    landmarks: LANDMARKS_BY_ID,
    known: knownBlocks,
  },
  /** The progressive format: the page in JSON chunks. */
  wrapped: { test: isJsonChunks, page: joinJsonChunks },
  /** Anything but the result stats. */
  hasContent: (b) => Object.entries(b).some(([key, v]) => key !== "search_information" && filled(v)),
  empty: () => ({ organic_results: [] }),
} as const satisfies UpstreamKind<"web-search">;
