/** A product's details: its product page. */
import { parseProductInfo } from "../parsers/product-info.js";
import type { UpstreamKind } from "./kind.js";
import { productTarget } from "./url-forms.js";

export const webShoppingProductInfo = {
  url: (params, form) => productTarget(params, form, false),
  parse: parseProductInfo,
  /** Not a list of outbound results: not measured. */
  coverage: { threshold: 0 },
  /** A product page has a title; one without is not a product's. There is no "nothing matched" page. */
  hasContent: (b) => Boolean(b.product_results?.title),
} as const satisfies UpstreamKind<"web-shopping-product-info">;
