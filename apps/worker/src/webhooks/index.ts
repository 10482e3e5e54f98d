import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { Metrics } from "@serp/metrics";
import { WEBHOOK_QUEUE, WEBHOOK_RETRY_DELAYS_MS, WebhookStore, type JobStore, type KeySpace, type QueueHost } from "@serp/store";
import { createTargetAgents } from "./agent.js";
import { createWebhookEnqueuer } from "./enqueue.js";
import { WORKER_DEFAULTS } from "../defaults.js";
import { FairShare } from "../fair-share.js";
import { createWebhookProcessor } from "./processor.js";
import { webhookBackoff } from "./schedule.js";

export { TargetRefusedError, createTargetAgents } from "./agent.js";
export { buildMessage } from "./message.js";
export { parseRetryAfter, retryDelayMs } from "./schedule.js";
export { send } from "./send.js";

export interface WebhookOptions {
  /** Deliver in this process (a worker on the webhooks queue). false: only enqueue. Default true. */
  serve?: boolean;
  /** Let deliveries reach loopback, private, link-local and CGNAT addresses (tests, private deployments). Default false. */
  allowPrivateTargets?: boolean;
  /** A receiver that has not answered in this long counts as a failed attempt. Default 15 s. */
  timeoutMs?: number;
  /** Deliveries in flight in this process. Default 32. */
  concurrency?: number;
  /** Delays before each retry; default WEBHOOK_RETRY_DELAYS_MS (tests pass a short schedule). */
  retryDelaysMs?: readonly number[];
  /** The share of the delivery slots one account may hold (see the runtime's accountShare). Default 0.75. */
  accountShare?: number;
}

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
export async function startWebhooks(d: WebhookDeps, o: WebhookOptions = {}) {
  const retryDelaysMs = o.retryDelaysMs ?? WEBHOOK_RETRY_DELAYS_MS;
  const webhooks = new WebhookStore(d.store, d.keys, d.retentionSeconds);
  const queue = WEBHOOK_QUEUE.open(d.host, d.store);
  // Attempts follow this process's retry schedule.
  const enqueue = createWebhookEnqueuer({ jobs: d.jobs, webhooks, queue, attempts: retryDelaysMs.length + 1 });
  if (o.serve === false) return { enqueue, webhooks, worker: undefined };

  const concurrency = o.concurrency ?? WORKER_DEFAULTS.webhookConcurrency;
  const share = o.accountShare ?? WORKER_DEFAULTS.accountShare;
  const processor = createWebhookProcessor({
    jobs: d.jobs,
    webhooks,
    agents: createTargetAgents(o.allowPrivateTargets ?? false),
    timeoutMs: o.timeoutMs ?? WORKER_DEFAULTS.webhookTimeoutMs,
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
