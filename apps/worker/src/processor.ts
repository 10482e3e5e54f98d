import type { Job as BullJob } from "bullmq";
import type { Logger } from "pino";
import { JOB_ERRORS, buildResult, creditsFor, type Job, type JobResult, type ParseCoverage } from "@serp/shared";
import type { Metrics } from "@serp/metrics";
import {
  carriedParams,
  paramsHashOf,
  resultFromCache,
  type CarriedParams,
  type Final,
  type JobStore,
  type QueueProcessor,
  type RawPageStore,
  type ScrapePayload,
  type scrapePayloadSchema,
} from "@serp/store";
import { UpstreamFailure, outcomeOf, type SkipRecord, type TryRecord, type Upstream } from "@serp/upstream";
import { beforeFetch, type WorkerCache } from "./cache.js";
import type { FairShare } from "./fair-share.js";

/** The upstream as the worker sees it: one call per attempt, throwing an UpstreamFailure that says why. */
export type Scraper = Pick<Upstream, "scrape">;

/** A scrape begun before the job was marked started, and how to drop it if the job is not to run. */
interface EarlyScrape {
  carried: CarriedParams;
  outcome: ReturnType<Scraper["scrape"]>;
  abandon(): void;
}

function scrapeEarly(scraper: Scraper, carried: CarriedParams, signal?: AbortSignal): EarlyScrape {
  const controller = new AbortController();
  const follow = () => controller.abort(signal?.reason);
  signal?.addEventListener("abort", follow, { once: true });
  const outcome = scraper.scrape(carried.endpoint, carried.params, controller.signal);
  // Awaited where it is used; an abandoned one must not surface as an unhandled rejection.
  outcome.catch(() => undefined).finally(() => signal?.removeEventListener("abort", follow));
  return { carried, outcome, abandon: () => controller.abort(new Error("job not started")) };
}

/** How a job ends, as `settle` takes it: the outcome, and for a completed job what made its result. */
interface Settlement {
  status: Final["status"];
  error?: string;
  result?: JobResult;
  upstreamUrl?: string;
  coverage?: ParseCoverage;
  /** Answered from the result cache: the job whose fetch filled it. */
  cachedFrom?: string;
  exit?: Final["exit"];
}

/** Thrown to hand a job back to BullMQ for another attempt after a transient upstream fault. */
export class RetryLater extends Error {
  override readonly name = "RetryLater";
}

export interface ProcessorDeps {
  jobs: JobStore;
  scraper: Scraper;
  logger: Logger;
  metrics?: Metrics;
  /**
   * Called whenever a job is seen final by this worker (just settled, or already final when a
   * redelivered job arrives), so follow-up work such as webhook delivery is enqueued even after
   * a crash between settling and enqueueing. Must be idempotent.
   */
  onFinal?: (jobId: string, known?: KnownJob) => Promise<void>;
  /** Holds each account to its share of this process's slots per queue (none: no cap). */
  fairShare?: FairShare;
  /** Where each completed job's upstream page is kept (none, or retention 0: not kept). */
  rawPages?: RawPageStore;
  /** The result cache, for jobs submitted with cacheMaxAgeSeconds (none: they fetch as any other). */
  cache?: WorkerCache;
}

/** What the processor already knows of a job, so a hook can skip reading the record again. */
export type KnownJob = Pick<Job, "queue" | "postbackUrl">;

/**
 * Runs one scrape job: pending → processing → completed | failed, settling credits exactly once
 * through the job store. Transient upstream faults go back to pending while attempts remain.
 */
export function createProcessor(deps: ProcessorDeps): QueueProcessor<typeof scrapePayloadSchema> {
  const { fairShare, metrics } = deps;
  const run = runJob(deps);
  // The payload comes parsed with the schema of the queue the job came from (QUEUE_CATALOG's `work`).
  return async (bullJob, payload, token, signal) => {
    // Before anything goes out: an account at its share of this process's slots waits a moment.
    const release = payload.accountId && fairShare ? fairShare.take(bullJob.queueName, payload.accountId) : () => undefined;
    if (!release) {
      metrics?.fairShareDeferrals.inc({ queue: bullJob.queueName });
      throw await fairShare!.defer(bullJob, token);
    }
    try {
      await run(bullJob, payload, signal);
    } finally {
      release();
    }
  };
}

