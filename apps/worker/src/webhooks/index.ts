import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { Metrics } from "@serp/metrics";
import { WEBHOOK_QUEUE, WEBHOOK_RETRY_DELAYS_MS, WebhookStore, type JobStore, type KeySpace, type QueueHost } from "@serp/store";
import { createTargetAgents } from "./agent.js";
import { createWebhookEnqueuer } from "./enqueue.js";
import type { WorkerEnv } from "../env.js";
import { FairShare } from "../fair-share.js";
import { createWebhookProcessor } from "./processor.js";
import { webhookBackoff } from "./schedule.js";

export { TargetRefusedError, createTargetAgents } from "./agent.js";
export { buildMessage } from "./message.js";
export { parseRetryAfter, retryDelayMs } from "./schedule.js";
export { send } from "./send.js";

/**
 * The settings delivery reads (env.ts): WEBHOOK_WORKER (deliver in this process, or only enqueue),
 * WEBHOOK_ALLOW_PRIVATE_TARGETS, WEBHOOK_TIMEOUT_MS, WEBHOOK_CONCURRENCY, WEBHOOK_RETRY_DELAYS_MS and
 * the account share of the slots, WORKER_ACCOUNT_SHARE.
 */
export type WebhookEnv = Pick<
  WorkerEnv,
  "WEBHOOK_WORKER" | "WEBHOOK_ALLOW_PRIVATE_TARGETS" | "WEBHOOK_TIMEOUT_MS" | "WEBHOOK_CONCURRENCY" | "WEBHOOK_RETRY_DELAYS_MS" | "WORKER_ACCOUNT_SHARE"
>;

export interface WebhookDeps {
  /** The worker's store connection, shared by the producer side. */
  store: Redis;
  /** Where the runtime's queues live (the delivery worker's connection and closers). */
  host: QueueHost;
  keys: KeySpace;
  jobs: JobStore;
  retentionSeconds: number;
  logger: Logger;
  metrics?: Metrics;
}

/**
 * Webhook delivery for a worker process: the onFinal enqueuer, and (unless `serve: false`) a
 * worker on the webhooks queue with the retry schedule as its backoff strategy.
 */
export async function startWebhooks(d: WebhookDeps, env: WebhookEnv) {
  const retryDelaysMs = env.WEBHOOK_RETRY_DELAYS_MS ?? WEBHOOK_RETRY_DELAYS_MS;
  const webhooks = new WebhookStore(d.store, d.keys, d.retentionSeconds);
  const queue = WEBHOOK_QUEUE.open(d.host, d.store);
  // Attempts follow this process's retry schedule.
  const enqueue = createWebhookEnqueuer({ jobs: d.jobs, webhooks, queue, attempts: retryDelaysMs.length + 1 });
  if (!env.WEBHOOK_WORKER) return { enqueue, webhooks, worker: undefined };

  const concurrency = env.WEBHOOK_CONCURRENCY;
  const share = env.WORKER_ACCOUNT_SHARE;
  const processor = createWebhookProcessor({
    jobs: d.jobs,
    webhooks,
    agents: createTargetAgents(env.WEBHOOK_ALLOW_PRIVATE_TARGETS),
    timeoutMs: env.WEBHOOK_TIMEOUT_MS,
    retryDelaysMs,
    logger: d.logger,
    metrics: d.metrics,
    // A dead receiver of one account holds at most this share of the slots, never all of them.
    fairShare: share < 1 ? new FairShare(concurrency, share) : undefined,
  });
  const worker = WEBHOOK_QUEUE.work(d.host, processor, {
    concurrency,
    // A delivery is at-least-once by design (same webhook-id each time); a crashed worker's
    // delivery is simply taken again.
    maxStalledCount: 3,
    settings: { backoffStrategy: webhookBackoff(retryDelaysMs) },
  });
  // A delivery failed for good without its last attempt recorded (an error outside the attempt,
  // such as Redis failing mid-way) must not stay pending forever. `finishedOn`: no retry follows.
  worker.on("failed", (job) => {
    if (!job?.finishedOn) return;
    const payload = WEBHOOK_QUEUE.payload.safeParse(job.data);
    if (payload.success) void webhooks.abandon(payload.data.jobId).catch(() => undefined);
  });
  await worker.waitUntilReady();
  return { enqueue, webhooks, worker };
}
export type Webhooks = Awaited<ReturnType<typeof startWebhooks>>;
