/**
 * Images search (`tbm=isch` / `udm=2`) → `images_results`. Each layout the upstream has served is one
 * row of LAYOUTS: the selector of its tiles, the parts a tile is read from and how to read them. The
 * page is scanned once for the tiles of every layout and their parts; the first layout whose tiles are
 * on the page reads them all, each tile from the parts lying in it. Whatever the layout, an `/imgres?`
 * link inside a tile is read too: its query carries the full image URL, the source page and the size.
 */
import type { ImageResult, ImagesBlocks } from "@serp/shared";
import { textContent } from "domutils";
import { isTag } from "domhandler";
import { all, attr, first, parseHtml, scan, scansOf, text, type AnyNode, type Document, type Element, type Scan } from "../html/index.js";
import { cardsAround, pieces, resultCards } from "../html/cards.js";
import { targetUrl, unwrapWayback } from "../values.js";
import { filled, type UpstreamKind } from "./kind.js";
import { searchTarget } from "./url-forms.js";
import { ENGINE_ORIGIN, engineUrl } from "../hosts.js";

/** Images: the image grid of the results search. */
export const webImages = {
  url: (params, form, ctx) => searchTarget(params, form, ctx, { tab: { modern: [["udm", "2"]], basic: [["tbm", "isch"]] } }),
  parse: parseImages,
  coverage: {
    /** Every captured page reads 1.00, and a page with half its tiles in markup the parser does not know about 0.5. */
    threshold: 0.7,
    /** The 2021 grid: `#islrg` is the placeholder, the tiles wait in the hidden `#is-results`. Tiles link their source page. */
    region: [["islrg", "is-results"], ["rso"], ["search"], ["main"]],
  },
  hasContent: (b) => filled(b.images_results),
  empty: () => ({ images_results: [] }),
} as const satisfies UpstreamKind<"web-images">;

/** Images tab as a browser renders it (`udm=2`, 2025): one `data-attrid` tile per image. */
const MODERN = {
  tile: 'div[data-attrid="images universal"]',
  link: "a.EZAeBe[href]",
  title: ".toI8Rb",
  source: ".guK3rf",
  image: ".H8Rx8c img",
} as const;

/**
 * Desktop grid of 2020–2022 (`div.isv-r`, images/string-term-images-desktop-2021-wayback): the tile
 * carries the image's id (`data-id`) and full size (`data-ow`/`data-oh`); its thumbnail link holds
 * the `img` (a placeholder with the URL in `data-src` below the first rows), its caption link
 * (`a.VFACy`) the page, the title (`title`) and the site (`.fxgdke`). The full-size URL is only in
 * the page's data script, keyed by the tile's id: see `originalsOf`.
 */
const GRID_2021 = {
  tile: "div.isv-r",
  link: "a.VFACy[href]",
  source: ".fxgdke",
  image: "img",
} as const;

/**
 * Basic HTML grid (`gbv=1`, 2017): a table cell per image holding the link, the thumbnail, a `<cite>`
 * site name, then the title and a "1024 × 768 - 45k - jpg" line, separated by `<br>`.
 */
const BASIC_TABLE = {
  tile: "table.images_table td",
  link: "a[href]",
  image: "img",
  source: "cite",
} as const;

/** Basic XHTML-mobile grid (2022): a cell per image, the title and site as two spans under the link. */
const BASIC_MOBILE = {
  tile: "td.e3goi",
  link: "a[href]",
  image: "img",
  title: ".x3G5ab",
  source: ".F9iS2e",
} as const;

/** Light layouts (`/wml/search`, older basic pages): each image is an `/imgres?` link, nothing else. */
const IMGRES = {
  link: 'a[href*="/imgres?"]',
  image: "img",
} as const;

type Fields = Omit<ImageResult, "position">;

interface Layout {
  name: string;
  tiles: string;
  /** What a tile is read from, found in one scan of the tile (its `/imgres?` link is added). */
  parts: readonly string[];
  read: (tile: Element, parts: Scan) => Fields;
}

