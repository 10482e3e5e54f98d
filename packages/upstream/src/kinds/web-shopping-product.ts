/**
 * Sellers of one product (`web-shopping-product`): the legacy product page's "online stores" table
 * (`/shopping/product/<id>` and its `/online` list). Credits are charged per 10 sellers, so only real
 * seller rows count: one per merchant, never the expanded "show all N offers" rows or table chrome.
 *
 * Layouts are kept in one table. The current immersive product panel (`ibp=oshop&prds=catalogid:…`)
 * is not in it yet: no capture of that panel exists, and selectors are only added from real pages.
 */
import type { Seller, SellersBlocks } from "@serp/shared";
import { attr, closest, type Element, hasClass, parseHtml, scan, type Scan, text } from "../html/index.js";
import { parseCount, parsePrice } from "../values.js";
import { placementLinks } from "../values.js";
import { filled, type UpstreamKind } from "./kind.js";
import { productTarget } from "./url-forms.js";
import { engineUrl } from "../hosts.js";

/** A product's sellers: its product page's online offers. */
export const webShoppingProduct = {
  url: (params, form) => productTarget(params, form, true),
  parse: parseSellers,
  /** Not a list of outbound results: not measured. */
  coverage: { threshold: 0 },
  hasContent: (b) => filled(b.sellers),
  empty: () => ({ sellers: [] }),
} as const satisfies UpstreamKind<"web-shopping-product">;

interface SellerLayout {
  /** Names the layout: the page form and the year of the captures it was written from. */
  id: string;
  /** Present only on pages of this layout. */
  marker: string;
  title: string;
  /** Header cells; their classes say which column holds what, so cells are found by column. */
  headerCells: string;
  row: string;
  /** Class of the box a merchant's extra offers ("show all N") open in: rows inside are not more sellers. */
  nestedOffersClass: string;
  sellerName: string;
  sellerLink: string;
  /** Fallback link: the row's "visit site" button. */
  visitLink: string;
  totalPrice: string;
  /** Label/value rows of the price breakdown shown beside the total (item price, shipping, …, total). */
  breakdownRow: string;
  /** The merchant's own rating line ("90% positivos (10.793)") and its review-count link. */
  sellerRating: string;
  sellerReviews: string;
  /** Header-cell classes naming the columns. */
  columns: { seller: string; basePrice: string; totalPrice: string; visit: string };
}

const LAYOUTS: readonly SellerLayout[] = [
  {
    id: "shopping-product-osd-2021",
    marker: "#sh-osd__online-sellers-grid",
    title: ".sh-t__title",
    headerCells: "#sh-osd__online-sellers-grid > thead > tr > th",
    row: "#sh-osd__online-sellers-grid tr.sh-osd__offer-row",
    nestedOffersClass: "sh-osd__pb-grid-wrapper",
    sellerName: "a.sh-osd__seller-link > span:first-child",
    sellerLink: "a.sh-osd__seller-link",
    visitLink: "a[aria-label][href]:not(.sh-osd__seller-link)",
    totalPrice: ".sh-osd__total-price",
    breakdownRow: ".sh-osd__content table tr",
    sellerRating: ".sh-osd__merchant-info-container > div",
    sellerReviews: ".sh-osd__merchant-info-container a[aria-label]:not(.sh-osd__seller-link)",
    columns: {
      seller: "sh-osd__sold-by",
      basePrice: "sh-osd__item-price",
      totalPrice: "sh-osd__total-price",
      visit: "sh-osd__visit-site",
    },
  },
];

/** What the page is read from, and each offer row, found in one scan each. */
const PAGE_PARTS = new Map(LAYOUTS.map((l) => [l, [l.marker, l.headerCells, l.row, l.title]]));
const ROW_PARTS = new Map(
  LAYOUTS.map((l) => [l, [l.sellerName, l.sellerLink, l.visitLink, l.totalPrice, l.breakdownRow, l.sellerRating, l.sellerReviews]]),
);

/** Breakdown labels that name a shipping charge, in the interface languages the service asks for. */
const SHIPPING_LABEL = /frete|envio|entrega|shipping|delivery|versand|livraison|env[ií]o|spedizione|verzending|доставка/i;
const PERCENT = /(\d{1,3})\s*%/;
const ENGINE_PAGE = engineUrl({ then: "/" });

