/**
 * Product information (`web-shopping-product-info`) from the legacy product page
 * (`/shopping/product/<id>`): title, description, specs, images, rating, reviews, headline prices.
 * Fields the page does not show are left out. The immersive product panel that replaced this page
 * has no capture yet, so it has no selectors here.
 */
import type { ProductInfo, ProductInfoBlocks } from "@serp/shared";
import { all, attr, type Element, first, parseHtml, text, textOf } from "../html/index.js";
import { parseCount, parseRating } from "../values.js";
import type { UpstreamKind } from "./kind.js";
import { productTarget } from "./url-forms.js";

/** A product's details: its product page. */
export const webShoppingProductInfo = {
  url: (params, form) => productTarget(params, form, false),
  parse: parseProductInfo,
  /** Not a list of outbound results: not measured. */
  coverage: { threshold: 0 },
  /** A product page has a title; one without is not a product's. There is no "nothing matched" page. */
  hasContent: (b) => Boolean(b.product_results?.title),
} as const satisfies UpstreamKind<"web-shopping-product-info">;

const TITLE = ".sh-t__title";
const PRODUCT_ID = "[data-catalogid]";
const DESCRIPTION_FULL = ".sh-ds__full-txt";
const DESCRIPTION_SHORT = ".sh-ds__trunc-txt";
/** Name/value rows of the specs table; group headings are single cells and are skipped. */
const SPEC_ROWS = "section#specs table tr";
/** The page's own image viewer, not the copy inside the full-screen overlay. */
const IMAGE_VIEWER = ".sh-div__viewer:not(.sh-div__overlay)";
/** Full-size images are the zoom layers' CSS backgrounds; the `<img>` tags may hold only thumbnails. */
const ZOOMED_IMAGES = ".sh-div__zoomed";
const VIEWER_IMAGES = "img.sh-div__image";
/** Headline offer price, repeated in the media viewer's header. */
const HEADLINE_PRICE = ".sh-mv__price";
/** Attributes under "product details" ("Electrolux · 4 bocas · De piso"). */
const EXTENSIONS = ".Qo4JI > span";
/** The merchant-feed highlights listed beside the images. */
const HIGHLIGHTS = ".vqSBk li";
/** Inside the title's block: the star rating and the link to the reviews. */
const RATING = '[role="img"][aria-label]';
const REVIEWS_LINK = 'a[href*="#reviews"]';

const CSS_URL = /url\((["']?)(.*?)\1\)/;

export function parseProductInfo(html: string): ProductInfoBlocks {
  const doc = parseHtml(html);
  const titleEl = first(TITLE, doc);
  const title = text(titleEl);
  if (!titleEl || !title) throw new Error("web-shopping-product-info: the page shows no product title");

  const product: ProductInfo = { title };
  const productId = attr(first(PRODUCT_ID, doc), "data-catalogid");
  if (productId) product.product_id = productId;
  const description = textOf(DESCRIPTION_FULL, doc) ?? textOf(DESCRIPTION_SHORT, doc);
  if (description) product.description = description;

  const specs = readSpecs(all(SPEC_ROWS, doc));
  if (Object.keys(specs).length) product.specs = specs;
  const viewer = first(IMAGE_VIEWER, doc);
  const images = viewer ? readImages(viewer) : [];
  if (images.length) product.images = images;

  const header = titleEl.parent?.parent;
  if (header) {
    const rating = parseRating(attr(first(RATING, header), "aria-label"));
    if (rating !== undefined) product.rating = rating;
    const reviews = parseCount(text(first(REVIEWS_LINK, header)));
    if (reviews !== undefined) product.reviews = reviews;
  }

  const prices = unique(all(HEADLINE_PRICE, doc).map((e) => text(e)));
  if (prices.length) product.prices = prices;
  const extensions = all(EXTENSIONS, doc).map((e) => text(e)).filter(Boolean);
  if (extensions.length) product.extensions = extensions;
  const highlights = all(HIGHLIGHTS, doc).map((e) => text(e)).filter(Boolean);
  if (highlights.length) product.highlights = highlights;
  return { product_results: product };
}

function readSpecs(rows: Element[]): Record<string, string> {
  const specs: Record<string, string> = {};
  for (const row of rows) {
    const cells = row.children.filter((c): c is Element => c.type === "tag" && c.name === "td");
    if (cells.length !== 2) continue;
    const name = text(cells[0]);
    const value = text(cells[1]);
    if (name && value && !(name in specs)) specs[name] = value;
  }
  return specs;
}

function readImages(viewer: Element): string[] {
  const zoomed = all(ZOOMED_IMAGES, viewer)
    .map((e) => attr(e, "style")?.match(CSS_URL)?.[2])
    .filter(isHttpUrl);
  return unique(zoomed.length ? zoomed : all(VIEWER_IMAGES, viewer).map((e) => attr(e, "src")).filter(isHttpUrl));
}

/** Saved pages point images at local files (`./page_files/…`); only real URLs are images. */
function isHttpUrl(u: string | undefined): u is string {
  return Boolean(u && /^https?:\/\//i.test(u));
}

function unique(values: string[]): string[] {
  return [...new Set(values.filter(Boolean))];
}
