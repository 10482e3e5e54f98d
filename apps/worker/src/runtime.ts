import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { Metrics } from "@serp/metrics";
import { Closers, JOB_ERRORS, type QueueName } from "@serp/shared";
import { CacheFills, JobArchive, JobStore, LedgerDrainer, QUEUE_CATALOG, openJobResults, openPageBlobs, openScrapeQueues, RawPageStore, ResultCache, createRedis, openPostgres, keySpace, redisTargetOf, waitReady, type KeySpace, type QueueHost, type RedisTarget } from "@serp/store";
import type { WorkerEnv } from "./env.js";
import { FairShare } from "./fair-share.js";
import { RetryLater, createProcessor, type KnownJob, type Scraper } from "./processor.js";
import type { WorkerCache } from "./cache.js";
import { Sweeper, settleAbandoned, type SweeperOptions } from "./sweeper.js";
import { RawPageSweeper, type RawPageSweeperOptions } from "./raw-page-sweeper.js";
import { startWebhooks } from "./webhooks/index.js";

/** What the runtime is given besides its settings. */
export interface WorkerRuntimeDeps {
  scraper: Scraper;
  logger: Logger;
  metrics?: Metrics;
  /** More follow-up when a job is final, after the webhook enqueue; see ProcessorDeps.onFinal. */
  onFinal?: (jobId: string, known?: KnownJob) => Promise<void>;
  /** Stalls (its worker died holding it) a job survives; one more fails it. Default 2. */
  maxStalledCount?: number;
  /** The sweeper of pages past their retention in the page store: its interval; false turns it off. */
  rawPageSweep?: RawPageSweeperOptions | false;
  /** The sweeper of jobs never queued (sweeper.ts): its interval and batch (its grace is JOB_SWEEP_GRACE_MS); false turns it off. */
  sweep?: SweeperOptions | false;
  /** false: no webhook delivery at all, not even enqueued (tests); else as WEBHOOK_* say. */
  webhooks?: false;
}

/**
 * BullMQ workers for the queues WORKER_QUEUES names, plus a watcher that settles jobs BullMQ gave up
 * on, all as the worker's parsed settings say (env.ts `loadEnv`): Redis and PostgreSQL, concurrency,
 * retention, the result cache (CACHE_TTL_SECONDS 0 turns it off), kept pages, locks, the account
 * share of slots (docs/FAIRNESS.md), the sweeper's grace and webhook delivery (WEBHOOK_*).
 */
