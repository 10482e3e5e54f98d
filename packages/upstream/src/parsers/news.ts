/**
 * News search (`tbm=nws`) → `news_results` (SPEC §2.5 news item). Two families of layout:
 *
 * - the page a browser renders (2022–2025): one `div.SoaBEf` card per article, the publisher above
 *   the headline, a snippet, the age at the bottom and a square thumbnail;
 * - the light pages served to simple user agents: basic HTML (`gbv=1`, Lynx / old IE) with one
 *   `div.ezO2md` block per article, and WML (`/wml/search`, feature phones) where each article is one
 *   `/url?q=` link holding its title (`.M3vVJe`), source (`.dXDvrc`), age (`.YVIcad`) and thumbnail.
 *
 * An article needs a headline, a real target link and a publisher or an age; anything else in those
 * containers (related searches, pagination) is not an article.
 */
import type { NewsBlocks, NewsItem } from "@serp/shared";
import {
  all,
  attr,
  first,
  isPlaceholderImage,
  parseHtml,
  scan,
  scriptedImageSources,
  targetUrl,
  text,
  type Document,
  type Element,
  type Scan,
} from "../dom.js";

/** The rendered results page (2022–2025). */
const CARD = {
  card: "div.SoaBEf",
  link: "a.WlydOe[href]",
  anyLink: "a[href]",
  title: ['[role="heading"]', ".MBeuO", ".mCBkyc"],
  source: [".MgUUmf > span", ".NUnG9d > span", ".CEMjEf > span"],
  snippet: ".GI74Re",
  date: [".LfVVr", ".rbYSKb", ".ZE0LJd", ".WG9SHc"],
  thumbnail: ".gpjNTe img, .uhHOwf img, .FAkayc img",
} as const;

/** What a card is read from, found in one scan of the card. */
const CARD_PARTS = [CARD.link, CARD.anyLink, ...CARD.title, ...CARD.source, CARD.snippet, ...CARD.date, CARD.thumbnail];

/** Basic HTML (`div.ezO2md`) and WML (`div.zMzFAb`, or bare `/url?q=` links) pages. */
const LIGHT = {
  block: "div.ezO2md, div.zMzFAb",
  link: 'a[href*="/url?q="]',
  title: ["span.M3vVJe", "span.CVA68e", "span.fuLhoc", ".M3vVJe", ".fuLhoc"],
  sourceText: ".dXDvrc .fYyStc:not(.YVIcad)",
  source: ".dXDvrc",
  date: ".YVIcad",
  snippetText: ".FrIlee .fYyStc:not(.YVIcad)",
  snippet: ".FrIlee",
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
  return text(plain) || undefined;
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
