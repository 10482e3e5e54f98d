/**
 * Shopping search (`tbm=shop`, later `udm=28`) → `shopping_results`. Each layout the upstream has
 * served is one row of LAYOUTS: the selector of its product cards and how to read one card. The first
 * layout whose cards are on the page reads them all. Sponsored carousels are ads, not results: no
 * layout reads them.
 */
import type { ShoppingBlocks, ShoppingResult } from "@serp/shared";
import { all, attr, first, hasClass, parseHtml, scan, text, type Document, type Element } from "../html/index.js";
import { headingIn, pictures, pieces, resultCards } from "../html/cards.js";
import { isPlaceholderImage, parsePrice, parseCount, parseRating, scriptedImageSources, targetUrl } from "../values.js";
import { placementLinks } from "../values.js";
import { filled, type UpstreamKind } from "./kind.js";
import { searchTarget } from "./url-forms.js";
import { engineUrl } from "../hosts.js";

/** Shopping search: the shopping tab of the results search. */
export const webShoppingSearch = {
  url: (params, form, ctx) => searchTarget(params, form, ctx, { tab: { modern: [["udm", "28"]], basic: [["tbm", "shop"]] } }),
  parse: parseShopping,
  coverage: {
    /** Every captured page reads 1.00, and a page with half its items in markup the parser does not know about 0.5. */
    threshold: 0.6,
    /** Its results are the upstream's own product pages (`/shopping/product/<id>`), counted by product id. */
    region: [["rso"], ["search"], ["main"]],
  },
  hasContent: (b) => filled(b.shopping_results),
  empty: () => ({ shopping_results: [] }),
} as const satisfies UpstreamKind<"web-shopping-search">;

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

/** What a card is read from, found in one scan of the card. */
const LIST_2021_PARTS = [
  LIST_2021.title,
  LIST_2021.productLink,
  LIST_2021.merchant,
  LIST_2021.titleLink,
  LIST_2021.price,
  LIST_2021.oldPrice,
  LIST_2021.reviewsLink,
  LIST_2021.comparisons,
  LIST_2021.row,
  LIST_2021.thumbnail,
];

type Fields = Omit<ShoppingResult, "position">;

/** Image ids of the page → the sources its scripts set, read once and only when a card's picture needs it. */
type Images = () => Map<string, string>;

interface Layout {
  name: string;
  cards: string;
  read: (card: Element, images: Images) => Fields | undefined;
}

const LAYOUTS: Layout[] = [{ name: "tbm-shop-list-2021", cards: LIST_2021.card, read: readListCard }];

export function parseShopping(html: string): ShoppingBlocks {
  return extractShopping(parseHtml(html));
}

/** The products of an already parsed shopping page. */
export function extractShopping(doc: Document): ShoppingBlocks {
  let scripted: Map<string, string> | undefined;
  const images: Images = () => (scripted ??= scriptedImageSources(doc));
  let known: Fields[] = [];
  for (const layout of LAYOUTS) {
    const cards = all(layout.cards, doc);
    if (cards.length === 0) continue;
    known = cards.map((card) => layout.read(card, images)).filter((f): f is Fields => f !== undefined);
    break;
  }
  // The layouts above are known by class names; products found by their shape (a card with a title
  // and a price, named by the page's product id) stand in when a redesign renamed them.
  const shaped = readShapes(doc, images);
  const items = shaped.length > known.length ? shaped : known;
  return { shopping_results: items.map((fields, i) => ({ position: i + 1, ...compact(fields) })) };
}

/** The results region by its landmarks (ids and roles, which redesigns keep). */
const REGION = ["#rso", "#search", '[role="main"]', "#main"] as const;
/** A product card names its product in a data attribute (`data-docid`, 2019–2025 lists and grids). */
const PRODUCT_CARD = "[data-docid]";
const PRODUCT_PAGE = /\/shopping\/product\/(\d+)/;
/**
 * A price as a card prints it, in any currency: `R$ 455,05`, `₹1,299.00`, `$27`, `1 299,90 €`,
 * `CHF 12.50`, `Rs. 499`, `12,50 zł`.
 */
const PRICE_TEXT =
  /^(?:(?:\p{Sc}|[A-Z]{1,3}\$|R\$|Rs\.?|CHF|USD|EUR|GBP|INR|AED|SAR)\s*\d[\d.,\s'\u00a0\u202f]*|\d[\d.,\s'\u00a0\u202f]*\s*(?:\p{Sc}|zł|kr|Kč|Ft|lei|руб\.?|EUR|USD|CHF))(?:\s*\+\s*\p{L}+)?$/u;

const isPrice = (s: string) => PRICE_TEXT.test(s.replace(/\.$/, "").trim());

/**
 * Products read by shape alone: the page's product cards (`data-docid`), else each link holding a
 * heading whose card shows a price. In a card: the title is its heading, the price the first piece
 * shaped like one (a higher one after it is the former price), the merchant the link to another site,
 * the comparisons the other link to the product page, the rating and reviews the labelled images.
 */
function readShapes(doc: Document, images: Images): Fields[] {
  const region = REGION.map((sel) => first(sel, doc)).find((el) => el !== null);
  if (!region) return [];
  const marked = all(PRODUCT_CARD, region).filter((el, _, cards) => !cards.some((c) => c !== el && isInside(el, c)));
  const cards = marked.length
    ? marked
    : resultCards(region, { target: (href) => productId(href) ?? externalTarget(href) }).map((c) => c.root);
  return cards.map((card) => shapedProduct(card, images)).filter((f): f is Fields => f !== undefined);
}

const ENGINE_PAGE = engineUrl({ subdomains: "any", then: "/" });