export async function createWorkerRuntime(env: WorkerEnv, o: WorkerRuntimeDeps) {
  const closers = new Closers();
  const keys = keySpace(env.SERP_PREFIX);
  const redisUrl = redisTargetOf(env);
  const store = createRedis(redisUrl, "worker", "worker-store");
  store.on("error", (err) => o.logger.debug({ err: err.message }, "redis error"));
  closers.add("redis", () => store.quit().catch(() => store.disconnect()));
  await waitReady(store, 30_000);
  // Connected and migrated in the background (the first attempt is waited for): no job waits on
  // PostgreSQL, so the workers start without it; the ledger drains once it is reached.
  const pg = env.DATABASE_URL ? openPostgres(env.DATABASE_URL, "worker", { info: (msg) => o.logger.info(msg), warn: (msg) => o.logger.warn(msg) }) : undefined;
  if (pg) {
    closers.add("postgres", () => pg.end());
    await pg.firstAttempt;
  }
  // Settlements append to the ledger stream in Redis; this copies them into PostgreSQL (one process
  // at a time), so no job waits on PostgreSQL. Closed after the workers (added before them).
  // Archived with its ledger entry by the drainer; read from the archive past its hot window (webhooks).
  // Archived records leave Redis after their hot window: their results go from the store then too.
  const results = openJobResults(env, env.JOB_RETENTION_SECONDS, pg ? env.JOB_HOT_SECONDS : undefined);
  // Closed after the workers and the drainer, which read and write results until they stop.
  if (results) closers.add("result store", () => results.blobs.close());
  const archive = pg ? new JobArchive(pg, store, keys, env.JOB_HOT_SECONDS, env.JOB_RETENTION_SECONDS).readResultsFrom(results) : undefined;
  const ledger = pg ? new LedgerDrainer(store, keys, pg, { ...ledgerDrainerOptions(o), archive }).start() : undefined;
  if (ledger) closers.add("ledger drainer", () => ledger.stop());
  const purge = archive ? purgeArchive(archive, o.logger) : undefined;
  if (purge) closers.add("archive purge", () => clearInterval(purge));
  const jobs = new JobStore(store, keys, env.JOB_RETENTION_SECONDS).keepResultsIn(results);
  jobs.onResultNotStored = (jobId, err) => o.logger.warn({ jobId, err: err.message, where: results?.blobs.where }, "result not written to the result store; kept in the job record");
  if (archive) jobs.readFromArchive(archive);
  /** Where this process's queues live: each worker opens its own connection, closed with the runtime. */
  const host: QueueHost = {
    redisUrl,
    prefix: keys.bullPrefix,
    closers,
    onError: (err, { queue, side }) =>
      side === "worker" ? o.logger.warn({ err: err.message, queue }, "worker error") : o.logger.debug({ err: err.message, queue }, "queue error"),
  };
  // Before the scrape workers, so it closes after them (they enqueue deliveries until they stop).
  const webhooks =
    o.webhooks === false
      ? undefined
      : await startWebhooks(
          { store, host, keys, jobs, retentionSeconds: env.JOB_RETENTION_SECONDS, logger: o.logger, metrics: o.metrics },
          env,
        );
  const onFinal = async (jobId: string, known?: KnownJob) => {
    await webhooks?.enqueue(jobId, known);
    await o.onFinal?.(jobId, known);
  };
  const share = env.WORKER_ACCOUNT_SHARE;
  const fairShare = share < 1 ? new FairShare(env.WORKER_CONCURRENCY, share) : undefined;
  const blobs = openPageBlobs(env);
  // Before the scrape workers, so it closes after them (they keep pages until they stop).
  closers.add("page store", () => blobs.close());
  const rawPages = new RawPageStore(store, keys, blobs, env.RAW_HTML_RETENTION_SECONDS);
  const pageSweeper =
    o.rawPageSweep === false || (!rawPages.enabled && !results) ? undefined : new RawPageSweeper({ redis: store, keys, pages: rawPages, results: results && { store: results, jobs }, logger: o.logger }, o.rawPageSweep);
  if (pageSweeper) closers.add("raw page sweeper", () => pageSweeper.stop());
  const cache = await resultCache(env, o.logger, redisUrl, { keys, store, closers });
  const processor = createProcessor({ jobs, scraper: o.scraper, logger: o.logger, metrics: o.metrics, onFinal, fairShare, rawPages, cache });
  const lockDuration = env.WORKER_LOCK_MS;

  /**
   * A job BullMQ fails on its own (its processor threw on the last attempt, or it stalled more
   * than maxStalledCount times after crashes) must still become final, at 0 credits. BullMQ fails
   * it in the worker that handles it, whose own `failed` event brings it here: no process has to
   * read every queue event. The sweeper settles the jobs never queued the same way.
   */
  const settle = settleAbandoned({ jobs, logger: o.logger, metrics: o.metrics, onFinal });
  const settleGivenUp = (jobId: string, failedReason: string) =>
    settle(jobId, `given up by the queue: ${failedReason}`).catch((err: Error) => o.logger.warn({ jobId, err: err.message }, "given-up job not settled"));
  const sweeper = o.sweep === false ? undefined : sweeperOf(o, { graceMs: env.JOB_SWEEP_GRACE_MS, ...o.sweep }, { redis: store, keys, jobs, host, settle });
  if (sweeper) closers.add("sweeper", () => sweeper.stop());

  const workers = env.WORKER_QUEUES.map((name) => {
    // Each queue's worker parses its jobs with that queue's own payload schema.
    const worker = QUEUE_CATALOG[name].work(host, processor, {
      concurrency: env.WORKER_CONCURRENCY,
      lockDuration,
      stalledInterval: lockDuration,
      maxStalledCount: o.maxStalledCount ?? 2,
    });
    worker.on("failed", (job, err) => {
      if (!job) return;
      if (!(err instanceof RetryLater)) o.logger.warn({ jobId: job.id, err: err.message }, "bull job failed");
      // finishedOn is set only when BullMQ gave up on the job (no attempt left, or stalled too often).
      if (job.id && job.finishedOn) void settleGivenUp(job.id, err.message);
    });
    return worker;
  });
  await Promise.all(workers.map((w) => w.waitUntilReady()));
  sweeper?.start();
  pageSweeper?.start();
  return { workers, jobs, closers, store, keys, webhooks, pg, ledger, sweeper, rawPages, pageSweeper };
}

