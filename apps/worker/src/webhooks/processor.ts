import { UnrecoverableError, type Job as BullJob } from "bullmq";
import type { Logger } from "pino";
import type { Metrics } from "@serp/metrics";
import { FINAL_STATUSES } from "@serp/shared";
import { FINAL_DELIVERY_STATES, WEBHOOK_QUEUE, type DeliveryState, type JobRecord, type JobStore, type QueueProcessor, type WebhookStore, type webhookPayloadSchema } from "@serp/store";
import type { FairShare } from "../fair-share.js";
import type { TargetAgents } from "./agent.js";
import { buildMessage } from "./message.js";
import { DeliveryFailed, parseRetryAfter, retryDelayMs } from "./schedule.js";
import { send, type SendResult } from "./send.js";

export interface WebhookProcessorDeps {
  jobs: JobStore;
  webhooks: WebhookStore;
  agents: TargetAgents;
  timeoutMs: number;
  retryDelaysMs: readonly number[];
  logger: Logger;
  metrics?: Metrics;
  /** Holds each account to its share of the delivery slots (none: no cap). */
  fairShare?: FairShare;
}

/** How one attempt ended, in the terms of the delivery record and the metric. */
interface Verdict {
  outcome: "delivered" | "failed" | "gone" | "refused";
  statusCode: number | null;
  error: string | null;
  retryAfterMs: number | null;
}

function judge(r: SendResult): Verdict {
  if (r.kind === "error") return { outcome: r.refused ? "refused" : "failed", statusCode: null, error: r.error, retryAfterMs: null };
  const s = r.statusCode;
  if (s >= 200 && s < 300) return { outcome: "delivered", statusCode: s, error: null, retryAfterMs: null };
  if (s === 410) return { outcome: "gone", statusCode: s, error: "the receiver answered 410 Gone: no more attempts", retryAfterMs: null };
  const error = s >= 300 && s < 400 ? `the receiver answered ${s}: redirects are not followed` : `the receiver answered ${s}`;
  return { outcome: "failed", statusCode: s, error, retryAfterMs: parseRetryAfter(r.retryAfter) };
}

/**
 * Delivers one final job's webhook: one POST per BullMQ attempt, each recorded. A failed attempt
 * throws so BullMQ retries it on the webhook schedule; 410 and refused targets end it at once
 * (a refused address is not retried: the policy will not change, and repeated attempts to reach
 * an internal address are exactly what an attacker would want).
 */
export function createWebhookProcessor(d: WebhookProcessorDeps): QueueProcessor<typeof webhookPayloadSchema> {
  // The payload comes parsed with the webhook queue's schema (WEBHOOK_QUEUE's `work`).
  return async (bullJob, { jobId }, token) => {
    const attempt = bullJob.attemptsMade + 1;
    const log = d.logger.child({ jobId, queue: WEBHOOK_QUEUE.name, attempt });
    const record = await d.jobs.get(jobId);
    const url = record?.job.postbackUrl;
    if (!record || !url || !FINAL_STATUSES.includes(record.job.status)) {
      log.info({ status: record?.job.status ?? "gone" }, "webhook: nothing to deliver");
      return;
    }
    // One account's slow or dead receiver holds its share of the slots, never all of them.
    const release = d.fairShare ? d.fairShare.take(WEBHOOK_QUEUE.name, record.accountId) : () => undefined;
    if (!release) {
      d.metrics?.fairShareDeferrals.inc({ queue: WEBHOOK_QUEUE.name });
      throw await d.fairShare!.defer(bullJob, token);
    }
    try {
      await deliver(d, bullJob, record, url, log);
    } finally {
      release();
    }
  };
}

async function deliver(d: WebhookProcessorDeps, bullJob: BullJob, record: JobRecord, url: string, log: Logger): Promise<void> {
  const jobId = record.job.id;
  const attempt = bullJob.attemptsMade + 1;
  const state = await d.webhooks.state(jobId);
  if (state && FINAL_DELIVERY_STATES.includes(state)) {
    log.info({ state }, "webhook already settled; skipped");
    return;
  }

  const now = new Date();
  const message = buildMessage(record, await d.webhooks.secret(record.accountId), now);
  const target = safeUrl(url);
  const result: SendResult = target
    ? await send(target, message.body, message.headers, d.agents, d.timeoutMs)
    : { kind: "error", error: "refused: the postback URL is not an absolute http(s) URL", refused: true, durationMs: 0 };
  const v = judge(result);

  const last = attempt >= (bullJob.opts.attempts ?? 1);
  const next = v.outcome === "failed" && !last ? new Date(Date.now() + retryDelayMs(d.retryDelaysMs, attempt, v.retryAfterMs)) : null;
  const newState: DeliveryState = v.outcome === "failed" ? (last ? "failed" : "pending") : v.outcome;
  await d.webhooks.recordAttempt(
    jobId, url, { at: now.toISOString(), statusCode: v.statusCode, error: v.error, durationMs: result.durationMs }, newState, next,
  );
  d.metrics?.webhookDeliveries.inc({ outcome: v.outcome });
  const line = { event: message.event, outcome: v.outcome, statusCode: v.statusCode, error: v.error, durationMs: result.durationMs };

  switch (v.outcome) {
    case "delivered":
      log.info(line, "webhook delivered");
      return;
    case "gone":
    case "refused":
      log.warn(line, "webhook stopped");
      throw new UnrecoverableError(v.error ?? v.outcome);
    case "failed":
      log.warn({ ...line, nextAttemptAt: next?.toISOString() ?? null }, last ? "webhook failed; no attempts left" : "webhook attempt failed; will retry");
      throw new DeliveryFailed(v.error ?? "delivery failed", v.retryAfterMs);
  }
}

function safeUrl(raw: string): URL | null {
  try {
    const url = new URL(raw);
    return url.protocol === "http:" || url.protocol === "https:" ? url : null;
  } catch {
    return null;
  }
}
