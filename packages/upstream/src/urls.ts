/**
 * Upstream URLs: one builder per result kind, from the job's params and the profile's URL form
 * (reference/google-upstream.md §1). Every URL starts from the configured base (the real host by
 * default); a base such as `http://127.0.0.1:4010` keeps the path and query, so a replay server
 * sees `/search?…`, `/wml/search?…`, `/complete/search?…` and `/shopping/product/<id>[/online]`.
 */
import type { Endpoint, JobParams } from "@serp/shared";
import type { Profile, UrlForm } from "./profiles.js";
import { normalizeLocationName, uule } from "./uule.js";

export const DEFAULT_BASE_URL = "https://www.google.com";

type Query = [name: string, value: string | undefined][];
interface Target {
  path: string;
  query: Query;
}

export interface UrlContext {
  /** Replaces scheme, host and port of every upstream URL (and prefixes its path, if it has one). */
  baseUrl?: string;
  /** Canonical location name → uule; by default the name with its commas tidied, encoded. */
  uuleFor?: (location: string) => string;
}

/** Results per page the upstream pages by: `start` steps of 10, 20 on the local list. */
const PAGE_SIZE: Partial<Record<Endpoint, number>> = { "web-local": 20 };

/** Tab switches per kind: today's (`udm`) where the modern page has one, else the older `tbm`. */
const KIND: Partial<Record<Endpoint, { modern: Query; basic: Query }>> = {
  "web-news": { modern: [["tbm", "nws"]], basic: [["tbm", "nws"]] },
  "web-images": { modern: [["udm", "2"]], basic: [["tbm", "isch"]] },
  "web-local": { modern: [["tbm", "lcl"]], basic: [["tbm", "lcl"]] },
  "web-shopping-search": { modern: [["udm", "28"]], basic: [["tbm", "shop"]] },
};

export function buildUrl(endpoint: Endpoint, params: JobParams, profile: Pick<Profile, "form">, ctx: UrlContext = {}): string {
  const target = BUILDERS[endpoint](params, profile.form, ctx);
  return joinUrl(ctx.baseUrl ?? DEFAULT_BASE_URL, target);
}

type Builder = (params: JobParams, form: UrlForm, ctx: UrlContext) => Target;

const search =
  (endpoint: Endpoint): Builder =>
  (params, form, ctx) => {
    const page = params.page ?? 1;
    const start = page > 1 ? String((page - 1) * (PAGE_SIZE[endpoint] ?? 10)) : undefined;
    const kind = KIND[endpoint];
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
        query: [...common, ...(kind?.basic ?? []), ["ie", "utf8"], ["oe", "utf8"], ["sca_esv", "1"]],
      };
    }
    if (form === "search-basic") {
      return { path: "/search", query: [...common, ...(kind?.basic ?? []), ["ie", "UTF-8"], ["oe", "UTF-8"]] };
    }
    return { path: "/search", query: [...common, ...(kind?.modern ?? [])] };
  };

const product =
  (sellers: boolean): Builder =>
  (params, form) => {
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
  };

const autocomplete: Builder = (params, form) => {
  const client: Query =
    form === "complete-toolbar" ? [["output", "toolbar"]] : [["client", form === "complete-firefox" ? "firefox" : "chrome"]];
  return {
    path: "/complete/search",
    query: [...client, ["q", params.query], ["hl", params.language], ["gl", params.country]],
  };
};

const BUILDERS: Record<Endpoint, Builder> = {
  "web-search": search("web-search"),
  "web-news": search("web-news"),
  "web-images": search("web-images"),
  "web-local": search("web-local"),
  "web-shopping-search": search("web-shopping-search"),
  "web-shopping-product": product(true),
  "web-shopping-product-info": product(false),
  "web-autocomplete": autocomplete,
};

/** A raw `uule` goes as is; a `location` is encoded from its canonical name. */
function locationValue(params: JobParams, ctx: UrlContext): string | undefined {
  if (params.uule) return params.uule;
  if (!params.location) return undefined;
  return (ctx.uuleFor ?? ((name: string) => uule(normalizeLocationName(name))))(params.location);
}

/**
 * Query values are percent-encoded (a `+` inside a uule stays a plus sign on the other side);
 * spaces become `+`, and `:` `,` `/` stay readable as the upstream writes them (`prds=catalogid:1,pvt:hg`).
 */
function encodeValue(value: string): string {
  return encodeURIComponent(value)
    .replace(/%20/g, "+")
    .replace(/%3A/gi, ":")
    .replace(/%2C/gi, ",")
    .replace(/%2F/gi, "/");
}

function joinUrl(base: string, { path, query }: Target): string {
  const qs = query
    .filter((pair): pair is [string, string] => pair[1] !== undefined && pair[1] !== "")
    .map(([k, v]) => `${k}=${encodeValue(v)}`)
    .join("&");
  return `${base.replace(/\/+$/, "")}${path}${qs ? `?${qs}` : ""}`;
}