/** The drainer's state and delays into /metrics; its errors (PostgreSQL down) logged once per outage. */
/** Deletes archived jobs past their retention every few minutes (each process; a batch at a time). */
function purgeArchive(archive: JobArchive, logger: Logger): NodeJS.Timeout {
  const timer = setInterval(() => {
    archive
      .purgeExpired()
      .then((n) => n && logger.info({ deleted: n }, "archive: jobs past their retention deleted"))
      .catch((err: Error) => logger.debug({ err: err.message }, "archive purge failed; next time"));
  }, 5 * 60_000);
  timer.unref();
  return timer;
}

function ledgerDrainerOptions(o: WorkerRuntimeDeps) {
  let failing = false;
  return {
    onState: (s: { pending: number; lagSeconds: number; fillRatio: number; postgresUp: boolean }) => {
      o.metrics?.ledgerPending.set(s.pending);
      o.metrics?.ledgerLag.set(s.lagSeconds);
      o.metrics?.ledgerFill.set(s.fillRatio);
      o.metrics?.ledgerPostgresUp.set(s.postgresUp ? 1 : 0);
      if (s.postgresUp && failing) {
        failing = false;
        o.logger.info({ pending: s.pending }, "ledger drainer: PostgreSQL is back");
      }
    },
    onDrained: (delaysMs: number[]) => {
      for (const ms of delaysMs) o.metrics?.ledgerDrainDelay.observe(ms / 1_000);
    },
    onError: (err: Error) => {
      if (failing) return;
      failing = true;
      o.logger.warn({ err: err.message }, "ledger drainer failing (PostgreSQL down?): entries wait in the Redis stream");
    },
  };
}
export type WorkerRuntime = Awaited<ReturnType<typeof createWorkerRuntime>>;

/** The sweeper, reading every scrape queue (through producers on the runtime's connection) for the jobs it checks. */
function sweeperOf(
  o: WorkerRuntimeDeps,
  options: SweeperOptions,
  deps: { redis: Redis; keys: KeySpace; jobs: JobStore; host: QueueHost; settle: (jobId: string, why: string) => Promise<boolean> },
): Sweeper {
  const producers = openScrapeQueues(deps.host, deps.redis);
  const queues = Object.fromEntries(Object.entries(producers).map(([name, p]) => [name, p.queue])) as Record<QueueName, Queue>;
  return new Sweeper({ ...deps, queues, logger: o.logger, metrics: o.metrics }, options);
}

/** The result cache, with a subscription that wakes the jobs waiting for an identical job's fetch (none when off). */
async function resultCache(
  env: Pick<WorkerEnv, "CACHE_TTL_SECONDS" | "CACHE_HIT_CREDITS" | "CACHE_SCOPE">,
  logger: Logger,
  redisUrl: RedisTarget,
  { keys, store, closers }: { keys: KeySpace; store: Redis; closers: Closers },
): Promise<WorkerCache | undefined> {
  const { CACHE_TTL_SECONDS: ttlSeconds, CACHE_HIT_CREDITS: hitCredits, CACHE_SCOPE: scope } = env;
  if (ttlSeconds <= 0) return undefined;
  const subscriber = createRedis(redisUrl, "subscriber", "worker-cache-sub");
  subscriber.on("error", (err) => logger.debug({ err: err.message }, "redis cache subscriber error"));
  closers.add("redis cache subscriber", () => subscriber.quit().catch(() => subscriber.disconnect()));
  const fills = new CacheFills(subscriber, keys.cacheFilledChannel());
  await fills.start();
  return { store: new ResultCache(store, keys, { ttlSeconds, scope, fills }), hitCredits };
}
