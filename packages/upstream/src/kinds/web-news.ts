/** News: the news tab of the results search. */
import { parseNews } from "../parsers/news.js";
import { filled, type UpstreamKind } from "./kind.js";
import { searchTarget } from "./url-forms.js";

export const webNews = {
  url: (params, form, ctx) => searchTarget(params, form, ctx, { tab: { modern: [["tbm", "nws"]], basic: [["tbm", "nws"]] } }),
  parse: parseNews,
  coverage: {
    /** Every captured page reads 1.00, and a page with half its items in markup the parser does not know about 0.5. */
    threshold: 0.7,
    region: [["rso"], ["search"], ["main"]],
  },
  hasContent: (b) => filled(b.news_results),
  empty: () => ({ news_results: [] }),
} as const satisfies UpstreamKind<"web-news">;
