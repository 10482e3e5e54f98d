import type { AppContext } from "../context.js";

/** The BullMQ states exported as serp_queue_jobs{queue,state}. */
export const QUEUE_STATES = ["waiting", "prioritized", "delayed", "active", "completed", "failed"] as const;
const READ_TIMEOUT_MS = 1_000;

/**
 * Reads each queue's job counts into the serp_queue_jobs gauge, at scrape time. While Redis cannot
 * answer, the gauge is emptied rather than left showing stale depths, and the scrape still succeeds.
 */
export async function refreshQueueDepths(ctx: AppContext): Promise<void> {
  const gauge = ctx.metrics.queueDepth;
  let timer: NodeJS.Timeout | undefined;
  try {
    const reads = Promise.all(
      Object.entries(ctx.queues).map(async ([queue, q]) => [queue, await q.getJobCounts(...QUEUE_STATES)] as const),
    );
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("queue counts timed out")), READ_TIMEOUT_MS)));
    const counts = await Promise.race([reads, timeout]);
    gauge.reset();
    for (const [queue, byState] of counts) {
      for (const state of QUEUE_STATES) gauge.set({ queue, state }, byState[state] ?? 0);
    }
  } catch (err) {
    gauge.reset();
    ctx.logger.debug({ err: (err as Error).message }, "queue depths unavailable");
  } finally {
    clearTimeout(timer);
  }
}