export function parseSellers(html: string): SellersBlocks {
  const doc = parseHtml(html);
  for (const layout of LAYOUTS) {
    const page = scan(doc, PAGE_PARTS.get(layout)!);
    if (page.first(layout.marker)) return readSellers(layout, page);
  }
  return { sellers: [] };
}

function readSellers(layout: SellerLayout, page: Scan): SellersBlocks {
  const columns = columnIndexes(layout, page.all(layout.headerCells));
  const sellers: Seller[] = [];
  const seen = new Set<string>();
  for (const row of page.all(layout.row)) {
    if (closest(row, (e) => hasClass(e, layout.nestedOffersClass))) continue;
    const seller = readRow(layout, row, columns);
    if (!seller) continue;
    const key = seller.name.toLocaleLowerCase();
    if (seen.has(key)) continue;
    seen.add(key);
    sellers.push({ position: sellers.length + 1, ...seller });
  }

  const title = page.textOf(layout.title);
  return title ? { product_title: title, sellers } : { sellers };
}

type Columns = { details?: number; basePrice?: number };

/**
 * Which column holds what, read from the header: the base price sits under the item-price header, and
 * the details are in the one column whose header carries none of the known classes.
 */
function columnIndexes(layout: SellerLayout, heads: readonly Element[]): Columns {
  const known = Object.values(layout.columns);
  const index = (cls: string) => {
    const i = heads.findIndex((h) => hasClass(h, cls));
    return i >= 0 ? i : undefined;
  };
  const details = heads.findIndex((h) => !known.some((cls) => hasClass(h, cls)));
  return { basePrice: index(layout.columns.basePrice), details: details >= 0 ? details : undefined };
}

function readRow(layout: SellerLayout, row: Element, columns: Columns): Omit<Seller, "position"> | undefined {
  const parts = scan(row, ROW_PARTS.get(layout)!);
  const name = parts.textOf(layout.sellerName) ?? text(parts.first(layout.sellerLink));
  if (!name) return undefined;
  const cells = row.children.filter((c): c is Element => c.type === "tag" && c.name === "td");
  const cell = (i: number | undefined) => (i === undefined ? undefined : cells[i]);

  const breakdown = readBreakdown(parts.all(layout.breakdownRow));
  const basePrice = text(cell(columns.basePrice)) || breakdown.base;
  const totalPrice = parts.textOf(layout.totalPrice) ?? breakdown.total;
  if (!basePrice && !totalPrice) return undefined;

  const seller: Omit<Seller, "position"> = { name };
  // The seller's link, else the row's "visit site" button; a page of the engine's own (the merchant's ratings) is no destination.
  const named = placementLinks(attr(parts.first(layout.sellerLink), "href"));
  const visit = placementLinks(attr(parts.first(layout.visitLink), "href"));
  const link = named.link ?? (visit.link && !ENGINE_PAGE.test(visit.link) ? visit.link : undefined);
  const tracking_link = named.tracking_link ?? visit.tracking_link;
  if (link) seller.link = link;
  if (tracking_link) seller.tracking_link = tracking_link;
  if (basePrice) {
    seller.base_price = basePrice;
    seller.extracted_base_price = parsePrice(basePrice);
  }
  if (breakdown.shipping) seller.shipping = breakdown.shipping;
  if (totalPrice) {
    seller.total_price = totalPrice;
    seller.extracted_total_price = parsePrice(totalPrice);
  }
  const details = text(cell(columns.details));
  if (details) seller.details = details;

  const positive = parts.textOf(layout.sellerRating)?.match(PERCENT)?.[1];
  if (positive) seller.positive_reviews_percent = Number(positive);
  const reviews = parseCount(parts.textOf(layout.sellerReviews));
  if (reviews !== undefined) seller.reviews = reviews;
  return dropUndefined(seller);
}

function dropUndefined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** Item price (first row), total (last row) and a shipping row when the breakdown lists one. */
function readBreakdown(rows: readonly Element[]): { base?: string; shipping?: string; total?: string } {
  const pairs = rows
    .map((tr) => tr.children.filter((c): c is Element => c.type === "tag" && c.name === "td").map((td) => text(td)))
    .filter((tds): tds is [string, string] => tds.length === 2 && Boolean(tds[0]) && Boolean(tds[1]));
  if (!pairs.length) return {};
  const shipping = pairs.slice(1, -1).find(([label]) => SHIPPING_LABEL.test(label))?.[1];
  return { base: pairs[0]?.[1], shipping, total: pairs.length > 1 ? pairs[pairs.length - 1]?.[1] : undefined };
}
