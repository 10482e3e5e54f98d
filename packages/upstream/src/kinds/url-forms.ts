/**
 * The URL forms several kinds share (reference/google-upstream.md §1): the results search at
 * `/search` and `/wml/search`, and the product pages. A kind's module picks one and gives its own
 * switches; `buildUrl` (urls.ts) puts the base in front and writes the query.
 */
import type { JobParams } from "@serp/shared";
import type { UrlForm } from "../profiles.js";
import type { UrlContext } from "../urls.js";
import { normalizeLocationName, uule } from "../uule.js";

/** Query pairs in order; a pair whose value is undefined or empty is left out. */
export type Query = [name: string, value: string | undefined][];

/** A request before the base URL: its path and query. */
export interface Target {
  path: string;
  query: Query;
}

/** A results search's switches: its tab (today's `udm` where the modern page has one, else the older `tbm`) and page size. */
export interface SearchSwitches {
  tab?: { modern: Query; basic: Query };
  /** Results per page the upstream pages by (`start` steps; the local list's is LOCAL_RESULTS_PER_PAGE, shared with its positions). Default 10. */
  pageSize?: number;
}

/** The results search in a profile's form: today's `/search`, the basic layout's, or the feature-phone `/wml/search`. */
export function searchTarget(params: JobParams, form: UrlForm, ctx: UrlContext, { tab, pageSize = 10 }: SearchSwitches = {}): Target {
  const page = params.page ?? 1;
  const start = page > 1 ? String((page - 1) * pageSize) : undefined;
  const common: Query = [
    ["q", params.query],
    ["hl", params.language],
    ["gl", params.country],
    ["uule", locationValue(params, ctx)],
    ["start", start],
  ];
  if (form === "wml") {
    // SearXNG's request: utf8 in and out (old layouts default to Latin-1 otherwise), sca_esv=1.
    return {
      path: "/wml/search",
      query: [...common, ...(tab?.basic ?? []), ["ie", "utf8"], ["oe", "utf8"], ["sca_esv", "1"]],
    };
  }
  if (form === "search-basic") {
    return { path: "/search", query: [...common, ...(tab?.basic ?? []), ["ie", "UTF-8"], ["oe", "UTF-8"]] };
  }
  return { path: "/search", query: [...common, ...(tab?.modern ?? [])] };
}

/** A product's page: the panel on `/search`, or the legacy `/shopping/product/<id>` (with `/online` for its sellers). */
export function productTarget(params: JobParams, form: UrlForm, sellers: boolean): Target {
  const id = params.product_id ?? "";
  const lang: Query = [
    ["hl", params.language],
    ["gl", params.country],
  ];
  if (form === "product-legacy") {
    const path = `/shopping/product/${encodeURIComponent(id)}${sellers ? "/online" : ""}`;
    return { path, query: lang };
  }
  return {
    path: "/search",
    query: [["ibp", "oshop"], ["q", id], ["prds", `catalogid:${id},pvt:hg`], ...lang],
  };
}

/** A raw `uule` goes as is; a `location` is encoded from its canonical name. */
function locationValue(params: JobParams, ctx: UrlContext): string | undefined {
  if (params.uule) return params.uule;
  if (!params.location) return undefined;
  return (ctx.uuleFor ?? ((name: string) => uule(normalizeLocationName(name))))(params.location);
}
