import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { Metrics } from "@serp/metrics";
import { Closers, JOB_ERRORS, type QueueName } from "@serp/shared";
import { CacheFills, DEFAULT_JOB_HOT_SECONDS, DEFAULT_RAW_HTML_RETENTION_SECONDS, DEFAULT_RAW_PAGES_DIR, FolderPageBlobs, type PageBlobs, JobArchive, JobResults, JobStore, LedgerDrainer, QUEUE_CATALOG, openScrapeQueues, RawPageStore, ResultCache, type CacheScope, createRedis, type RedisTarget, openPostgres, keySpace, waitReady, type KeySpace, type QueueHost } from "@serp/store";
import { WORKER_DEFAULTS } from "./defaults.js";
import { FairShare } from "./fair-share.js";
import { RetryLater, createProcessor, type KnownJob, type Scraper } from "./processor.js";
import type { WorkerCache } from "./cache.js";
import { Sweeper, settleAbandoned, type SweeperOptions } from "./sweeper.js";
import { RawPageSweeper, type RawPageSweeperOptions } from "./raw-page-sweeper.js";
import { startWebhooks, type WebhookOptions } from "./webhooks/index.js";

export type { WebhookOptions };

export interface WorkerRuntimeOptions {
  /** REDIS_URL, or the Sentinel set (`redisTargetOf(env)`). */
  redisUrl: RedisTarget;
  /** PostgreSQL (DATABASE_URL), migrated in the background; this process drains the ledger stream into it. Unset: none. */
  databaseUrl?: string;
  prefix: string;
  queues: readonly QueueName[];
  concurrency: number;
  retentionSeconds: number;
  /** How long a final job stays whole in Redis once archived in PostgreSQL (JOB_HOT_SECONDS). Default 3600. */
  jobHotSeconds?: number;
  /** Seconds each completed job's upstream page is kept, compressed (RAW_HTML_RETENTION_SECONDS); 0 keeps none. Default 3600. */
  rawHtmlRetentionSeconds?: number;
  /** Where the pages' bytes go (openPageBlobs: RAW_PAGES_DIR or RAW_PAGES_S3_BUCKET), closed with the runtime. Default: the folder .raw-pages. */
  pageBlobs?: PageBlobs;
  /**
   * Where completed results go (openPageBlobs(env, "results") when JOB_RESULT_STORE=page-store),
   * closed with the runtime; kept JOB_RETENTION_SECONDS (`retentionSeconds`). Unset: in the job records.
   */
  resultBlobs?: PageBlobs;
  /** The sweeper of pages and results past their retention in the page store: its interval; false turns it off. */
  rawPageSweep?: RawPageSweeperOptions | false;
  scraper: Scraper;
  logger: Logger;
  /**
   * The result cache (CACHE_TTL_SECONDS, CACHE_HIT_CREDITS, CACHE_SCOPE; default 3600, 1 and account):
   * jobs that opted in are looked up before they fetch, and fill it once completed. ttlSeconds 0 turns it off.
   */
  cache?: { ttlSeconds: number; hitCredits: number; scope?: CacheScope };
  /** How long a job's lock lasts without renewal: a killed worker's job is retaken after this. */
  lockDurationMs?: number;
  /** Stalls (its worker died holding it) a job survives; one more fails it. Default 2. */
  maxStalledCount?: number;
  metrics?: Metrics;
  /** More follow-up when a job is final, after the webhook enqueue; see ProcessorDeps.onFinal. */
  onFinal?: (jobId: string, known?: KnownJob) => Promise<void>;
  /**
   * Webhook delivery (on by default): final jobs with a postbackUrl are enqueued on the webhooks
   * queue, and this process serves it unless `serve: false`. `false` turns both off.
   */
  webhooks?: WebhookOptions | false;
  /**
   * The share of this process's slots on each queue (scrape and webhook) one account may hold; its
   * other jobs wait a moment, so another account's job finds a free slot. Default 0.75; 1 turns
   * the cap off (a single-tenant deployment). See docs/FAIRNESS.md.
   */
  accountShare?: number;
  /** The sweeper of jobs never queued (apps/worker/src/sweeper.ts): its grace and interval; false turns it off. */
  sweep?: SweeperOptions | false;
}

