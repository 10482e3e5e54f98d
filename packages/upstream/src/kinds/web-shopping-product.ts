/** A product's sellers: its product page's online offers. */
import { parseSellers } from "../parsers/product-sellers.js";
import { filled, type UpstreamKind } from "./kind.js";
import { productTarget } from "./url-forms.js";

export const webShoppingProduct = {
  url: (params, form) => productTarget(params, form, true),
  parse: parseSellers,
  /** Not a list of outbound results: not measured. */
  coverage: { threshold: 0 },
  hasContent: (b) => filled(b.sellers),
  empty: () => ({ sellers: [] }),
} as const satisfies UpstreamKind<"web-shopping-product">;
