import type { Job as BullJob } from "bullmq";
import type { Logger } from "pino";
import {
  FINAL_STATUSES,
  JOB_ERRORS,
  buildResult,
  creditsFor,
  type BlocksByEndpoint,
  type Endpoint,
  type JobParams,
} from "@serp/shared";
import { QUEUE_CATALOG, type JobStore } from "@serp/store";

/** The upstream as the worker sees it: one call per attempt, throwing a classified failure. */
export interface Scraper {
  scrape<E extends Endpoint>(endpoint: E, params: JobParams, signal?: AbortSignal): Promise<{ blocks: BlocksByEndpoint[E]; upstreamUrl: string }>;
}

/** A failure the upstream explained: its customer text, and whether a later attempt may succeed. */
export interface ClassifiedFailure {
  message: string;
  kind: string;
  retryable: boolean;
}
export function isClassifiedFailure(err: unknown): err is ClassifiedFailure {
  return err instanceof Error && typeof (err as Partial<ClassifiedFailure>).retryable === "boolean" && typeof (err as Partial<ClassifiedFailure>).kind === "string";
}

/** Thrown to hand a job back to BullMQ for another attempt after a transient upstream fault. */
export class RetryLater extends Error {
  override readonly name = "RetryLater";
}

export interface ProcessorDeps {
  jobs: JobStore;
  scraper: Scraper;
  logger: Logger;
}

/**
 * Runs one scrape job: pending → processing → completed | failed, settling credits exactly once
 * through the job store. Transient upstream faults go back to pending while attempts remain.
 */
export function createProcessor({ jobs, scraper, logger }: ProcessorDeps) {
  return async (bullJob: BullJob, _token?: string, signal?: AbortSignal): Promise<void> => {
    const { jobId } = QUEUE_CATALOG.fast.payload.parse(bullJob.data);
    const log = logger.child({ jobId, queue: bullJob.queueName, attempt: bullJob.attemptsMade + 1 });
    const record = await jobs.get(jobId);
    if (!record || FINAL_STATUSES.includes(record.job.status)) {
      log.info({ status: record?.job.status ?? "gone" }, "job already final or expired; skipped");
      return;
    }
    if (!(await jobs.start(jobId, bullJob.attemptsMade + 1))) return;
    const { endpoint, params } = record.job;
    const started = performance.now();
    const settle = (status: "completed" | "failed", error: string | null, result: ReturnType<typeof buildResult> | null) =>
      jobs.finalize(jobId, record.accountId, {
        status,
        credits: creditsFor(endpoint, status, result ?? undefined),
        latencyMs: Math.round(performance.now() - started),
        error,
        result,
        completedAt: new Date().toISOString(),
      });

    try {
      const outcome = await scraper.scrape(endpoint, params, signal);
      const result = buildResult(endpoint, params, outcome.blocks);
      const changed = await settle("completed", null, result);
      log.info({ endpoint, latencyMs: Math.round(performance.now() - started), settled: changed }, "job completed");
    } catch (err) {
      const attemptsLeft = (bullJob.opts.attempts ?? 1) - (bullJob.attemptsMade + 1);
      if (isClassifiedFailure(err)) {
        if (err.retryable && attemptsLeft > 0 && (await jobs.requeue(jobId))) {
          log.warn({ kind: err.kind, attemptsLeft }, "transient upstream fault; retrying later");
          throw new RetryLater(err.message);
        }
        await settle("failed", err.message, null);
        log.warn({ kind: err.kind }, "job failed");
        return;
      }
      log.error({ err }, "job failed unexpectedly");
      await settle("failed", JOB_ERRORS.internal, null);
    }
  };
}