const LAYOUTS: Layout[] = [
  {
    name: "udm2-2025",
    tiles: MODERN.tile,
    parts: [MODERN.image, MODERN.title, MODERN.link, MODERN.source],
    // The tile is found by its data attribute; its parts by class, else by shape (its picture, its link
    // to another site, its longest text and its short one).
    read: (tile, parts) => {
      const img = parts.first(MODERN.image) ?? first("img", tile);
      const link = parts.first(MODERN.link) ?? all("a[href]", tile).find((a) => imageTarget(attr(a, "href")!) !== undefined);
      const texts = parts.first(MODERN.title) ? [] : pieces(tile).map((p) => p.text);
      const longest = [...texts].sort((a, b) => b.length - a.length)[0];
      const source = parts.textOf(MODERN.source) ?? texts.find((t) => t !== longest && t.length <= 60);
      return {
        title: parts.textOf(MODERN.title) ?? (attr(img, "alt") || longest || undefined),
        link: pageLink(attr(link, "href") ?? attr(tile, "data-lpage")),
        source,
        thumbnail: thumbnailOf(img),
        is_product: isProduct(source),
        in_stock: inStock(source),
      };
    },
  },
  {
    name: "isv-grid-2021",
    tiles: GRID_2021.tile,
    parts: [GRID_2021.link, GRID_2021.source, GRID_2021.image],
    read: (tile, parts) => {
      const a = parts.first(GRID_2021.link);
      const img = parts.first(GRID_2021.image);
      const source = parts.textOf(GRID_2021.source);
      return {
        title: attr(a, "title") || attr(img, "alt") || undefined,
        link: pageLink(attr(a, "href")),
        source,
        is_product: isProduct(source),
        in_stock: inStock(source),
        thumbnail: thumbnailOf(img),
        original_width: positiveInt(attr(tile, "data-ow") ?? null),
        original_height: positiveInt(attr(tile, "data-oh") ?? null),
      };
    },
  },
  {
    name: "basic-table-2017",
    tiles: BASIC_TABLE.tile,
    parts: [BASIC_TABLE.source, BASIC_TABLE.link, BASIC_TABLE.image],
    read: (tile, parts) => {
      const source = attr(parts.first(BASIC_TABLE.source), "title") ?? parts.textOf(BASIC_TABLE.source);
      const lines = brLines(tile).filter((l) => l && l !== source);
      const size = lines.map(imageSize).find((s) => s !== undefined);
      const title = lines.find((l) => imageSize(l) === undefined);
      return {
        title,
        link: pageLink(attr(parts.first(BASIC_TABLE.link), "href")),
        source,
        thumbnail: thumbnailOf(parts.first(BASIC_TABLE.image)),
        original_width: size?.[0],
        original_height: size?.[1],
      };
    },
  },
  {
    name: "basic-mobile-2022",
    tiles: BASIC_MOBILE.tile,
    parts: [BASIC_MOBILE.title, BASIC_MOBILE.link, BASIC_MOBILE.source, BASIC_MOBILE.image],
    read: (_, parts) => ({
      title: parts.textOf(BASIC_MOBILE.title),
      link: pageLink(attr(parts.first(BASIC_MOBILE.link), "href")),
      source: parts.textOf(BASIC_MOBILE.source),
      thumbnail: thumbnailOf(parts.first(BASIC_MOBILE.image)),
    }),
  },
  {
    name: "imgres-links",
    tiles: IMGRES.link,
    parts: [IMGRES.image],
    // Only the caption link has text; an image's alt there is a generic "Image result for …".
    read: (a, parts) => ({ title: text(a) || undefined, thumbnail: thumbnailOf(parts.first(IMGRES.image)) }),
  },
];

/**
 * Deferred content: the 2021 grid serves its first rows in place and the rest in `<template>`s at the
 * end of the page, which a script moves into the grid on load (images/string-term-images-desktop-
 * 2021-wayback: 50 tiles in place, 53 deferred). They are part of the page as shown.
 */
const DEFERRED = "template";

/** The page's matches, those inside its templates appended (a scan does not enter a template). */
function withDeferred(page: Scan): { all(selector: string): readonly Element[] } {
  const templates = page.all(DEFERRED);
  if (templates.length === 0) return page;
  // parse5 keeps a template's content as a fragment, the template's one child.
  const deferred = templates.map((t) => scan(t.children[0] ?? t, PAGE_PARTS));
  const merged = new Map<string, readonly Element[]>();
  return {
    all(selector) {
      let found = merged.get(selector);
      if (!found) merged.set(selector, (found = [...page.all(selector), ...deferred.flatMap((d) => d.all(selector))]));
      return found;
    },
  };
}

