/**
 * Search suggestions (`web-autocomplete`) from the suggest endpoint (`/complete/search`). The body's
 * format depends on the `client`/`output` asked for, so it is recognised from the body itself:
 *
 * - `output=toolbar`: XML, `<toplevel><CompleteSuggestion><suggestion data="…"/>…`.
 * - `client=firefox`: JSON `[query, [s1, s2, …], …]`.
 * - `client=chrome`: the same, plus a metadata object holding `google:suggestrelevance`,
 *   `google:suggesttype` and `google:verbatimrelevance`, aligned with the suggestions by index.
 * - `client=gws-wiz` (and `psy-ab`): an XSSI guard `)]}'`, then JSON whose suggestion entries are
 *   `[html, kind, […]]` with `<b>` tags marking the completion.
 * - any of them as JSONP (`callback=fn`): `fn(…)`.
 *
 * Anything else (an HTML error page, a browser capture of the dropdown) is not a suggestion list:
 * the parser throws rather than answer "no suggestions".
 */
import type { AutocompleteBlocks, Suggestion } from "@serp/shared";
import { all, attr, first, parseHtml, text, textOf } from "../html/index.js";
import type { PageClass } from "../failures.js";
import { filled, type UpstreamKind } from "./kind.js";
import type { Query } from "./url-forms.js";

/** Autocomplete: the suggest endpoint's list, as JSON, JSONP or toolbar XML (HTML only when something went wrong). */
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

const TOOLBAR_ROOT = "toplevel";
const TOOLBAR_SUGGESTION = "completesuggestion > suggestion[data]";
const XSSI_GUARD = /^\)\]\}'?/;
/** `fn(…)`, `window.google.ac.h(…)`, optionally behind the `/**\/` some JSONP servers prepend. */
const JSONP = /^(?:\/\*\*\/\s*)?[A-Za-z_$][\w$.]*\s*\(([\s\S]*)\)\s*;?\s*$/;
const RELEVANCE = "google:suggestrelevance";
const TYPE = "google:suggesttype";
const VERBATIM = "google:verbatimrelevance";

export class NotASuggestResponseError extends Error {
  constructor(what: string) {
    super(`web-autocomplete: the body is not a suggest response (${what})`);
    this.name = "NotASuggestResponseError";
  }
}

export function parseAutocomplete(body: string): AutocompleteBlocks {
  const trimmed = body.replace(/^\uFEFF/, "").trim();
  if (trimmed.startsWith("<")) return parseToolbarXml(trimmed);
  return parseJsonSuggest(decodeJson(trimmed));
}

function parseToolbarXml(xml: string): AutocompleteBlocks {
  const doc = parseHtml(xml);
  if (!first(TOOLBAR_ROOT, doc)) {
    throw new NotASuggestResponseError(`markup without <toplevel>: ${textOf("title", doc) ?? "untitled"}`);
  }
  const values = all(TOOLBAR_SUGGESTION, doc).map((s) => attr(s, "data")?.trim());
  return { suggestions: values.filter((v): v is string => Boolean(v)).map((value) => ({ value })) };
}

function decodeJson(body: string): unknown {
  let json = body.replace(XSSI_GUARD, "").trim();
  const jsonp = JSONP.exec(json);
  if (jsonp?.[1] !== undefined) json = jsonp[1].trim();
  try {
    return JSON.parse(json);
  } catch {
    throw new NotASuggestResponseError(`unreadable: ${JSON.stringify(body.slice(0, 40))}`);
  }
}

function parseJsonSuggest(data: unknown): AutocompleteBlocks {
  if (!Array.isArray(data)) throw new NotASuggestResponseError("JSON that is not an array");
  // gws-wiz: [[entry, …], {meta}]
  if (Array.isArray(data[0])) return { suggestions: entryValues(data[0]).map((value) => ({ value })) };
  // firefox, chrome, psy-ab: [query, [entry, …], …, {meta}?]
  if (typeof data[0] === "string" && Array.isArray(data[1])) return withMetadata(data[1], data.slice(2));
  throw new NotASuggestResponseError("JSON array of an unknown shape");
}

/** Plain strings stay as they are; `[html, kind, …]` entries are markup and lose their tags. */
function entryValues(entries: unknown[]): string[] {
  return entries
    .map((e) => (typeof e === "string" ? e.trim() : Array.isArray(e) && typeof e[0] === "string" ? htmlText(e[0]) : ""))
    .filter(Boolean);
}

function withMetadata(entries: unknown[], rest: unknown[]): AutocompleteBlocks {
  const meta = rest.find(
    (r): r is Record<string, unknown> => typeof r === "object" && r !== null && !Array.isArray(r),
  );
  const relevance = Array.isArray(meta?.[RELEVANCE]) ? (meta[RELEVANCE] as unknown[]) : [];
  const types = Array.isArray(meta?.[TYPE]) ? (meta[TYPE] as unknown[]) : [];

  const suggestions: Suggestion[] = [];
  entries.forEach((entry, i) => {
    const [value] = entryValues([entry]);
    if (!value) return;
    const s: Suggestion = { value };
    const r = relevance[i];
    if (typeof r === "number") s.relevance = r;
    const t = types[i];
    if (typeof t === "string" && t) s.type = t;
    suggestions.push(s);
  });
  const verbatim = meta?.[VERBATIM];
  return typeof verbatim === "number" ? { suggestions, verbatim_relevance: verbatim } : { suggestions };
}

/** `coffee<b> near me</b>` → `coffee near me`; entities such as `&#39;` are decoded too. */
function htmlText(html: string): string {
  return /[<&]/.test(html) ? text(parseHtml(html)) : html.trim();
}
