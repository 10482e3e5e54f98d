/**
 * Shopping ads on the web results page (product tiles, "Sponsored" carousels above the results or in
 * the right column, 2021–2023: web/best-running-shoes-desktop-2023, web/dell-xps-13-buy-desktop-2023,
 * web/louis-vuitton-bags-desktop-2022, web/rudsak-desktop-en-ca-2021) → `shopping_results`, the
 * reference API's name for the inline block on its web engine.
 *
 * Found by shape: each offer is named by the links that carry its offer id (`data-offer-id`), and
 * its tile is the largest element around its first link that holds no other offer (html/cards.ts).
 * A tile reads, in order: its title (the heading's text, or its link's label), the price (the
 * first run with a currency and a number; a sale's former price after it is left out), the merchant
 * (the run right after the price), and a review count in brackets (`(325)`, `(9k+)`). Tiles repeat
 * themselves in a hidden hover card; the first reading wins. The link is the merchant's page the
 * tile links; a tile linking only through the ad redirect gives its destination when the redirect
 * names one, else no link.
 */
import type { InlineShoppingResult } from "@serp/shared";
import { cardsAround, pictures, pieces } from "../../html/cards.js";
import { attr, closest, first, landmarkIndex, text, type Document, type Element } from "../../html/index.js";
import { adDestination, isPlaceholderImage, parseCount, parsePrice, parseRating, scriptedImageSources, targetUrl } from "../../values.js";
import { engineUrl } from "../../hosts.js";

const OFFER = {
  id: "data-offer-id",
  /** The right column: tiles there are `block_position: "right"`, the others `"top"`. */
  rightColumn: "rhs",
} as const;

/** Found in the web page's one landmark sweep (web/index.ts includes this index). */
export const LANDMARKS = landmarkIndex({
  offerLinks: { every: { tags: ["a"], attributes: { [OFFER.id]: true } } },
});

/** A price as tiles print it: a currency sign or code beside a number (`$130.00`, `1.299,00 €`, `CA$595`). */
const PRICE = /(?:(?:[A-Z]{1,3})?[$€£¥₹₩₽]|R\$|CHF|zł|kr)\s?\d[\d.,\u00a0\u202f]*|\d[\d.,\u00a0\u202f]*\s?(?:€|zł|₽|kr|Kč|CHF)/u;
/** How many runs of a tile may come before its price (a "Sale" badge, the title). */
const PRICE_WITHIN = 4;
/** A review count in brackets: `(325)`, `(9k+)`, `(1.2K)`. */
const REVIEWS = /^\(([\d.,]+\s?[kKmM]?\+?)\)$/;

export function extractInlineShopping(doc: Document): InlineShoppingResult[] {
  const links = LANDMARKS.of(doc).offerLinks;
  if (links.length === 0) return [];
  const firstLinks = new Map<string, Element>();
  for (const a of links) {
    const id = a.attribs[OFFER.id]!;
    if (!firstLinks.has(id)) firstLinks.set(id, a);
  }
  const anchors = [...firstLinks.values()];
  const body = closest(anchors[0]!, (e) => e.name === "body") ?? anchors[0]!;
  const tiles = cardsAround(anchors, body);
  let scripted: Map<string, string> | undefined;
  const images = () => (scripted ??= scriptedImageSources(doc));
  const out: InlineShoppingResult[] = [];
  tiles.forEach((tile, i) => {
    const item = readTile(tile, links.filter((a) => a.attribs[OFFER.id] === anchors[i]!.attribs[OFFER.id]), images);
    if (item) out.push({ ...item, position: out.length + 1 });
  });
  return out;
}

function readTile(tile: Element, offerLinks: Element[], images: () => Map<string, string>): Omit<InlineShoppingResult, "position"> | undefined {
  const heading = first('[role="heading"], h3', tile);
  const titleLink = heading ? first("a[aria-label]", heading) : null;
  const runs = pieces(tile).map((p) => p.text);
  const title = (heading && undoubled(text(heading))) || attr(titleLink, "aria-label") || runs[0];
  // A tile shows a price: an offer link outside any tile (a text ad's) widens to no tile.
  const at = runs.findIndex((r) => PRICE.test(r));
  if (!title || at < 0 || at > PRICE_WITHIN) return undefined;
  const item: Omit<InlineShoppingResult, "position"> = {
    block_position: closest(tile, (e) => e.attribs.id === OFFER.rightColumn) ? "right" : "top",
    title,
  };
  const link = destination(offerLinks);
  if (link) item.link = link;
  {
    const price = PRICE.exec(runs[at]!)![0].trim();
    item.price = price;
    const extracted = parsePrice(price);
    if (extracted !== undefined) item.extracted_price = extracted;
    const merchant = runs[at + 1];
    if (merchant && !PRICE.test(merchant) && !REVIEWS.test(merchant)) item.source = undoubled(merchant).replace(/\.\.\.$|…$/, "");
  }
  const reviews = runs.map((r) => REVIEWS.exec(r)?.[1]).find((r) => r !== undefined);
  if (reviews) {
    const n = parseCount(reviews.replace(/\+$/, ""));
    if (n !== undefined) item.reviews = n;
  }
  const stars = first('[role="img"][aria-label]', tile);
  const rating = parseRating(attr(stars, "aria-label"));
  if (rating !== undefined && rating > 0 && rating <= 5) item.rating = rating;
  for (const img of pictures(tile).pictures) {
    const src = attr(img, "src") ?? attr(img, "data-src");
    const image = src && !isPlaceholderImage(src) ? src : attr(img, "id") ? images().get(attr(img, "id")!) : undefined;
    if (image) {
      item.thumbnail = image;
      break;
    }
  }
  return item;
}

/** The engine's pages and its ad clicks: not a merchant's. */
const ENGINE_OR_ADS = engineUrl({ subdomains: ["[^/]+"], also: ["adservices"] });

/** The merchant's page: a link of the tile to another site, else the destination the ad redirect names. */
function destination(links: Element[]): string | undefined {
  for (const a of links) {
    const target = targetUrl(attr(a, "href"));
    if (target && !ENGINE_OR_ADS.test(target)) return target;
  }
  for (const a of links) {
    const target = adDestination(attr(a, "href"));
    if (target) return target;
  }
  return undefined;
}

/** A label printed twice in a row (a visible copy beside a clipped one: `RudsakRudsak`) → once. */
function undoubled(s: string): string {
  const half = s.length / 2;
  return Number.isInteger(half) && s.slice(0, half) === s.slice(half) ? s.slice(0, half) : s;
}
