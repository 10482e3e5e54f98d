/** Web search: the results page, on a desktop or (`device=mobile`) a phone. */
import { isJsonChunks, joinJsonChunks, parseWebSearch } from "../parsers/web/index.js";
import { filled, type UpstreamKind } from "./kind.js";
import { searchTarget } from "./url-forms.js";

export const webSearch = {
  url: (params, form, ctx) => searchTarget(params, form, ctx),
  /** A phone's page is asked for with a phone's recipes. */
  variants: [{ set: "web-search-mobile", when: (params) => params.device === "mobile" }],
  parse: parseWebSearch,
  coverage: {
    /**
     * Titled links: 34 of 43 captured results pages read 1.00; the others, mostly 2025–2026 desktop
     * pages, read 0.36–0.90, since they hold titled blocks the service does not return (short videos,
     * social posts, "explore brands"). The threshold sits below the lowest: it catches a page the
     * parsers barely understand. A page with half its results in unknown markup reads about half its
     * usual figure, which can still clear it: that shows as the histogram's shift, not as failed jobs
     * (README, "Pages understood only in part").
     */
    threshold: 0.3,
    /** The results column and the lower "more results" container (full pages); the basic page's `#main`. */
    region: [["rso", "botstuff", "bres"], ["main"]],
  },
  /** The progressive format: the page in JSON chunks. */
  wrapped: { test: isJsonChunks, page: joinJsonChunks },
  /** Anything but the result stats. */
  hasContent: (b) => Object.entries(b).some(([key, v]) => key !== "search_information" && filled(v)),
  empty: () => ({ organic_results: [] }),
} as const satisfies UpstreamKind<"web-search">;
