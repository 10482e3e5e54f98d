import { oldestWaitingAgeSeconds } from "@serp/store";
import type { AppContext } from "../context.js";

/** The BullMQ states exported as serp_queue_jobs{queue,state}. */
export const QUEUE_STATES = ["waiting", "prioritized", "delayed", "active", "completed", "failed"] as const;
const READ_TIMEOUT_MS = 1_000;

/**
 * Reads each queue's job counts into the serp_queue_jobs gauge, and the age of its oldest waiting
 * job into serp_queue_oldest_waiting_age_seconds, at scrape time. While Redis cannot answer, both
 * are emptied rather than left showing stale figures, and the scrape still succeeds.
 */
export async function refreshQueueDepths(ctx: AppContext): Promise<void> {
  const gauge = ctx.metrics.queueDepth;
  const age = ctx.metrics.queueOldestAge;
  let timer: NodeJS.Timeout | undefined;
  try {
    const reads = Promise.all(
      Object.entries(ctx.queues).map(async ([queue, q]) => {
        const [byState, oldest] = await Promise.all([q.getJobCounts(...QUEUE_STATES), oldestWaitingAgeSeconds(ctx.redis, q)]);
        return [queue, byState, oldest] as const;
      }),
    );
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("queue counts timed out")), READ_TIMEOUT_MS)));
    const counts = await Promise.race([reads, timeout]);
    gauge.reset();
    age.reset();
    for (const [queue, byState, oldest] of counts) {
      for (const state of QUEUE_STATES) gauge.set({ queue, state }, byState[state] ?? 0);
      age.set({ queue }, oldest);
    }
  } catch (err) {
    gauge.reset();
    age.reset();
    ctx.logger.debug({ err: (err as Error).message }, "queue depths unavailable");
  } finally {
    clearTimeout(timer);
  }
}
