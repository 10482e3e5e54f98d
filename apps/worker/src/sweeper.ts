/**
 * Jobs that can no longer run, settled as failed at 0 credits the way a job BullMQ gave up on is:
 * its reservation and in-flight slot released by FINALIZE, its refund in the ledger, its webhook
 * sent. The sweeper finds the ghosts: jobs stored by the API but never put on their queue (Redis
 * went away between the two round trips and no retry with their Idempotency-Key came to enqueue
 * them), which would otherwise never run, never fail and hold a credit for ever.
 */
import { randomBytes } from "node:crypto";
import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { Metrics } from "@serp/metrics";
import { FINAL_STATUSES, JOB_ERRORS, type QueueName } from "@serp/shared";
import type { JobStore, KeySpace } from "@serp/store";
import type { KnownJob } from "./processor.js";

export interface AbandonedDeps {
  jobs: JobStore;
  logger: Logger;
  metrics?: Metrics;
  /** The processor's follow-up of a final job (webhook delivery). */
  onFinal: (jobId: string, known?: KnownJob) => Promise<void>;
}

/**
 * Settles a job that will not run again as failed, 0 credits (exactly once: FINALIZE leaves a final
 * job as it is), then its follow-up. True when this call settled it; throws when Redis did not answer.
 */
export function settleAbandoned({ jobs, logger, metrics, onFinal }: AbandonedDeps) {
  return async (jobId: string, why: string): Promise<boolean> => {
    const record = await jobs.get(jobId).catch(() => null);
    if (!record || FINAL_STATUSES.includes(record.job.status)) return false;
    const { job } = record;
    const changed = await jobs.finalize(jobId, record.accountId, {
      status: "failed", credits: 0, latencyMs: null, error: JOB_ERRORS.internal, result: null, completedAt: new Date().toISOString(),
    });
    if (changed) {
      metrics?.jobsTotal.inc({ endpoint: job.endpoint, queue: job.queue, status: "failed" });
      logger.warn({ jobId, why, attempts: job.attempts }, "job cannot run; settled as failed");
    }
    await onFinal(jobId, job).catch((err: Error) => logger.warn({ jobId, err: err.message }, "onFinal failed"));
    return changed;
  };
}

export interface SweeperOptions {
  /** A job stored this long ago and still not on its queue is a ghost (its submission is long over). Default 60 s. */
  graceMs?: number;
  /** How often one process of the fleet sweeps. Default 10 s. */
  intervalMs?: number;
  /** Jobs checked per page; a pass reads pages until it has seen every job past the grace. */
  batch?: number;
}

export interface SweeperDeps {
  redis: Redis;
  keys: KeySpace;
  jobs: JobStore;
  /** Every scrape queue (not only the ones this process serves): where a job should be. */
  queues: Record<QueueName, Pick<Queue, "getJob">>;
  settle: (jobId: string, why: string) => Promise<boolean>;
  logger: Logger;
  metrics?: Metrics;
}

export const SWEEPER_DEFAULTS = { graceMs: 60_000, intervalMs: 10_000, batch: 200 } as const;
const MAX_PAGES = 50;

/**
 * Every worker process runs one; a lock in Redis lets one process of the fleet sweep per interval.
 * A pass longer than the interval may overlap another's: harmless, settlement is exactly once.
 */
export class Sweeper {
  private readonly o: Required<SweeperOptions>;
  private readonly token = randomBytes(8).toString("hex");
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<unknown> | undefined;

  constructor(
    private readonly deps: SweeperDeps,
    options: SweeperOptions = {},
  ) {
    this.o = { ...SWEEPER_DEFAULTS, ...options };
  }

  start(): this {
    this.timer = setInterval(() => {
      this.pass ??= this.sweepOnce()
        .catch((err: Error) => this.deps.logger.debug({ err: err.message }, "sweep failed; next time"))
        .finally(() => (this.pass = undefined));
    }, this.o.intervalMs);
    this.timer.unref();
    return this;
  }

  /** Stops sweeping; a pass under way (waiting for Redis, maybe) is left to end with the process. */
  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * One pass, when this process takes the fleet's lock: every job past the grace still not known to
   * be queued is checked; one on its queue leaves the list, one not there is settled. Returns the
   * jobs settled, or null when another process holds the lock.
   */
  async sweepOnce(): Promise<number | null> {
    const { redis, keys, jobs } = this.deps;
    if ((await redis.set(keys.sweepLock(), this.token, "PX", this.o.intervalMs, "NX")) !== "OK") return null;
    const before = Date.now() - this.o.graceMs;
    let swept = 0;
    // Each job checked leaves the list (queued or settled), so the next page starts after it; a
    // bounded number of pages, should one ever stay.
    for (let page = 0; page < MAX_PAGES; page++) {
      const ids = await jobs.unqueuedBefore(before, this.o.batch);
      for (const id of ids) if (await this.check(id)) swept++;
      if (ids.length < this.o.batch) break;
    }
    return swept;
  }

  /** A job past the grace: true when it was a ghost and this pass settled it. */
  private async check(id: string): Promise<boolean> {
    const { jobs, queues, settle, metrics } = this.deps;
    const place = await jobs.placeOf(id);
    if (!place || FINAL_STATUSES.includes(place.status) || (await queues[place.queue].getJob(id))) {
      // Expired, settled, or queued after all (the API's word of it lost): nothing to do.
      await jobs.queued(id);
      return false;
    }
    const settled = await settle(id, "never queued");
    // Settled by another way meanwhile (FINALIZE took it off the list either way).
    if (settled) metrics?.jobsSwept.inc({ queue: place.queue });
    else await jobs.queued(id);
    return settled;
  }
}