/** A layout's parts and the `/imgres?` link: what a tile is read from. */
const TILE_PARTS = new Map(LAYOUTS.map((l) => [l, [...l.parts, IMGRES.link]]));
/** The tiles of every layout and their parts, found in one scan of the page. */
const PAGE_PARTS = [...new Set(LAYOUTS.flatMap((l) => [l.tiles, ...TILE_PARTS.get(l)!]))];

export function parseImages(html: string): ImagesBlocks {
  return extractImages(parseHtml(html));
}

/** The tiles of an already parsed images page. */
export function extractImages(doc: Document): ImagesBlocks {
  const entries = scriptEntries(doc);
  const known = readLayouts(doc, entries);
  // The layouts above are known by class names; tiles found by their shape (a picture linking the
  // page it is on) stand in when a redesign renamed them.
  const shaped = known.length >= SHAPED_ENOUGH ? [] : readShapes(doc, entries);
  const items = shaped.length > known.length ? shaped : known;
  return { images_results: items.map((fields, i) => ({ position: i + 1, ...compact(fields) })) };
}

/** A page whose known layout gave this many tiles needs no second reading. */
const SHAPED_ENOUGH = 100;

function readLayouts(doc: Document, entries: ScriptEntries): Fields[] {
  const page = withDeferred(scan(doc, [...PAGE_PARTS, DEFERRED]));
  for (const layout of LAYOUTS) {
    const tiles = page.all(layout.tiles);
    if (tiles.length === 0) continue;
    const parts = scansOf(tiles, TILE_PARTS.get(layout)!, (part) => page.all(part));
    let read = tiles.map((tile, i) => withImgres(tile, parts[i]!, layout.read(tile, parts[i]!)));
    if (layout.tiles === GRID_2021.tile) read = read.map((fields, i) => withScriptData(fields, tileId(tiles[i]!), entries));
    return mergeRepeats(read);
  }
  return [];
}

/** The image grid by its landmarks (ids and roles, which redesigns keep): the 2021 grid's `#islrg`/`#is-results`, else the results region. */
const REGION = ["#islrg", "#is-results", "#rso", "#search", '[role="main"]', "#main", "body"] as const;
const GOOGLE_PAGE = engineUrl({ subdomains: "any", also: ["usercontent", "gstatic", { pattern: String.raw`archive\.org` }] });
const imageTarget = (href: string) => {
  const page = pageLink(href);
  return page && !GOOGLE_PAGE.test(page) ? page : undefined;
};

/**
 * Tiles read by shape alone: each link to the page an image is on (directly, through a redirect or
 * `/imgres?`) whose card holds a picture. The title is the link's `title`, else the card's longest
 * text, else the picture's `alt`; the source the card's short text (the site's name); the size from
 * `/imgres?` or the card's `data-ow`/`data-oh`.
 */
function readShapes(doc: Document, entries: ScriptEntries): Fields[] {
  // The deferred rows (templates at the end of the page) follow the region's own: parse5 keeps a
  // template's content as a fragment, the template's one child, read like an element.
  const deferred = all(DEFERRED, doc).map((t) => t.children[0] as Element | undefined).filter((c): c is Element => c !== undefined);
  for (const selector of REGION) {
    const region = first(selector, doc);
    const own = region ? tilesIn(region, entries) : [];
    if (own.length) return mergeRepeats([...own, ...deferred.flatMap((d) => tilesIn(d, entries))]);
  }
  return [];
}

