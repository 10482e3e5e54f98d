/**
 * Shopping search (`tbm=shop`, later `udm=28`) → `shopping_results`. Each layout the upstream has
 * served is one row of LAYOUTS: the selector of its product cards and how to read one card. The first
 * layout whose cards are on the page reads them all. Sponsored carousels are ads, not results: no
 * layout reads them.
 */
import type { ShoppingBlocks, ShoppingResult } from "@serp/shared";
import { all, attr, first, hasClass, parsePrice, parseCount, parseRating, parseHtml, targetUrl, text, textOf, type Element } from "../dom.js";

/**
 * List view, 2021 (pt-BR captures): one `.sh-dlr__list-result` per product under "best match" and
 * "other matches" headings. Rows (`.hBUZL`) hold the price and merchant, the rating, then either spec
 * chips or a description. `.YRa0Ce` is the struck-through former price (the page's own CSS says so).
 */
const LIST_2021 = {
  card: "div.sh-dlr__list-result",
  title: "h3",
  titleLink: 'a[data-what="1"]',
  productLink: 'a[href*="/shopping/product/"]',
  price: '.h1Wfwb > span[aria-hidden="true"]',
  oldPrice: ".YRa0Ce",
  merchant: "a.shntl",
  reviewsLink: 'a[href*="#reviews"]',
  rating: '[role="img"][aria-label]',
  reviews: "span[aria-label]",
  comparisons: 'a[href$="#online"]',
  row: ".hBUZL",
  priceRow: ".IHk3ob",
  ratingRowClass: "Rv2Cae",
  variantsRowClass: "Y6Fvnc",
  thumbnail: ".sh-dlr__thumbnail img",
} as const;

type Fields = Omit<ShoppingResult, "position">;

interface Layout {
  name: string;
  cards: string;
  read: (card: Element) => Fields | undefined;
}

const LAYOUTS: Layout[] = [{ name: "tbm-shop-list-2021", cards: LIST_2021.card, read: readListCard }];

export function parseShopping(html: string): ShoppingBlocks {
  const doc = parseHtml(html);
  for (const layout of LAYOUTS) {
    const cards = all(layout.cards, doc);
    if (cards.length === 0) continue;
    const items = cards.map(layout.read).filter((f): f is Fields => f !== undefined);
    return { shopping_results: items.map((fields, i) => ({ position: i + 1, ...compact(fields) })) };
  }
  return { shopping_results: [] };
}

function readListCard(card: Element): Fields | undefined {
  const L = LIST_2021;
  const title = textOf(L.title, card);
  if (!title) return undefined;
  const productHref = attr(first(L.productLink, card), "href");
  const merchant = first(L.merchant, card);
  const titleHref = attr(first(L.titleLink, card), "href");
  const price = textOf(L.price, card);
  const oldPrice = textOf(L.oldPrice, card);
  const reviewsLink = first(L.reviewsLink, card);
  const comparisons = first(L.comparisons, card);
  return {
    title,
    product_id: productId(productHref),
    product_link: productHref ? targetUrl(productHref) : undefined,
    link: targetUrl(attr(merchant, "href") ?? (productHref ? undefined : titleHref)),
    source: text(merchant) || undefined,
    price,
    extracted_price: parsePrice(price),
    old_price: oldPrice,
    extracted_old_price: parsePrice(oldPrice),
    rating: reviewsLink ? parseRating(attr(first(L.rating, reviewsLink), "aria-label")) : undefined,
    reviews: reviewsLink ? parseCount(attr(first(L.reviews, reviewsLink), "aria-label")) : undefined,
    number_of_comparisons: text(comparisons).match(/\d[\d.,]*\+?/)?.[0],
    comparison_link: comparisons ? targetUrl(attr(comparisons, "href")) : undefined,
    ...detailRows(card),
    thumbnail: httpUrl(attr(first(L.thumbnail, card), "src")),
  };
}

/** The rows after price and rating: spec chips (`HP · DeskJet · …`) or a description snippet. */
function detailRows(card: Element): Pick<Fields, "extensions" | "snippet"> {
  const L = LIST_2021;
  const out: Pick<Fields, "extensions" | "snippet"> = {};
  for (const row of all(L.row, card)) {
    if (hasClass(row, L.ratingRowClass) || hasClass(row, L.variantsRowClass) || first(L.priceRow, row)) continue;
    const chips = row.children.filter((c): c is Element => c.type === "tag" && c.name === "span").map(text);
    if (chips.length > 0) out.extensions ??= chips.filter(Boolean);
    else out.snippet ??= text(row) || undefined;
  }
  return out;
}

/** `https://www.google.com/shopping/product/4997777289611787084?…` → "4997777289611787084". */
export function productId(href: string | undefined): string | undefined {
  return href?.match(/\/shopping\/product\/(\d+)/)?.[1];
}

/** Thumbnails inlined as `data:` images are not URLs a client can keep, so they are left out. */
function httpUrl(url: string | undefined): string | undefined {
  return url && /^https?:\/\//i.test(url) ? url : undefined;
}

function compact(fields: Fields): Fields {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Fields;
}
