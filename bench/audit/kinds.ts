/**
 * Issue 25 ("every field the page shows"), measured: for the images, shopping, local and news
 * kinds, per field, how many cards of the captured pages show it and how many of those reach the
 * parser's output. "Shown" is told from each card's markup by this file alone, without the
 * parsers' selectors: a picture with a real source (or one the page's scripts set for its id), a
 * price pattern, a date shape, an `/imgres?` link's query, a script entry holding the tile's id,
 * coordinates next to a place id in the page's data, and so on. A card is matched to an output
 * item by its link (images, news), its title (shopping) or its place id (local); a card no item
 * matches counts as shown and not returned. packages/upstream/test/parsers/kind-fields.test.ts keeps
 * floors under the figures.
 *
 *   node_modules/.bin/tsx bench/audit.ts kinds
 */
import { all, ancestors, attr, pageSource, text, type AnyNode, type Document, type Element } from "../../packages/upstream/src/html/index.js";
import { targetUrl, unwrapWayback } from "../../packages/upstream/src/values.js";
import { filesIn, PAGE_DIRS, readPages, type CapturedPage, type PageReader } from "./pages.js";

/** One card as the page shows it: the key its output item is found by, and the fields it shows. */
interface Shown {
  key: string;
  fields: string[];
}
type Item = Record<string, unknown>;

interface KindBench {
  kind: string;
  /** Pages of the kind, relative to the fixtures folder. */
  pages: () => string[];
  /** Whether a page may hold the kind's cards at all (a cheap look at its text, to skip parsing the rest). */
  holds?: (html: string) => boolean;
  detect: (html: string, doc: Document, page: CapturedPage) => Shown[];
  /** The parser's items, from the page's one tree (pages.ts). */
  parse: (page: CapturedPage) => Item[];
  key: (item: Item) => string | undefined;
  /** Whether an item carries the field (default: present). */
  has?: (item: Item, field: string) => boolean;
}

// ---- what a card shows, told from markup ----------------------------------------------------------

const isTag = (n: AnyNode): n is Element => "attribs" in n;

const GOOGLE_HOST = /^https?:\/\/(?:[a-z0-9-]+\.)*(?:google\.[a-z.]+|googleusercontent\.com|gstatic\.com|archive\.org|youtube\.com\/results)(?:[/?#:]|$)/i;

/** The external page a link leads to, through `/imgres?`, `/url?` and archive wrappers. */
function external(href: string | undefined): string | undefined {
  const raw = unwrapWayback(href);
  if (!raw) return undefined;
  if (raw.includes("/imgres?")) {
    try {
      return new URL(raw, "https://www.google.com").searchParams.get("imgrefurl") ?? undefined;
    } catch {
      return undefined;
    }
  }
  const url = targetUrl(raw);
  return url && /^https?:\/\//i.test(url) && !GOOGLE_HOST.test(url) ? url : undefined;
}

const norm = (url: string | undefined) => url?.replace(/^https?:\/\/(www\.)?/i, "").replace(/\/$/, "").toLowerCase();

/** Each text node's text under `root`, trimmed, scripts and styles left out. */
function texts(root: Element): string[] {
  const out: string[] = [];
  const visit = (n: AnyNode) => {
    if (isTag(n)) {
      if (n.name !== "script" && n.name !== "style") n.children.forEach(visit);
    } else if (n.type === "text") {
      const t = (n as unknown as { data: string }).data.replace(/\s+/g, " ").trim();
      if (t && t !== "·" && t !== "-") out.push(t);
    }
  };
  visit(root);
  return out;
}

/** A picture's source a client can show: a URL or a real inline image, not a 1×1 GIF nor a drawn placeholder. */
function realSource(src: string | undefined): boolean {
  if (!src) return false;
  const s = unwrapWayback(src)!;
  // The engine's own interface icons (an arrow, a logo) are not a result's picture.
  if (/gstatic\.com\/(?:images\/icons|images\/branding|s\/i\/productlogos)/.test(s)) return false;
  if (/^https?:\/\//i.test(s) || s.startsWith("/")) return true;
  return /^data:image\/(?:jpeg|jpg|png|webp);base64,/i.test(s) && s.length > 200;
}

/** Ids the page's scripts give a source to: `_setImagesSrc(['dimg_3'],…)` calls and `google.ldi` maps. */
function scriptedIds(html: string): Set<string> {
  const ids = new Set<string>();
  for (const m of html.matchAll(/var ii=\[([^\]]*)\]/g)) for (const id of m[1]!.matchAll(/'([^']+)'/g)) ids.add(id[1]!);
  for (const m of html.matchAll(/google\.ldi=\{([^}]*)\}/g)) for (const id of m[1]!.matchAll(/"([^"]+)":"https/g)) ids.add(id[1]!);
  return ids;
}