/** BullMQ workers for the named queues, plus a watcher that settles jobs BullMQ gave up on. */
export async function createWorkerRuntime(o: WorkerRuntimeOptions) {
  const closers = new Closers();
  const keys = keySpace(o.prefix);
  const store = createRedis(o.redisUrl, "worker", "worker-store");
  store.on("error", (err) => o.logger.debug({ err: err.message }, "redis error"));
  closers.add("redis", () => store.quit().catch(() => store.disconnect()));
  await waitReady(store, 30_000);
  // Connected and migrated in the background (the first attempt is waited for): no job waits on
  // PostgreSQL, so the workers start without it; the ledger drains once it is reached.
  const pg = o.databaseUrl ? openPostgres(o.databaseUrl, "worker", { info: (msg) => o.logger.info(msg), warn: (msg) => o.logger.warn(msg) }) : undefined;
  if (pg) {
    closers.add("postgres", () => pg.end());
    await pg.firstAttempt;
  }
  // Settlements append to the ledger stream in Redis; this copies them into PostgreSQL (one process
  // at a time), so no job waits on PostgreSQL. Closed after the workers (added before them).
  // Archived with its ledger entry by the drainer; read from the archive past its hot window (webhooks).
  // Archived records leave Redis after their hot window: their results go from the store then too.
  const results = o.resultBlobs ? new JobResults(o.resultBlobs, o.retentionSeconds, pg ? (o.jobHotSeconds ?? DEFAULT_JOB_HOT_SECONDS) : undefined) : undefined;
  // Closed after the workers and the drainer, which read and write results until they stop.
  if (results) closers.add("result store", () => results.blobs.close());
  const archive = pg ? new JobArchive(pg, store, keys, o.jobHotSeconds ?? DEFAULT_JOB_HOT_SECONDS, o.retentionSeconds).readResultsFrom(results) : undefined;
  const ledger = pg ? new LedgerDrainer(store, keys, pg, { ...ledgerDrainerOptions(o), archive }).start() : undefined;
  if (ledger) closers.add("ledger drainer", () => ledger.stop());
  const purge = archive ? purgeArchive(archive, o.logger) : undefined;
  if (purge) closers.add("archive purge", () => clearInterval(purge));
  const jobs = new JobStore(store, keys, o.retentionSeconds).keepResultsIn(results);
  jobs.onResultNotStored = (jobId, err) => o.logger.warn({ jobId, err: err.message, where: results?.blobs.where }, "result not written to the result store; kept in the job record");
  if (archive) jobs.readFromArchive(archive);
  /** Where this process's queues live: each worker opens its own connection, closed with the runtime. */
  const host: QueueHost = {
    redisUrl: o.redisUrl,
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
          { store, host, keys, jobs, retentionSeconds: o.retentionSeconds, logger: o.logger, metrics: o.metrics },
          { accountShare: o.accountShare, ...o.webhooks },
        );
  const onFinal = async (jobId: string, known?: KnownJob) => {
    await webhooks?.enqueue(jobId, known);
    await o.onFinal?.(jobId, known);
  };
  const share = o.accountShare ?? WORKER_DEFAULTS.accountShare;
  const fairShare = share < 1 ? new FairShare(o.concurrency, share) : undefined;
  const blobs = o.pageBlobs ?? new FolderPageBlobs(DEFAULT_RAW_PAGES_DIR);
  // Before the scrape workers, so it closes after them (they keep pages until they stop).
  closers.add("page store", () => blobs.close());
  const rawPages = new RawPageStore(store, keys, blobs, o.rawHtmlRetentionSeconds ?? DEFAULT_RAW_HTML_RETENTION_SECONDS);
  const pageSweeper =
    o.rawPageSweep === false || (!rawPages.enabled && !results) ? undefined : new RawPageSweeper({ redis: store, keys, pages: rawPages, results: results && { store: results, jobs }, logger: o.logger }, o.rawPageSweep);
  if (pageSweeper) closers.add("raw page sweeper", () => pageSweeper.stop());
  const cache = await resultCache(o, keys, store, closers);
  const processor = createProcessor({ jobs, scraper: o.scraper, logger: o.logger, metrics: o.metrics, onFinal, fairShare, rawPages, cache });
  const lockDuration = o.lockDurationMs ?? WORKER_DEFAULTS.lockDurationMs;

  /**
   * A job BullMQ fails on its own (its processor threw on the last attempt, or it stalled more
   * than maxStalledCount times after crashes) must still become final, at 0 credits. BullMQ fails
   * it in the worker that handles it, whose own `failed` event brings it here: no process has to
   * read every queue event. The sweeper settles the jobs never queued the same way.
   */
  const settle = settleAbandoned({ jobs, logger: o.logger, metrics: o.metrics, onFinal });
  const settleGivenUp = (jobId: string, failedReason: string) =>
    settle(jobId, `given up by the queue: ${failedReason}`).catch((err: Error) => o.logger.warn({ jobId, err: err.message }, "given-up job not settled"));
  const sweeper = o.sweep === false ? undefined : sweeperOf(o, { redis: store, keys, jobs, host, settle });
  if (sweeper) closers.add("sweeper", () => sweeper.stop());

  const workers = o.queues.map((name) => {
    // Each queue's worker parses its jobs with that queue's own payload schema.
    const worker = QUEUE_CATALOG[name].work(host, processor, {
      concurrency: o.concurrency,
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

function ledgerDrainerOptions(o: WorkerRuntimeOptions) {
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
  o: WorkerRuntimeOptions,
  deps: { redis: Redis; keys: KeySpace; jobs: JobStore; host: QueueHost; settle: (jobId: string, why: string) => Promise<boolean> },
): Sweeper {
  const producers = openScrapeQueues(deps.host, deps.redis);
  const queues = Object.fromEntries(Object.entries(producers).map(([name, p]) => [name, p.queue])) as Record<QueueName, Queue>;
  return new Sweeper({ ...deps, queues, logger: o.logger, metrics: o.metrics }, o.sweep || {});
}

/** The result cache, with a subscription that wakes the jobs waiting for an identical job's fetch (none when off). */
async function resultCache(o: WorkerRuntimeOptions, keys: KeySpace, store: Redis, closers: Closers): Promise<WorkerCache | undefined> {
  const { ttlSeconds = 3600, hitCredits = 1, scope = "account" } = o.cache ?? {};
  if (ttlSeconds <= 0) return undefined;
  const subscriber = createRedis(o.redisUrl, "subscriber", "worker-cache-sub");
  subscriber.on("error", (err) => o.logger.debug({ err: err.message }, "redis cache subscriber error"));
  closers.add("redis cache subscriber", () => subscriber.quit().catch(() => subscriber.disconnect()));
  const fills = new CacheFills(subscriber, keys.cacheFilledChannel());
  await fills.start();
  return { store: new ResultCache(store, keys, { ttlSeconds, scope, fills }), hitCredits };
}
