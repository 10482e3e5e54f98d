/**
 * A live job answered from the result cache by the API itself (packages/store/src/cache.ts): no
 * queue, no worker, no upstream. The job is created completed in one step, billed the cache-hit
 * price and written to the ledger as a cache hit, so the answer comes in milliseconds. Jobs on the
 * other queues are looked up by the worker that takes them (their postbacks go out from there).
 */
import { ApiError, pendingJob } from "@serp/shared";
import { cacheKeyOf, resultFromCache, type Created, type IdempotencyClaim, type JobRecord, type JobStore, type NewJob, type ResultCache } from "@serp/store";

export interface CacheHitDeps {
  jobs: JobStore;
  cache: ResultCache;
  /** CACHE_HIT_CREDITS: what a job answered from the cache costs. */
  hitCredits: number;
}

/**
 * The record of `job` answered from the cache, or null when the cache has no result young enough
 * (then the job runs as any other). Refusals are thrown as the submission's own (402, 401); an
 * idempotency `claim` held already is answered as the creation script says (a replay, a reused key).
 */
export async function answerFromCache(
  deps: CacheHitDeps,
  job: NewJob,
  startedMs: number,
  claim?: IdempotencyClaim,
): Promise<{ record: JobRecord } | { claimHeld: Created<"replay" | "key_reused"> } | null> {
  const maxAge = job.cacheMaxAgeSeconds ?? 0;
  const entry = await deps.cache.get(deps.cache.keyOf(job.endpoint, job.params, job.accountId), maxAge);
  if (!entry) return null;
  const result = resultFromCache(entry, job.endpoint, job.params);
  const completedAt = new Date().toISOString();
  const latencyMs = Math.round(performance.now() - startedMs);
  const created = await deps.jobs.createCached(
    job,
    { credits: deps.hitCredits, latencyMs, result, upstreamUrl: entry.upstreamUrl, completedAt, from: entry.jobId },
    claim,
  );
  const { outcome } = created;
  if (outcome === "replay" || outcome === "key_reused") return { claimHeld: { ...created, outcome } };
  if (outcome === "insufficient_credits") throw new ApiError("insufficient_credits", `Not enough credits: a cached result costs ${deps.hitCredits} available credit`);
  if (outcome === "no_account") throw new ApiError("unauthorized", "The account of this key no longer exists");
  const record: JobRecord = {
    job: { ...pendingJob(job), status: "completed", credits: deps.hitCredits, latencyMs, completedAt, cacheMaxAgeSeconds: maxAge, cacheHit: true },
    accountId: job.accountId,
    result,
    upstreamUrl: entry.upstreamUrl,
    cachedFrom: entry.jobId,
  };
  return { record };
}
