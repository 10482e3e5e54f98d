/**
 * Graceful stop of a worker process's BullMQ workers: no new jobs are taken, jobs in flight finish;
 * past the deadline, the ones still running are handed back to the queue (moved to wait, lock
 * released) so another worker takes them at once instead of after the stalled-job check.
 * Nothing is billed twice either way: the job store settles each job exactly once, and a worker
 * that receives an already-final job skips it.
 */
import type { Job, Worker } from "bullmq";
import type { Logger } from "pino";

/** The jobs each worker is processing right now (with their lock tokens), kept from worker events. */
export function trackJobsInFlight(workers: readonly Worker[]): ReadonlyMap<string, Job> {
  const inFlight = new Map<string, Job>();
  const key = (job: Job) => `${job.queueName}:${job.id}`;
  for (const worker of workers) {
    worker.on("active", (job) => inFlight.set(key(job), job));
    worker.on("completed", (job) => inFlight.delete(key(job)));
    worker.on("failed", (job) => {
      if (job) inFlight.delete(key(job));
    });
  }
  return inFlight;
}

export type DrainOutcome = { finished: true } | { finished: false; handedBack: number; notHandedBack: number };

export async function drainWorkers(
  workers: readonly Worker[],
  inFlight: ReadonlyMap<string, Job>,
  deadlineMs: number,
  logger: Logger,
): Promise<DrainOutcome> {
  let timer: NodeJS.Timeout | undefined;
  const closed = Promise.all(workers.map((w) => w.close())).then(() => true);
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), deadlineMs)));
  const finished = await Promise.race([closed, late]);
  clearTimeout(timer);
  if (finished) return { finished: true };

  let handedBack = 0;
  let notHandedBack = 0;
  await Promise.all(
    [...inFlight.values()].map(async (job) => {
      try {
        await job.moveToWait(job.token);
        handedBack++;
        logger.info({ jobId: job.id, queue: job.queueName }, "job handed back to the queue");
      } catch (err) {
        // Its lock is gone (it just finished, or Redis is unreachable): the stalled-job check of
        // another worker moves it back once the lock expires.
        notHandedBack++;
        logger.warn({ jobId: job.id, queue: job.queueName, err: (err as Error).message }, "could not hand job back");
      }
    }),
  );
  return { finished: false, handedBack, notHandedBack };
}

/**
 * How long a worker process takes to stop after SIGTERM, from WORKER_SHUTDOWN_TIMEOUT_MS: jobs in
 * flight finish or are handed back by `handBackMs` (the deadline plus 2 s to hand them back and
 * close BullMQ), and the process is gone at `exitAfterMs` (5 s more for the closers after it). An
 * orchestrator's grace period must outlast `exitAfterMs`.
 */
export function workerShutdownBounds(shutdownTimeoutMs: number): { handBackMs: number; exitAfterMs: number } {
  const handBackMs = shutdownTimeoutMs + 2_000;
  return { handBackMs, exitAfterMs: handBackMs + 5_000 };
}
