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
import { isDateText, pictures, pieces, resultCards, type Card, type Piece } from "../html/cards.js";
import { isPlaceholderImage, scriptedImageSources, targetUrl } from "../values.js";
import { filled, type UpstreamKind } from "./kind.js";
import { searchTarget } from "./url-forms.js";
import { ENGINE_ORIGIN, engineUrl } from "../hosts.js";

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

const GOOGLE_SEARCH = engineUrl({ then: String.raw`\/search\b` });

type Article = Omit<NewsItem, "position">;

export function parseNews(html: string): NewsBlocks {
  return extractNews(parseHtml(html));
}

/** The articles of an already parsed news page. */
export function extractNews(doc: Document): NewsBlocks {
  const cards = all(CARD.card, doc);
  const known = cards.length > 0 ? readCards(doc, cards) : readLight(doc);
  // The layouts above are known by their class names; the cards found by their shape (a link to an
  // article holding its headline, in the results region) stand in when a redesign renamed them.
  const shaped = readShapes(doc);
  const articles = shaped.length > known.length ? shaped : known;
  return { news_results: articles.map((a, i) => ({ position: i + 1, ...a })) };
}

/** The results region by its landmarks (ids and roles, which redesigns keep): `#rso`, `#search`, `[role=main]`, `#main`. */
const REGION = ["#rso", "#search", '[role="main"]', "#main"] as const;

/**
 * Articles read by shape alone: each link to another site holding a heading is an article; in its
 * card, a date is the piece shaped like one, the publisher the piece above the headline (else a
 * short one below it), the snippet the longest other piece, the thumbnail the card's picture and the
 * publisher's icon its small image.
 */
function readShapes(doc: Document): Article[] {
  const region = REGION.map((s) => first(s, doc)).find((el) => el !== null);
  if (!region) return [];
  let scripted: Map<string, string> | undefined;
  const images = () => (scripted ??= scriptedImageSources(doc));
  const target = (href: string) => {
    const url = targetUrl(href);
    return url && /^https?:/i.test(url) && !GOOGLE_PAGE.test(url) ? url : undefined;
  };
  // Cards titled by a heading; failing those (2019–2021 cards title with a plain block), every article link.
  for (const headless of [false, true]) {
    const articles: Article[] = [];
    for (const card of resultCards(region, { target, headless })) {
      const article = shapedArticle(card, images);
      if (article) articles.push(article);
    }
    if (articles.length) return articles;
  }
  return [];
}

const GOOGLE_PAGE = engineUrl({ subdomains: "any", also: ["usercontent", "gstatic", { pattern: String.raw`youtube\.com\/results` }], then: String.raw`(?:[/?#]|$)` });

function shapedArticle(card: Card, images: () => Map<string, string>): Article | undefined {
  const all = pieces(card.root).flatMap(splitLeadingDate);
  const dateAt = all.findIndex((p) => isDateText(p.text));
  // The publisher's line carries its icon (a small image) where the card shows one.
  const iconAt = all.findIndex((p, i) => i !== dateAt && pictures(p.el).icons.length > 0 && p.text.length <= 80);
  let at = card.heading ? all.findIndex((p) => p.el === card.heading || isInside(p.el, card.heading!)) : -1;
  // A card without a heading titles the article with the first long piece after the publisher.
  if (at < 0) at = all.findIndex((p, i) => i > iconAt && i !== dateAt && p.text.length >= 10);
  const title = card.heading ? text(card.heading) : all[at]?.text;
  const date = dateAt >= 0 ? all[dateAt]!.text : undefined;
  const others = all.filter((_, i) => i !== at && i !== dateAt);
  const before = at > 0 ? all.slice(0, at).filter((p) => all.indexOf(p) !== dateAt && p.text.length <= 80) : [];
  const source =
    (iconAt >= 0 && iconAt !== at ? all[iconAt]!.text : undefined) ??
    before[before.length - 1]?.text ??
    others.find((p) => all.indexOf(p) > at && p.text.length <= 60)?.text;
  const snippet = others
    .filter((p) => p.text !== source && p.text.length >= 40)
    .sort((a, b) => b.text.length - a.text.length)[0]?.text;
  const article = toArticle(card.href, title, source, date, snippet);
  if (!article) return undefined;
  const { pictures: pics, icons } = pictures(card.root);
  const thumbnail = pics.map((img) => imageOf(img, images)).find(Boolean);
  if (thumbnail) article.thumbnail = thumbnail;
  const favicon = icons.map((img) => imageOf(img, images)).find(Boolean);
  if (favicon) article.favicon = favicon;
  const iso = date ? isoDate(date) : undefined;
  if (iso) article.iso_date = iso;
  return article;
}

/** `16 hours ago · The film is…`: a snippet led by the card's age is two pieces, the age and the snippet. */
function splitLeadingDate(p: Piece): Piece[] {
  const m = p.text.match(/^(.{1,40}?)\s+[·•]\s+(.+)$/su);
  return m && isDateText(m[1]!) ? [{ el: p.el, text: m[1]! }, { el: p.el, text: m[2]! }] : [p];
}

function isInside(el: Element, ancestor: Element): boolean {
  for (let node = el.parent; node; node = node.parent) if (node === ancestor) return true;
  return false;
}

/** An absolute date the card shows (`Jun 13, 2025`, `2025-06-13`, `13.06.2025`) as ISO 8601; relative ages have none. */
function isoDate(date: string): string | undefined {
  const dmy = date.match(/^(\d{1,2})\.(\d{1,2})\.(\d{4})$/);
  const ymd = date.match(/^(\d{4})[-年.]\s*(\d{1,2})[-月.]\s*(\d{1,2})/);
  const parts = dmy ? [dmy[3], dmy[2], dmy[1]] : ymd ? [ymd[1], ymd[2], ymd[3]] : undefined;
  if (parts) {
    const [y, m, d] = parts.map(Number) as [number, number, number];
    const t = Date.UTC(y, m - 1, d);
    return Number.isFinite(t) && m >= 1 && m <= 12 && d >= 1 && d <= 31 ? new Date(t).toISOString() : undefined;
  }
  // English month names: `Jun 13, 2025`, `13 June 2025`.
  if (!/^(?:\p{L}{3,9}\.?\s+\d{1,2},?\s+\d{4}|\d{1,2}\s+\p{L}{3,9}\.?\s+\d{4})$/u.test(date)) return undefined;
  const t = Date.parse(`${date.replace(/\./g, "")} UTC`);
  return Number.isFinite(t) ? new Date(t).toISOString() : undefined;
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
    const favicon = pictures(card).icons.map((img) => imageOf(img, images)).find(Boolean);
    if (favicon) article.favicon = favicon;
    const iso = article.date ? isoDate(article.date) : undefined;
    if (iso) article.iso_date = iso;
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
    return new URL(src, ENGINE_ORIGIN).href;
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
