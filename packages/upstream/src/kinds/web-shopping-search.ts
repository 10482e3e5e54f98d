/** Shopping search: the shopping tab of the results search. */
import { parseShopping } from "../parsers/shopping.js";
import { filled, type UpstreamKind } from "./kind.js";
import { searchTarget } from "./url-forms.js";

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