/** The tiles of one part of the page: one per picture linking a page (two pictures of one page are two images). */
function tilesIn(root: Element, entries: ScriptEntries): Fields[] {
  const pictureLinks = all("a[href]", root).filter((a) => imageTarget(attr(a, "href")!) !== undefined && first("img", a) !== null);
  // The 2020–2022 grid links the page from the caption only (its picture's link is scripted).
  const captionLinks = resultCards(root, { target: imageTarget, headless: true }).map((c) => c.anchor);
  const linked = pictureLinks.length >= captionLinks.length ? pictureLinks : captionLinks;
  const tiles = cardsAround(linked, root);
  const items: Fields[] = [];
  linked.forEach((anchor, i) => {
    const tile = tiles[i]!;
    const img = first("img", anchor) ?? first("img", tile);
    if (!img) return;
    const captioned = all("a[href]", tile).find((a) => a.attribs.title);
    const texts = pieces(tile).map((p) => p.text).filter((t) => imageSize(t) === undefined);
    const title = attr(captioned, "title") || [...texts].sort((a, b) => b.length - a.length)[0] || attr(img, "alt") || undefined;
    const source = texts.filter((t) => t !== title && t.length <= 60)[0];
    const sized = tile.attribs["data-ow"] ? tile : (all("[data-ow]", tile)[0] ?? closestWith(tile, "data-ow"));
    const fields: Fields = {
      title,
      link: imageTarget(attr(captioned, "href") ?? attr(anchor, "href")!),
      source,
      thumbnail: thumbnailOf(img),
      original_width: positiveInt(attr(sized, "data-ow") ?? null),
      original_height: positiveInt(attr(sized, "data-oh") ?? null),
    };
    const res = parseImgres(attr(all('a[href*="/imgres?"]', tile)[0] ?? anchor, "href"));
    const id = tileId(tile) ?? attr(all("[data-id]", tile)[0], "data-id");
    items.push(withScriptData(res ? { ...res, ...compact(fields) } : fields, id, entries));
  });
  return items;
}

/**
 * What an `/imgres?` link says about its image: `imgurl` (the image), `imgrefurl` (the page it is on),
 * `w` and `h` (its size) and `tbnid` (its thumbnail's id). Wayback-rewritten links are unwrapped first.
 */
export function parseImgres(href: string | undefined): Fields | undefined {
  const raw = unwrapWayback(href);
  if (!raw?.includes("/imgres?")) return undefined;
  let q: URLSearchParams;
  try {
    q = new URL(raw, ENGINE_ORIGIN).searchParams;
  } catch {
    return undefined;
  }
  const tbnid = q.get("tbnid")?.replace(/:$/, "");
  return compact({
    original: httpUrl(q.get("imgurl") ?? undefined),
    link: httpUrl(q.get("imgrefurl") ?? undefined),
    original_width: positiveInt(q.get("w")),
    original_height: positiveInt(q.get("h")),
    thumbnail: tbnid ? `https://encrypted-tbn0.gstatic.com/images?q=tbn:${tbnid}` : undefined,
  });
}

/** The tile's own fields win; an `/imgres?` link inside it (or the tile itself) fills the gaps. */
function withImgres(tile: Element, parts: Scan, fields: Fields): Fields {
  const a = tile.name === "a" && attr(tile, "href")?.includes("/imgres?") ? tile : parts.first(IMGRES.link);
  const res = parseImgres(attr(a, "href"));
  return res ? { ...res, ...compact(fields) } : fields;
}

/**
 * What the page's data script says of each 2021 grid tile, keyed by the tile's id: each image is
 * `"<tile id>",["<thumbnail>",h,w],["<full-size URL>",h,w]`. The full-size URL is only there; the
 * thumbnail is there too, and is the only one of the first rows' tiles, whose `img` holds a 1×1
 * placeholder until a script sets it (string-term-images-desktop-2021-wayback: 20 tiles). One pass
 * over the scripts' text; a tile's own fields win.
 */
