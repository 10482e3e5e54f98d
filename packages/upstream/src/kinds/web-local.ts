/** Local results: the places list of the results search, paged by 20. */
import { parseLocal } from "../parsers/local.js";
import { filled, type UpstreamKind } from "./kind.js";
import { searchTarget } from "./url-forms.js";

export const webLocal = {
  url: (params, form, ctx) => searchTarget(params, form, ctx, { tab: { modern: [["tbm", "lcl"]], basic: [["tbm", "lcl"]] }, pageSize: 20 }),
  parse: parseLocal,
  /** Not a list of outbound results: not measured. */
  coverage: { threshold: 0 },
  hasContent: (b) => filled(b.local_results),
  empty: () => ({ local_results: [] }),
} as const satisfies UpstreamKind<"web-local">;