function showsPicture(img: Element, scripted: Set<string>): boolean {
  return realSource(attr(img, "src")) || realSource(attr(img, "data-src")) || scripted.has(attr(img, "id") ?? "\0");
}

/** Pixel size of a picture, from its attributes (0: not said). */
const size = (img: Element) => Math.max(Number(attr(img, "width")) || 0, Number(attr(img, "height")) || 0);

/** The topmost element around `el` (below `stop`) holding no other card's mark. */
function cardAround(el: Element, isOther: (e: Element) => boolean): Element {
  let card = el;
  for (const a of ancestors(el)) {
    if (a.name === "body" || a.name === "html" || isOther(a)) break;
    card = a;
  }
  return card;
}

const PRICE = /(?:\p{Sc}|R\$|US\$)\s?\d[\d.,\u00a0]*|\d[\d.,]*\s?(?:\p{Sc}|円)/u;
const DATE_SHAPE =
  /\b(?:\d+\s+(?:min(?:ute)?s?|hours?|days?|weeks?|months?|years?)\s+ago|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{1,2},?\s+\d{4}|\d{1,2}\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?\s+\d{4})\b|\d+\s*(?:分钟|小时|天|週間|周|个月|か月|年)前|\d{4}[-/年.]\d{1,2}[-/月.]\d{1,2}/i;
const ABSOLUTE_DATE = /\d{4}/;

// ---- images -------------------------------------------------------------------------------------

