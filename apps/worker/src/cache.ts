/**
 * The result cache as a worker uses it (packages/store/src/cache.ts): before a cache-enabled job
 * fetches, its search is looked up, and on a miss claimed, in one round trip; while an identical
 * job is fetching it, this one waits for that fill instead of asking the upstream again. A fetched
 * result fills the cache; a failed fetch gives the claim up, so a waiting job fetches in its place.
 */
import type { Job, JobResult } from "@serp/shared";
import type { CacheEntry, ResultCache } from "@serp/store";

export interface WorkerCache {
  store: ResultCache;
  /** CACHE_HIT_CREDITS: what a job answered from the cache costs. */
  hitCredits: number;
}

/** What to do with the job's own fetch: fill the cache with its result, or give the search up. */
export interface Fill {
  done(result: JobResult, upstreamUrl: string): Promise<void>;
  abandon(): Promise<void>;
}

/**
 * `hit`: answer the job with this entry. Otherwise fetch, then `fill` (when the job uses the cache).
 * A job without cacheMaxAgeSeconds neither reads nor fills; with 0 it fetches afresh and fills.
 * `accountId` owns the job: under CACHE_SCOPE=account only its own searches answer it.
 */
export async function beforeFetch(cache: WorkerCache | undefined, job: Job, accountId: string): Promise<{ hit?: CacheEntry; fill?: Fill }> {
  const maxAge = job.cacheMaxAgeSeconds;
  if (!cache?.store.enabled || maxAge === undefined) return {};
  const { store } = cache;
  const key = store.keyOf(job.endpoint, job.params, accountId);
  const done = (result: JobResult, upstreamUrl: string) => store.fill(key, job.id, result, upstreamUrl);
  if (maxAge === 0) return { fill: { done, abandon: async () => undefined } };
  const found = await store.lookupOrClaim(key, job.id, maxAge);
  if (found.kind === "hit") return { hit: found.entry };
  // Claimed, or waited a whole fill in vain: either way this job fetches and its result fills the cache.
  return { fill: { done, abandon: () => store.release(key, job.id) } };
}
