/**
 * Deletes kept pages past RAW_HTML_RETENTION_SECONDS from the page store (the folder, or the bucket
 * before its lifecycle rule would), and completed results past JOB_RETENTION_SECONDS from the result
 * store beside it (job-results.ts): Redis forgets each record on its own, the bytes need this.
 * Every worker process runs one; a lock in Redis lets one process of the fleet sweep per interval.
 */
import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { JobResults, JobStore, KeySpace, RawPageStore } from "@serp/store";

export interface RawPageSweeperOptions {
  /** How often one process of the fleet sweeps. Default 60 s. */
  intervalMs?: number;
}

export const RAW_PAGE_SWEEP_DEFAULTS = { intervalMs: 60_000 } as const;

export class RawPageSweeper {
  private readonly intervalMs: number;
  private readonly token = randomBytes(8).toString("hex");
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<unknown> | undefined;

  constructor(
    private readonly deps: { redis: Redis; keys: KeySpace; pages: RawPageStore; results?: { store: JobResults; jobs: JobStore }; logger: Logger },
    options: RawPageSweeperOptions = {},
  ) {
    this.intervalMs = options.intervalMs ?? RAW_PAGE_SWEEP_DEFAULTS.intervalMs;
  }

  start(): this {
    this.timer = setInterval(() => {
      this.pass ??= this.sweepOnce()
        .catch((err: Error) => this.deps.logger.warn({ err: err.message, where: this.deps.pages.blobs.where }, "raw page sweep failed; next time"))
        .finally(() => (this.pass = undefined));
    }, this.intervalMs);
    this.timer.unref();
    return this;
  }

  /** Stops sweeping and waits for a pass under way (it deletes files or objects, then ends). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.pass;
  }

  /**
   * One pass when this process takes the fleet's lock: the pages and results deleted, or null when
   * another process holds it. Pages not kept (RAW_HTML_RETENTION_SECONDS=0): results only.
   */
  async sweepOnce(now = Date.now()): Promise<number | null> {
    const { redis, keys, pages, results, logger } = this.deps;
    if ((await redis.set(keys.rawSweepLock(), this.token, "PX", this.intervalMs, "NX")) !== "OK") return null;
    const deleted = pages.enabled ? await pages.sweep(now) : 0;
    if (deleted) logger.info({ deleted, where: pages.blobs.where }, "raw pages past their retention deleted");
    const gone = results ? await results.store.sweep(now, (locations) => results.jobs.resultsNamed(locations)) : 0;
    if (gone) logger.info({ deleted: gone, where: results!.store.blobs.where }, "results no job record names any more deleted");
    return deleted + gone;
  }
}
