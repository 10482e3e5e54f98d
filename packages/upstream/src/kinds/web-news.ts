/**
 * News search (`tbm=nws`) → `news_results` (SPEC §2.5 news item). Two families of layout:
 *
 * - the page a browser renders: one card per article, the publisher above the headline, a snippet,
 *   the age at the bottom and a square thumbnail. `div.SoaBEf` cards 2022–2025; 2019–2021 a grid of
 *   `g-card`s each holding a `div.dbsr` link block (news/win10-iso-news-2019-wayback);
 * - the light pages served to simple user agents: basic HTML (`gbv=1`, Lynx / old IE) with one
 *   `div.ezO2md` block per article (2024+) or one `div.ZINbbc` block (2021–2022, the same blocks as
 *   the light web page: news/virtual-reality-experience-news-basic-2022-wayback), and WML
 *   (`/wml/search`, feature phones) where each article is one `/url?q=` link holding its title
 *   (`.M3vVJe`), source (`.dXDvrc`), age (`.YVIcad`) and thumbnail.
 *
 * An article needs a headline, a real target link and a publisher or an age; anything else in those
 * containers (related searches, pagination) is not an article.
 */
import type { NewsBlocks, NewsItem } from "@serp/shared";
import {
  all,
  attr,
  first,
  matches,
  parseHtml,
  scan,
  text,
  textWithout,
  type Document,
  type Element,
  type Scan,
} from "../html/index.js";
import { isPlaceholderImage, scriptedImageSources, targetUrl } from "../values.js";
import { filled, type UpstreamKind } from "./kind.js";
import { searchTarget } from "./url-forms.js";

/** News: the news tab of the results search. */
export const webNews = {
  url: (params, form, ctx) => searchTarget(params, form, ctx, { tab: { modern: [["tbm", "nws"]], basic: [["tbm", "nws"]] } }),
  parse: parseNews,
  coverage: {
    /** Every captured page reads 1.00, and a page with half its items in markup the parser does not know about 0.5. */
    threshold: 0.7,
    region: [["rso"], ["search"], ["main"]],
  },
  hasContent: (b) => filled(b.news_results),
  empty: () => ({ news_results: [] }),
} as const satisfies UpstreamKind<"web-news">;

/** The rendered results page (2022–2025). */
const CARD = {
  // div.SoaBEf 2022–2025 · div.dbsr 2019–2021
  card: "div.SoaBEf, div.dbsr",
  link: "a.WlydOe[href]",
  anyLink: "a[href]",
  // .nDgy9d: 2019–2021 headline
  title: ['[role="heading"]', ".MBeuO", ".mCBkyc", ".nDgy9d"],
  // .pDavDe: 2019 publisher line (favicon, then the name) · .XTjFC: 2020–2021
  source: [".MgUUmf > span", ".NUnG9d > span", ".CEMjEf > span", ".pDavDe", ".XTjFC"],
  // .eYN3rb 2019 · .Y3v8qd 2020–2021
  snippet: ".GI74Re, .eYN3rb, .Y3v8qd",
  // .eNg7of 2019
  date: [".LfVVr", ".rbYSKb", ".ZE0LJd", ".WG9SHc", ".eNg7of"],
  // .QY30V: the 2019 card's picture (its publisher favicon is in .pDavDe)
  thumbnail: ".gpjNTe img, .uhHOwf img, .FAkayc img, .QY30V img",
} as const;

/** What a card is read from, found in one scan of the card. */
const CARD_PARTS = [CARD.link, CARD.anyLink, ...CARD.title, ...CARD.source, CARD.snippet, ...CARD.date, CARD.thumbnail];

/**
 * Basic HTML (`div.ezO2md` 2024+, `div.ZINbbc` 2021–2022) and WML (`div.zMzFAb`, or bare `/url?q=`
 * links) pages. The 2021–2022 block is the light web page's result block: headline in `h3 .vvjwJb`,
 * the publisher where the web page puts the displayed link (`.UPmit`), then a text block starting
 * with the age (`span.xUrNXd`, then a `·` in another `span.xUrNXd`).
 */
const LIGHT = {
  block: "div.ezO2md, div.zMzFAb, div.ZINbbc",
  link: 'a[href*="/url?q="]',
  title: ["span.M3vVJe", "span.CVA68e", "span.fuLhoc", ".M3vVJe", ".fuLhoc", "h3 .vvjwJb"],
  sourceText: ".dXDvrc .fYyStc:not(.YVIcad)",
  source: ".dXDvrc, .BNeawe.UPmit",
  date: ".YVIcad, span.xUrNXd",
  snippetText: ".FrIlee .fYyStc:not(.YVIcad)",
  // the innermost text block of a 2021–2022 block (outer ones repeat it)
  snippet: ".FrIlee, .s3v9rd:not(:has(.s3v9rd))",
  thumbnail: 'img[src*="encrypted-tbn"], table.gNEi4d img',
} as const;

