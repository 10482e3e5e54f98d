/**
 * The result cache on the compatibility endpoint (packages/store/src/cache.ts): on by default, as
 * the model API's one-hour cache is, so an identical search within CACHE_TTL_SECONDS is answered
 * from it (search_metadata.cached: true, billed CACHE_HIT_CREDITS). `no_cache=true` fetches afresh,
 * and its result refreshes the cache. With CACHE_TTL_SECONDS=0 the cache is off and the job runs
 * as any other.
 */
import { CACHE_MAX_AGE_LIMIT_SECONDS } from "@serp/shared";
import type { CompatSearch } from "./params.js";

/** The job request's cache opt-in for a search here. */
export function cacheOption(s: CompatSearch, ttlSeconds: number): { cacheMaxAgeSeconds?: number } {
  if (ttlSeconds <= 0) return {};
  return { cacheMaxAgeSeconds: s.noCache ? 0 : Math.min(ttlSeconds, CACHE_MAX_AGE_LIMIT_SECONDS) };
}