const SCRIPT_ENTRY = /"([\w-]+)",\["(https:\/\/encrypted-tbn[^"]*)",\d+,\d+\]\s*,\["((?:[^"\\]|\\.)+)",(\d+),(\d+)\]/g;

/** Each tile id's fields in the page's data script, read once and only when a tile asks. */
type ScriptEntries = () => Map<string, Fields>;

function scriptEntries(doc: AnyNode): ScriptEntries {
  let entries: Map<string, Fields> | undefined;
  return () => {
    if (entries) return entries;
    entries = new Map();
    for (const script of all("script", doc)) {
      const code = textContent(script);
      if (!code.includes("encrypted-tbn")) continue;
      for (const m of code.matchAll(SCRIPT_ENTRY)) {
        if (entries.has(m[1]!)) continue;
        entries.set(
          m[1]!,
          compact({
            thumbnail: httpUrl(jsonString(m[2]!)),
            original: httpUrl(jsonString(m[3]!)),
            original_height: positiveInt(m[4]!),
            original_width: positiveInt(m[5]!),
          }),
        );
      }
    }
    return entries;
  };
}

/** A tile's id (`data-id`, `data-tbnid`), on the tile or the nearest element around it. */
function tileId(tile: Element): string | undefined {
  const named = tile.attribs["data-id"] !== undefined ? tile : closestWith(tile, "data-id");
  return attr(named, "data-id") ?? attr(tile, "data-tbnid");
}

/** The tile's fields, its gaps filled from its entry in the data script. */
function withScriptData(fields: Fields, id: string | undefined, entries: ScriptEntries): Fields {
  const entry = id ? entries().get(id) : undefined;
  return entry ? { ...entry, ...compact(fields) } : fields;
}

/** A JSON string literal's content (`\u003d` and the like decoded); undefined when it is not one. */
function jsonString(literal: string): string | undefined {
  try {
    return JSON.parse(`"${literal}"`) as string;
  } catch {
    return undefined;
  }
}

/** The nearest element around `el` carrying `name` (a tile's size sits on the tile, above its links). */
function closestWith(el: Element, name: string): Element | undefined {
  for (let node = el.parent; node && isTag(node); node = node.parent) if (node.attribs[name] !== undefined) return node;
  return undefined;
}

/**
 * Whether a tile shows a product: its site line then adds the product's availability after a
 * middle dot (`aliexpress.com · In stock`, `www.amazon.co.jp · 在庫あり`, `キャラパブ · 在庫なし`),
 * a mark only product listings carry (2021 and 2025 grids). The grids that can show it say false
 * for the tiles that do not; a tile without a site line says nothing.
 */
function isProduct(source: string | undefined): boolean | undefined {
  return source === undefined ? undefined : source.split(/\s+·\s+/).filter(Boolean).length > 1;
}

/** Availability words after the site line's dot, by language: in stock, or not. */
const OUT_OF_STOCK = /在庫なし|品切れ|out of stock|sold out|esgotado|agotado|rupture de stock|nicht auf lager|niedostępny|нет в наличии/i;
const IN_STOCK = /在庫あり|in stock|em estoque|en stock|disponible|auf lager|disponibile|w magazynie|в наличии/i;

/**
 * A product tile's availability (`· In stock` → true, `· 在庫なし` → false); absent when the tile
 * is no product or its words are not known ones.
 */
function inStock(source: string | undefined): boolean | undefined {
  if (!isProduct(source)) return undefined;
  const availability = source!.split(/\s+·\s+/).slice(1).join(" ");
  if (OUT_OF_STOCK.test(availability)) return false;
  if (IN_STOCK.test(availability)) return true;
  return undefined;
}

/** Light layouts link an image twice (picture, then caption): one item per image, the caption kept. */
function mergeRepeats(items: Fields[]): Fields[] {
  const out: Fields[] = [];
  for (const item of items) {
    const prev = out[out.length - 1];
    if (prev && item.original && item.original === prev.original && item.link === prev.link) {
      prev.title ??= item.title;
      prev.thumbnail ??= item.thumbnail;
    } else out.push(item);
  }
  return out.filter((item) => item.link ?? item.original);
}

/** Text of each `<br>`-separated line directly inside `el`, whitespace folded. */
function brLines(el: Element): string[] {
  const lines = [""];
  for (const child of el.children) {
    if (isTag(child) && child.name === "br") lines.push("");
    else lines[lines.length - 1] += textContent(child);
  }
  return lines.map((l) => l.replace(/\s+/g, " ").trim());
}

/** `1024 × 768 - 454k - jpg` → [1024, 768]. */
function imageSize(line: string): [number, number] | undefined {
  const m = line.match(/^(\d+)\s*[×xX]\s*(\d+)\b/);
  return m?.[1] && m[2] ? [Number(m[1]), Number(m[2])] : undefined;
}

/** The page an image is on: a redirect or archive wrapper unwrapped; for `/imgres?` links, its `imgrefurl`. */
function pageLink(href: string | undefined): string | undefined {
  const imgres = parseImgres(href);
  return imgres ? imgres.link : httpUrl(targetUrl(unwrapWayback(href)));
}

/** A thumbnail URL: inline `data:` images and placeholders are not URLs a client can keep, so they are left out. */
function thumbnailOf(img: Element | null): string | undefined {
  return httpUrl(unwrapWayback(attr(img, "src") ?? attr(img, "data-src")));
}

function httpUrl(url: string | undefined): string | undefined {
  return url && /^https?:\/\//i.test(url) ? url : undefined;
}

function positiveInt(raw: string | null): number | undefined {
  const n = Number(raw);
  return raw && Number.isInteger(n) && n > 0 ? n : undefined;
}

function compact(fields: Fields): Fields {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Fields;
}