/** What a light block is read from, found in one scan of the block. */
const LIGHT_PARTS = [
  LIGHT.link,
  ...LIGHT.title,
  LIGHT.sourceText,
  LIGHT.source,
  LIGHT.date,
  LIGHT.snippetText,
  LIGHT.snippet,
  LIGHT.thumbnail,
];

const BASE = "https://www.google.com";
const GOOGLE_SEARCH = /^https?:\/\/(?:www\.)?google\.[a-z.]+\/search\b/i;

type Article = Omit<NewsItem, "position">;

export function parseNews(html: string): NewsBlocks {
  const doc = parseHtml(html);
  const cards = all(CARD.card, doc);
  const articles = cards.length > 0 ? readCards(doc, cards) : readLight(doc);
  return { news_results: articles.map((a, i) => ({ position: i + 1, ...a })) };
}

function readCards(doc: Document, cards: Element[]): Article[] {
  let scripted: Map<string, string> | undefined;
  const images = () => (scripted ??= scriptedImageSources(doc));
  const articles: Article[] = [];
  for (const card of cards) {
    const parts = scan(card, CARD_PARTS);
    const link = targetUrl(attr(parts.first(CARD.link) ?? parts.first(CARD.anyLink), "href"));
    const article = toArticle(
      link,
      firstText(CARD.title, parts),
      firstText(CARD.source, parts),
      firstText(CARD.date, parts),
      parts.textOf(CARD.snippet),
    );
    if (!article) continue;
    const thumbnail = imageOf(parts.first(CARD.thumbnail), images);
    if (thumbnail) article.thumbnail = thumbnail;
    articles.push(article);
  }
  return articles;
}

function readLight(doc: Document): Article[] {
  const blocks = all(LIGHT.block, doc);
  // WML news: no block wrapper, each article is the link itself.
  const containers = blocks.length > 0 ? blocks : all(LIGHT.link, doc);
  const seen = new Set<string>();
  const articles: Article[] = [];
  for (const box of containers) {
    const parts = scan(box, LIGHT_PARTS);
    const linkEl = box.name === "a" ? box : parts.first(LIGHT.link);
    const date = parts.textOf(LIGHT.date);
    const article = toArticle(
      targetUrl(attr(linkEl, "href")),
      firstText(LIGHT.title, parts),
      lightSource(parts, date),
      date,
      lightSnippet(parts),
    );
    if (!article || seen.has(article.link)) continue;
    seen.add(article.link);
    const thumbnail = imageOf(parts.first(LIGHT.thumbnail), () => new Map());
    if (thumbnail) article.thumbnail = thumbnail;
    articles.push(article);
  }
  return articles;
}

/** An article, or undefined when the container is not one. Contract fields not shown are "". */
function toArticle(
  link: string | undefined,
  title: string | undefined,
  source: string | undefined,
  date: string | undefined,
  snippet: string | undefined,
): Article | undefined {
  if (!link || !title || GOOGLE_SEARCH.test(link) || !/^https?:/i.test(link)) return undefined;
  if (!source && !date) return undefined;
  return { title, link, source: source ?? "", date: date ?? "", snippet: snippet ?? null };
}

/** The source span; some basic pages put the age inside it too (`Reuters · 3 hours ago`). */
function lightSource(box: Scan, date: string | undefined): string | undefined {
  const own = box.textOf(LIGHT.sourceText);
  if (own) return own;
  let source = box.textOf(LIGHT.source);
  if (source && date && source.endsWith(date)) source = source.slice(0, -date.length).replace(/[\s·•-]+$/, "");
  return source || undefined;
}

function lightSnippet(box: Scan): string | undefined {
  const own = box.textOf(LIGHT.snippetText);
  if (own) return own;
  const plain = box.all(LIGHT.snippet).find((el) => first(LIGHT.date, el) === null);
  if (plain) return text(plain) || undefined;
  // 2021–2022: the age and its `·` lead the snippet's own text.
  const dated = box.all(LIGHT.snippet)[0];
  const rest = textWithout(dated, (e) => matches(e, LIGHT.date)).replace(/^[\s·•-]+/u, "");
  return rest || undefined;
}

function imageOf(img: Element | null, scripted: () => Map<string, string>): string | undefined {
  if (!img) return undefined;
  const src = attr(img, "src") ?? attr(img, "data-src");
  if (!isPlaceholderImage(src)) return src!.startsWith("data:") ? src : absolute(src!);
  const id = attr(img, "id");
  return id ? scripted().get(id) : undefined;
}

function absolute(src: string): string | undefined {
  try {
    return new URL(src, BASE).href;
  } catch {
    return undefined;
  }
}

/** Text of the first selector (in priority order, not document order) that matches non-empty. */
function firstText(selectors: readonly string[], parts: Scan): string | undefined {
  for (const s of selectors) {
    const t = parts.textOf(s);
    if (t) return t;
  }
  return undefined;
}