function detectImages(html: string, doc: Document): Shown[] {
  const scripted = scriptedIds(html);
  // Tiles: elements naming their page (`data-lpage`), sized elements (`data-ow`), else table cells holding a picture and a link.
  // A grid's later rows wait in `<template>`s (their content is the template's one child).
  const roots: AnyNode[] = [doc, ...all("template", doc).map((t) => t.children[0]).filter((c): c is Element => !!c)];
  let tiles = roots.flatMap((r) => all("[data-lpage], [data-ow]", r));
  if (tiles.length === 0) tiles = all("td", doc).filter((td) => all("img", td).length >= 1 && all("a[href]", td).length >= 1 && all("td", td).length === 0);
  if (tiles.length === 0) tiles = all('a[href*="/imgres?"]', doc);
  const source = pageSource(doc) ?? html;
  const out: Shown[] = [];
  for (const tile of tiles) {
    const links = [tile, ...all("a[href]", tile)].map((a) => attr(a, "href")).filter((h): h is string => !!h);
    const link = attr(tile, "data-lpage") ?? links.map(external).find(Boolean);
    if (!link) continue;
    const fields = ["link"];
    const words = texts(tile).filter((t) => !/^\d+\s*[×x]\s*\d+/.test(t));
    const imgs = all("img", tile);
    const alt = imgs.map((i) => attr(i, "alt") ?? "").find((a) => a.length >= 4 && !/^image result for/i.test(a));
    if (words.some((t) => t.length >= 8) || all("[title]", tile).length || alt) fields.push("title");
    if (new Set(words).size >= 2 || all("cite", tile).length) fields.push("source");
    const id = attr(tile, "data-id") ?? attr(tile, "data-tbnid");
    const entry = id ? source.match(new RegExp(`"${id}",\\["(https://encrypted-tbn[^"]*)",\\d+,\\d+\\]\\s*,\\["([^"]+)",(\\d+),(\\d+)\\]`)) : null;
    if (imgs.some((i) => size(i) === 0 || size(i) > 24) && (imgs.some((i) => showsPicture(i, scripted)) || entry)) fields.push("thumbnail");
    const imgres = links.find((h) => h.includes("/imgres?"));
    const q = imgres ? new URL(unwrapWayback(imgres)!, "https://www.google.com").searchParams : undefined;
    if (/^https?:\/\//.test(q?.get("imgurl") ?? "") || /^https?:\/\//.test(entry?.[2] ?? "")) fields.push("original");
    const sized = attr(tile, "data-ow") || q?.get("w") || words.some((t) => /^\d+\s*[×x]\s*\d+/.test(t)) || entry;
    if (sized) fields.push("original_width", "original_height");
    if (/in stock|out of stock|在庫|\bprice\b/i.test(words.join(" ")) || words.some((t) => PRICE.test(t))) fields.push("is_product");
    out.push({ key: norm(link)!, fields });
  }
  return out;
}

// ---- news ---------------------------------------------------------------------------------------

function detectNews(html: string, doc: Document): Shown[] {
  const scripted = scriptedIds(html);
  const articleLinks = all("a[href]", doc).filter((a) => external(attr(a, "href")) && text(a).length >= 20);
  const linkOf = (a: Element) => norm(external(attr(a, "href")));
  const keys = new Set(articleLinks.map(linkOf));
  const out = new Map<string, Shown>();
  for (const a of articleLinks) {
    const key = linkOf(a)!;
    if (out.has(key)) continue;
    // The card: the largest block around the link holding no other article's link.
    const card = cardAround(a, (e) => all("a[href]", e).some((o) => text(o).length >= 20 && keys.has(linkOf(o)) && linkOf(o) !== key));
    const words = texts(card);
    const fields = ["title", "link"];
    // The headline: the card's heading, else the first long text of the link.
    const heading = all('[role="heading"], h3, h4', card)[0];
    const title = heading ? text(heading) : texts(a).find((t) => t.length >= 20);
    const date = words.find((t) => DATE_SHAPE.test(t) && t.length <= 40);
    if (date) fields.push("date");
    if (date && (ABSOLUTE_DATE.test(date) || all("[data-ts], time[datetime]", card).length)) fields.push("iso_date");
    if (words.some((t) => t !== date && t.length <= 40 && !DATE_SHAPE.test(t) && !title?.includes(t))) fields.push("source");
    if (words.some((t) => t.length >= 40 && !title?.includes(t))) fields.push("snippet");
    const imgs = all("img", card);
    if (imgs.some((i) => (size(i) === 0 || size(i) > 20) && showsPicture(i, scripted))) fields.push("thumbnail");
    if (imgs.some((i) => size(i) > 0 && size(i) <= 20 && showsPicture(i, scripted))) fields.push("favicon");
    out.set(key, { key, fields });
  }
  return [...out.values()];
}

// ---- shopping -----------------------------------------------------------------------------------

function detectShopping(html: string, doc: Document): Shown[] {
  const scripted = scriptedIds(html);
  const headings = all('h3, h4, [role="heading"]', doc).filter((h) => text(h).length >= 10);
  const out: Shown[] = [];
  for (const h of headings) {
    const card = cardAround(h, (e) => all('h3, h4, [role="heading"]', e).some((o) => o !== h && text(o).length >= 10));
    const words = texts(card);
    const prices = [...new Set(words.filter((t) => PRICE.test(t) && t.length <= 20).map((t) => t.replace(/\.$/, "")))];
    if (prices.length === 0) continue;
    const fields = ["title", "price", "extracted_price"];
    const links = all("a[href]", card);
    if (links.some((a) => /\/shopping\/product\/\d+/.test(attr(a, "href")!))) fields.push("product_id");
    if (links.some((a) => text(a) && text(a).length <= 40 && !/\d/.test(text(a)) && text(a) !== text(h))) fields.push("source");
    if (prices.length >= 2) fields.push("old_price");
    if (all("[aria-label]", card).some((e) => /^\s*[0-5](?:[.,]\d)?\s*(?:de|out of|sur|von|\/)\s*5|estrelas|stars/i.test(attr(e, "aria-label")!))) fields.push("rating");
    if (words.some((t) => /\d[\d.,]*\s*(?:comentários|avaliações|reviews|ratings|opiniones)/i.test(t))) fields.push("reviews");
    if (words.some((t) => /frete|entrega|delivery|shipping|envio/i.test(t))) fields.push("delivery");
    if (words.some((t) => /^(?:promoção|oferta|sale|promo|liquidação)$/i.test(t))) fields.push("tag");
    if (all("img", card).some((i) => showsPicture(i, scripted))) fields.push("thumbnail");
    out.push({ key: text(h), fields });
  }
  return out;
}

// ---- local --------------------------------------------------------------------------------------

const PLACE_ID_ATTRS = ["data-cid", "data-rc_ludocids"];
/** A place's CID: a long decimal (short `data-cid` values number other things, such as a carousel's tiles). */
const placeIdOf = (el: Element) =>
  PLACE_ID_ATTRS.map((a) => attr(el, a)).find((v) => v && /^\d{10,}$/.test(v)) ?? attr(el, "href")?.match(/[?&]ludocid=(\d{10,})/)?.[1];

/** Coordinates near an occurrence of the place id in the page's data (floats, degrees × 10⁷, or named fields), not 0,0. */
function dataShowsPosition(source: string, id: string): boolean {
  for (const m of source.matchAll(new RegExp(id, "g"))) {
    const near = source.slice(m.index!, m.index! + 900);
    if (/-?\d{1,3}\.\d{3,}\s*,\s*-?\d{1,3}\.\d{3,}/.test(near.replace(/\\+x22|\\+"/g, '"').replace(/"/g, ""))) return true;
    if (/\[\d{7,10},\d{7,10}\]/.test(near.replace(/\\/g, ""))) return true;
    if (/"latitude"[^\]]*\[(?:null,){3}(?!0\.0\b)-?\d/.test(near.replace(/\\/g, ""))) return true;
  }
  return false;
}

function detectLocal(html: string, doc: Document, page: CapturedPage): Shown[] {
  if (!page.localPack) return [];
  const scripted = scriptedIds(html);
  const source = pageSource(doc) ?? html;
  const marked = all("[data-cid], [data-rc_ludocids], a[href*='ludocid=']", doc).filter((el) => placeIdOf(el));
  const out = new Map<string, Shown>();
  for (const el of marked) {
    const id = placeIdOf(el)!;
    if (out.has(id)) continue;
    const card = cardAround(el, (e) => all("[data-cid], [data-rc_ludocids], a[href*='ludocid=']", e).some((o) => placeIdOf(o) && placeIdOf(o) !== id));
    const words = texts(card);
    const joined = words.join(" ");
    // A product tile naming a place id (a shopping carousel beside the pack) shows a product's price.
    if (words.some((t) => /^\p{Sc}\s?\d/u.test(t))) continue;
    const fields = ["place_id"];
    if (/(?:^|\s)[0-5][.,]\d(?:\s|\(|$)/.test(joined)) fields.push("rating");
    if (/(?:^|\s)[0-5][.,]\d\s*\(\d[\d.,]*\s?[KkMm]?(?: mil)?\)/.test(joined)) fields.push("reviews");
    if (words.some((t) => /(?:^|·\s*)(?=(?:\D*\d){6})[+(]?\d[\d\s().\/-]*\d$/.test(t))) fields.push("phone");
    if (/⋅|\b(?:open|closed|opens|closes|ouvert|fermé|geöffnet|geschlossen|aperto|chiuso)\b/i.test(joined)) fields.push("hours");
    if (all("a[href]", card).some((a) => external(attr(a, "href")))) fields.push("website");
    if (all("img", card).some((i) => size(i) !== 16 && showsPicture(i, scripted))) fields.push("thumbnail");
    if (all("[data-lat][data-lng]", card).length || dataShowsPosition(source, id)) fields.push("gps_coordinates");
    out.set(id, { key: id, fields });
  }
  return [...out.values()];
}

// ---- the kinds and the table --------------------------------------------------------------------

export const KINDS: KindBench[] = [
  {
    kind: "images",
    pages: () => filesIn(...PAGE_DIRS.images),
    detect: detectImages,
    parse: (page) => page.images.images_results,
    key: (i) => norm(i.link as string | undefined),
    has: (i, f) => (f === "is_product" ? i.is_product === true : i[f] !== undefined),
  },
  { kind: "news", pages: () => filesIn(...PAGE_DIRS.news), detect: detectNews, parse: (page) => page.news.news_results, key: (i) => norm(i.link as string) },
  {
    kind: "shopping",
    pages: () => filesIn(...PAGE_DIRS.shopping),
    detect: detectShopping,
    parse: (page) => page.shopping.shopping_results,
    key: (i) => i.title as string,
  },
  {
    kind: "local",
    pages: () => filesIn(...PAGE_DIRS.web),
    holds: (html) => /data-cid=|data-rc_ludocids=|ludocid=/.test(html),
    detect: detectLocal,
    parse: (page) => page.localPack?.places ?? [],
    key: (i) => i.place_id as string | undefined,
  },
];

export interface FieldFigure {
  kind: string;
  field: string;
  shown: number;
  returned: number;
}

/** Of one card: each field it shows, and whether its item carries it. */
type CardFields = Array<[field: string, returned: boolean]>;

/** The kinds audit's side of a walk over the pages (pages.ts): each page's cards, put together kind by kind, page by page. */
export function kindsReader(kinds = KINDS): PageReader & { figures(): FieldFigure[] } {
  const pagesOf = new Map(kinds.map((k) => [k, k.pages()]));
  /** Per kind and page: its cards. */
  const cards = new Map<string, CardFields[]>();
  return {
    files: [...new Set([...pagesOf.values()].flat())],
    read(page) {
      for (const k of kinds) {
        if (!pagesOf.get(k)!.includes(page.file) || (k.holds && !k.holds(page.html))) continue;
        const shown = k.detect(page.html, page.doc, page);
        if (shown.length === 0) continue;
        const items = new Map<string, Item>();
        for (const item of k.parse(page)) {
          const key = k.key(item);
          if (key && !items.has(key)) items.set(key, item);
        }
        cards.set(`${k.kind}\0${page.file}`, shown.map((card) => {
          const item = items.get(card.key);
          return card.fields.map((field) => [field, !!item && (k.has ? k.has(item, field) : item[field] !== undefined)]);
        }));
      }
    },
    figures() {
      const figures = new Map<string, FieldFigure>();
      for (const k of kinds) {
        for (const file of pagesOf.get(k)!) {
          for (const card of cards.get(`${k.kind}\0${file}`) ?? []) {
            for (const [field, returned] of card) {
              const id = `${k.kind}\0${field}`;
              const f = figures.get(id) ?? { kind: k.kind, field, shown: 0, returned: 0 };
              f.shown++;
              if (returned) f.returned++;
              figures.set(id, f);
            }
          }
        }
      }
      return [...figures.values()];
    },
  };
}

/** Per kind and field: cards showing it, and of those, items carrying it. */
export function measure(kinds = KINDS): FieldFigure[] {
  const reader = kindsReader(kinds);
  readPages([reader]);
  return reader.figures();
}

/** Share of shown fields returned, per kind (all fields of all cards together). */
export function kindShares(figures: FieldFigure[]): Map<string, number> {
  const totals = new Map<string, { shown: number; returned: number }>();
  for (const f of figures) {
    const t = totals.get(f.kind) ?? { shown: 0, returned: 0 };
    t.shown += f.shown;
    t.returned += f.returned;
    totals.set(f.kind, t);
  }
  return new Map([...totals].map(([k, t]) => [k, t.returned / t.shown]));
}

/** The audit's tables, a kind each. */
export function formatKinds(figures: FieldFigure[], kinds = KINDS): string {
  const shares = kindShares(figures);
  const out: string[] = [];
  for (const k of kinds) {
    const rows = figures.filter((f) => f.kind === k.kind);
    out.push("", `${k.kind}: ${((shares.get(k.kind) ?? NaN) * 100).toFixed(1)}% of the fields shown are returned`);
    out.push("| field | shown | returned | share |\n|---|---|---|---|");
    for (const f of rows) out.push(`| ${f.field} | ${f.shown} | ${f.returned} | ${((f.returned / f.shown) * 100).toFixed(0)}% |`);
  }
  return out.join("\n");
}