function runJob({ jobs, scraper, logger, metrics, onFinal, rawPages, cache }: ProcessorDeps) {
  return async (bullJob: BullJob, payload: ScrapePayload, signal?: AbortSignal): Promise<void> => {
    const { jobId, useCache } = payload;
    const log = logger.child({ jobId, queue: bullJob.queueName, attempt: bullJob.attemptsMade + 1 });
    const started = performance.now();
    // A live job brings its endpoint and params: its page is fetched while the record is marked
    // started (unless the cache is to be asked first).
    const carried = useCache ? undefined : carriedParams(payload);
    const early = carried ? scrapeEarly(scraper, carried, signal) : undefined;
    let begun: Awaited<ReturnType<JobStore["start"]>>;
    try {
      // The upstream request goes out first: on the wire before the record is written to.
      if (early) await new Promise((sent) => setImmediate(sent));
      begun = await jobs.start(jobId, bullJob.attemptsMade + 1);
    } catch (err) {
      early?.abandon();
      throw err;
    }
    if (!begun?.started) {
      early?.abandon();
      log.info({ status: begun?.record.job.status ?? "gone" }, "job already final or expired; skipped");
      if (begun) await onFinal?.(jobId, begun.record.job);
      return;
    }
    const { record } = begun;
    const { endpoint, params } = record.job;
    // The record is the authority: a payload that disagrees with it is not used.
    let fetching = early;
    if (early && (early.carried.endpoint !== endpoint || early.carried.paramsHash !== paramsHashOf(params))) {
      early.abandon();
      fetching = undefined;
    }
    const countTries = (tries: readonly TryRecord[], skipped: readonly SkipRecord[]) => {
      for (const t of tries) {
        const outcome = outcomeOf(t.outcome);
        metrics?.upstreamResponses.inc({ endpoint, outcome: t.outcome });
        metrics?.upstreamTries.inc({ profile: t.profile, proxy: t.exitLabel ?? (t.proxy ? "*" : "direct"), outcome });
        if (t.pool) {
          metrics?.exitTries.inc({ pool: t.pool, exit: t.exitLabel ?? "*", outcome });
          if (t.bytes) metrics?.exitBytes.inc({ pool: t.pool }, t.bytes);
        }
        const c = t.coverage;
        if (c && c.layout !== "none") metrics?.parseCoverage.observe({ endpoint, layout: c.layout }, c.ratio);
        // Below the kind's threshold: the page was not taken. Said once per page, as a layout change shows first.
        if (c && t.outcome === "partial") {
          log.warn({ endpoint, layout: c.layout, ratio: c.ratio, links: c.links, accounted: c.accounted, cut: c.cut ?? false, rung: t.profile }, "results page only partly understood");
        }
      }
      for (const s of skipped) metrics?.upstreamSkips.inc({ profile: s.profile, breaker: s.key });
    };
    const settle = async ({ status, error, result, upstreamUrl, coverage, cachedFrom, exit }: Settlement) => {
      const latencyMs = Math.round(performance.now() - started);
      const credits = cachedFrom !== undefined ? (cache?.hitCredits ?? 1) : creditsFor(endpoint, status, result);
      const changed = await jobs.finalize(jobId, record.accountId, {
        status, credits, latencyMs, error: error ?? null, result: result ?? null, upstreamUrl, coverage, exit, completedAt: new Date().toISOString(),
        ...(cachedFrom !== undefined ? { cacheHit: { from: cachedFrom } } : {}),
      });
      if (changed) {
        const labels = { endpoint, queue: record.job.queue, status };
        metrics?.jobsTotal.inc(labels);
        metrics?.jobLatency.observe(labels, latencyMs / 1000);
        if (status === "completed") metrics?.creditsCharged.inc({ endpoint }, credits);
      }
      await onFinal?.(jobId, record.job);
      return changed;
    };

    // A job that opted in to the cache: answered from it, or waiting for an identical job's fetch.
    const cached = await beforeFetch(cache, record.job, record.accountId);
    if (cached.hit) {
      const { hit } = cached;
      const changed = await settle({ status: "completed", result: resultFromCache(hit, endpoint, params), upstreamUrl: hit.upstreamUrl ?? undefined, cachedFrom: hit.jobId });
      log.info({ endpoint, from: hit.jobId, settled: changed }, "job answered from the cache");
      return;
    }

    try {
      const outcome = await (fetching ? fetching.outcome : scraper.scrape(endpoint, params, signal));
      countTries(outcome.tries, outcome.skipped);
      const result = buildResult(endpoint, params, outcome.blocks, outcome.layout);
      // Identical jobs waiting for this fetch are woken by the fill, while this one settles.
      const filling = cached.fill?.done(result, outcome.upstreamUrl).catch((err: Error) => log.warn({ err: err.message }, "result not cached"));
      if (outcome.exit?.fallback) metrics?.exitCountryFallbacks.inc({ pool: outcome.exit.pool, country: outcome.exit.country });
      const changed = await settle({ status: "completed", result, upstreamUrl: outcome.upstreamUrl, coverage: outcome.coverage, exit: outcome.exit });
      // The page is compressed and kept once the job is settled: the live answer never waits on it, nor
      // shares the CPU with it. A reader that comes at once waits the few ms left (apps/api/src/jobs/raw-page.ts).
      const keeping = outcome.page && rawPages?.enabled ? rawPages.keep(jobId, endpoint, outcome.page).catch((err: Error) => log.warn({ err: err.message }, "raw page not kept")) : undefined;
      await Promise.all([keeping, filling]);
      log.info({ endpoint, latencyMs: Math.round(performance.now() - started), settled: changed }, "job completed");
    } catch (err) {
      // Never cached: jobs waiting for this fetch claim the search and fetch themselves (or this job's next attempt does).
      await cached.fill?.abandon().catch(() => undefined);
      const attemptsLeft = (bullJob.opts.attempts ?? 1) - (bullJob.attemptsMade + 1);
      if (err instanceof UpstreamFailure) {
        countTries(err.tries, err.skipped);
        if (err.retryable && attemptsLeft > 0 && (await jobs.requeue(jobId))) {
          log.warn({ kind: err.kind, attemptsLeft, rungs: err.rungs }, "transient upstream fault; retrying later");
          throw new RetryLater(err.message);
        }
        await settle({ status: "failed", error: err.message, coverage: err.coverage, exit: err.exit });
        log.warn({ kind: err.kind, rungs: err.rungs }, "job failed");
        return;
      }
      log.error({ err }, "job failed unexpectedly");
      await settle({ status: "failed", error: JOB_ERRORS.internal });
    }
  };
}
