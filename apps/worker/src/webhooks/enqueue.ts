import { FINAL_STATUSES, type Job } from "@serp/shared";
import type { JobStore, Producer, WebhookStore, webhookPayloadSchema } from "@serp/store";

/**
 * The worker's onFinal hook for webhooks: when a fast or regular job with a postbackUrl is final,
 * opens its delivery record and enqueues one delivery under a fixed BullMQ id. Safe to call any
 * number of times: the fixed id makes a repeat a no-op while the queue holds the delivery, and the
 * record's final state (kept as long as the job) stops it after BullMQ has removed it. Errors are
 * thrown, so the scrape job is retried rather than its webhook lost.
 */
export function createWebhookEnqueuer(deps: { jobs: JobStore; webhooks: WebhookStore; queue: Producer<typeof webhookPayloadSchema>; attempts: number }) {
  return async (jobId: string, known?: Pick<Job, "queue" | "postbackUrl">): Promise<void> => {
    // Most jobs have no webhook: when the caller knows that, skip reading the record.
    if (known && (!known.postbackUrl || known.queue === "live")) return;
    const record = await deps.jobs.get(jobId, { result: false });
    if (!record?.job.postbackUrl || record.job.queue === "live" || !FINAL_STATUSES.includes(record.job.status)) return;
    if ((await deps.webhooks.begin(jobId, record.job.postbackUrl)) !== "pending") return;
    await deps.queue.enqueue({ jobId }, { attempts: deps.attempts });
  };
}