function externalTarget(href: string): string | undefined {
  const url = targetUrl(href);
  return url && /^https?:/i.test(url) && !ENGINE_PAGE.test(url) ? url : undefined;
}

function shapedProduct(card: Element, images: Images): Fields | undefined {
  const heading = headingIn(card);
  const links = all("a[href]", card);
  const productLink = links.find((a) => PRODUCT_PAGE.test(attr(a, "href")!));
  const title = heading ? text(heading) : text(links.find((a) => text(a).length >= 10));
  const parts = pieces(card);
  const prices = [...new Set(parts.map((p) => p.text.replace(/\.$/, "").trim()).filter(isPrice))];
  if (!title || prices.length === 0) return undefined;
  const price = prices[0]!;
  const extracted = parsePrice(price);
  const old = prices.slice(1).find((p) => (parsePrice(p) ?? 0) > (extracted ?? Infinity));
  const titleLink = heading ? links.find((a) => a === heading.parent || isInside(heading, a)) : undefined;
  const merchant = links.find((a) => a !== titleLink && !PRODUCT_PAGE.test(attr(a, "href")!) && text(a) && !isPrice(text(a)) && text(a).length <= 60);
  const comparisons = links.find((a) => a !== titleLink && a !== productLink && PRODUCT_PAGE.test(attr(a, "href")!) && /\d/.test(text(a)) && !isPrice(text(a)));
  const labelled = all("[aria-label]", card).map((el) => ({ el, label: attr(el, "aria-label")! }));
  const ratingEl = labelled.find((l) => attr(l.el, "role") === "img" && /^\s*[0-5](?:[.,]\d)?\s*\D/.test(l.label));
  const reviewsEl = labelled.find((l) => l !== ratingEl && /\d/.test(l.label) && attr(l.el, "role") !== "img" && !isPrice(l.label));
  const chips = parts.map((p) => p.text).find((t) => t !== title && t.split(/\s+·\s+/).length >= 3 && !prices.some((p) => t.includes(p)));
  const productHref = attr(productLink, "href");
  return {
    title,
    product_id: productId(productHref),
    product_link: productHref ? targetUrl(productHref) : undefined,
    ...placementLinks(attr(merchant, "href") ?? (productHref ? undefined : attr(titleLink, "href"))),
    source: text(merchant) || undefined,
    price,
    extracted_price: extracted,
    old_price: old,
    extracted_old_price: parsePrice(old),
    rating: parseRating(ratingEl?.label),
    reviews: parseCount(reviewsEl?.label),
    number_of_comparisons: text(comparisons).match(/\d[\d.,]*\+?/)?.[0],
    comparison_link: comparisons ? targetUrl(attr(comparisons, "href")) : undefined,
    extensions: chips?.split(/\s+·\s+/).filter(Boolean),
    snippet: chips ? undefined : parts.map((p) => p.text).find((t) => t !== title && t.length >= 60 && !isPrice(t)),
    thumbnail: pictures(card).pictures.map((img) => pictureOf(img, images)).find(Boolean),
  };
}

function isInside(el: Element, ancestor: Element): boolean {
  for (let node = el.parent; node; node = node.parent) if (node === ancestor) return true;
  return false;
}

function readListCard(card: Element, images: Images): Fields | undefined {
  const L = LIST_2021;
  const parts = scan(card, LIST_2021_PARTS);
  const title = parts.textOf(L.title);
  if (!title) return undefined;
  const productHref = attr(parts.first(L.productLink), "href");
  const merchant = parts.first(L.merchant);
  const titleHref = attr(parts.first(L.titleLink), "href");
  const price = parts.textOf(L.price);
  const oldPrice = parts.textOf(L.oldPrice);
  const reviewsLink = parts.first(L.reviewsLink);
  const comparisons = parts.first(L.comparisons);
  return {
    title,
    product_id: productId(productHref),
    product_link: productHref ? targetUrl(productHref) : undefined,
    ...placementLinks(attr(merchant, "href") ?? (productHref ? undefined : titleHref)),
    source: text(merchant) || undefined,
    price,
    extracted_price: parsePrice(price),
    old_price: oldPrice,
    extracted_old_price: parsePrice(oldPrice),
    rating: reviewsLink ? parseRating(attr(first(L.rating, reviewsLink), "aria-label")) : undefined,
    reviews: reviewsLink ? parseCount(attr(first(L.reviews, reviewsLink), "aria-label")) : undefined,
    number_of_comparisons: text(comparisons).match(/\d[\d.,]*\+?/)?.[0],
    comparison_link: comparisons ? targetUrl(attr(comparisons, "href")) : undefined,
    ...detailRows(parts.all(L.row)),
    thumbnail: pictureOf(parts.first(L.thumbnail), images),
  };
}

/** The rows after price and rating: spec chips (`HP · DeskJet · …`) or a description snippet. */
function detailRows(rows: readonly Element[]): Pick<Fields, "extensions" | "snippet"> {
  const L = LIST_2021;
  const out: Pick<Fields, "extensions" | "snippet"> = {};
  for (const row of rows) {
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

/**
 * A product's picture: its image's source (a URL, or the `data:` image the page inlines, as every
 * 2021 list card does), else the source the page's script sets for that image's id; never the 1×1
 * placeholder a scripted image holds until then.
 */
function pictureOf(img: Element | null | undefined, images: Images): string | undefined {
  if (!img) return undefined;
  const src = attr(img, "src") ?? attr(img, "data-src");
  if (src && !isPlaceholderImage(src)) return /^https?:\/\//i.test(src) || /^data:image\//i.test(src) ? src : undefined;
  const id = attr(img, "id");
  return id ? images().get(id) : undefined;
}

function compact(fields: Fields): Fields {
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Fields;
}
