/**
 * Links the endpoint writes (reference §3.10): always from the configured public base URL (never
 * the request's Host, which the official clients set to the reference API's host), query strings
 * sorted by name, spaces as `+`, and never the API key.
 */
import type { ApiEnv } from "../env.js";
import { linkParams, type CompatSearch } from "./params.js";

export function publicBaseUrl(env: Pick<ApiEnv, "PUBLIC_BASE_URL" | "PORT">): string {
  return (env.PUBLIC_BASE_URL ?? `http://127.0.0.1:${env.PORT}`).replace(/\/+$/, "");
}

/** `a=1&b=x+y`: names sorted, values percent-encoded with `+` for spaces. */
export function sortedQuery(params: Record<string, string>): string {
  return Object.keys(params)
    .sort()
    .map((k) => `${encode(k)}=${encode(params[k]!)}`)
    .join("&");
}

function encode(value: string): string {
  return encodeURIComponent(value).replace(/%20/g, "+");
}

export function searchLink(base: string, params: Record<string, string>): string {
  return `${base}/search.json?${sortedQuery(params)}`;
}

export function jsonEndpoint(base: string, id: string): string {
  return `${base}/searches/${id}.json`;
}

interface Pages {
  pagination: Record<string, unknown>;
  serpapi_pagination: Record<string, unknown>;
}

/**
 * `pagination` and `serpapi_pagination` for a kind that pages: links to every page the `start`
 * rule allows (10 of them) but the current one, with previous and next where they exist. Both
 * blocks point at this service; `pagination` carries the same links without the `_link` twins.
 */
export function paginationBlocks(s: CompatSearch, base: string): Pages | undefined {
  const paging = s.kind.paging;
  if (!paging) return undefined;
  const last = paging.max / paging.step + 1;
  const link = (page: number) => searchLink(base, linkParams(s, page));
  const others: Record<string, string> = {};
  for (let p = 1; p <= last; p++) if (p !== s.page) others[String(p)] = link(p);
  const previous = s.page > 1 ? link(s.page - 1) : undefined;
  const next = s.page < last ? link(s.page + 1) : undefined;
  return {
    pagination: {
      current: s.page,
      ...(previous ? { previous } : {}),
      ...(next ? { next } : {}),
      other_pages: others,
    },
    serpapi_pagination: {
      current: s.page,
      ...(previous ? { previous_link: previous, previous } : {}),
      ...(next ? { next_link: next, next } : {}),
      other_pages: others,
    },
  };
}
