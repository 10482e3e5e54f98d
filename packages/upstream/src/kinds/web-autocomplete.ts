/** Autocomplete: the suggest endpoint's list, as JSON, JSONP or toolbar XML (HTML only when something went wrong). */
import type { PageClass } from "../classify.js";
import { parseAutocomplete } from "../parsers/autocomplete.js";
import { filled, type UpstreamKind } from "./kind.js";
import type { Query } from "./url-forms.js";

export const webAutocomplete = {
  url: (params, form) => {
    const client: Query = form === "complete-toolbar" ? [["output", "toolbar"]] : [["client", form === "complete-firefox" ? "firefox" : "chrome"]];
    return {
      path: "/complete/search",
      query: [...client, ["q", params.query], ["hl", params.language], ["gl", params.country]],
    };
  },
  parse: parseAutocomplete,
  /** Not HTML: not measured. */
  coverage: { threshold: 0 },
  hasContent: (b) => filled(b.suggestions),
  empty: () => ({ suggestions: [] }),
  classifyData: classifySuggestions,
} as const satisfies UpstreamKind<"web-autocomplete">;

/** Suggestion lists are a few KB: a body far larger is not one (and is not worth a JSON parse). */
const SUGGESTIONS_MAX = 64 * 1024;

/**
 * Suggestion responses: chrome/firefox JSON `[query, [suggestions…], …]`, gws-wiz JSON after an
 * XSSI guard `[[[suggestion, …]…], {…}]`, JSONP `fn([…])`, or toolbar XML `<toplevel>…</toplevel>`.
 * Empty list → no_results; a body that does not parse (cut short) or has another shape → upstream_error.
 */
function classifySuggestions(body: string): PageClass {
  const text = body.trim();
  if (text.startsWith("<")) {
    if (/<toplevel\s*\/>/.test(text)) return "no_results";
    if (!text.includes("</toplevel>")) return looksLikeXml(text) ? "upstream_error" : "results";
    return text.includes("<CompleteSuggestion") ? "results" : "no_results";
  }
  const json = text.replace(/^\)\]\}'/, ""); // the XSSI guard before gws-wiz JSON
  const start = json.search(/[[{]/);
  const end = Math.max(json.lastIndexOf("]"), json.lastIndexOf("}"));
  if (start < 0 || end < start) return "upstream_error";
  if (end - start > SUGGESTIONS_MAX) return "upstream_error";
  let data: unknown;
  try {
    data = JSON.parse(json.slice(start, end + 1));
  } catch {
    return "upstream_error";
  }
  // Any other JSON is not something the suggest endpoint answers.
  if (!Array.isArray(data)) return "upstream_error";
  const list = typeof data[0] === "string" ? data[1] : Array.isArray(data[0]) ? data[0] : undefined;
  if (!Array.isArray(list)) return "upstream_error";
  return list.length ? "results" : "no_results";
}

function looksLikeXml(body: string): boolean {
  return /^\s*<\?xml|^\s*<toplevel/.test(body);
}
