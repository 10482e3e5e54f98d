/**
 * Upstream URLs: each kind's module builds its request from the job's params and the profile's URL
 * form (reference/google-upstream.md §1; the shared forms are in kinds/url-forms.ts). Every URL starts
 * from the configured base (the real host by default); a base such as `http://127.0.0.1:4010` keeps
 * the path and query, so a replay server sees `/search?…`, `/wml/search?…`, `/complete/search?…` and
 * `/shopping/product/<id>[/online]`.
 */
import type { Endpoint, JobParams } from "@serp/shared";
import { kindOf } from "./kinds/index.js";
import type { Target } from "./kinds/url-forms.js";
import type { Profile } from "./profiles.js";
import { ENGINE_ORIGIN } from "./hosts.js";

export const DEFAULT_BASE_URL = ENGINE_ORIGIN;

export interface UrlContext {
  /** Replaces scheme, host and port of every upstream URL (and prefixes its path, if it has one). */
  baseUrl?: string;
  /** Canonical location name → uule; by default the name with its commas tidied, encoded. */
  uuleFor?: (location: string) => string;
}

export function buildUrl(endpoint: Endpoint, params: JobParams, profile: Pick<Profile, "form">, ctx: UrlContext = {}): string {
  return joinUrl(ctx.baseUrl ?? DEFAULT_BASE_URL, kindOf(endpoint).url(params, profile.form, ctx));
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
