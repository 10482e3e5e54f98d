import { Webhook } from "standardwebhooks";
import { jobResponse, webhookDeliveryId, type JobRecord } from "@serp/store";

export type WebhookEvent = "job.completed" | "job.failed";

export interface WebhookMessage {
  id: string;
  event: WebhookEvent;
  /** The exact bytes sent, and signed. */
  body: string;
  headers: Record<string, string>;
}

/**
 * The Standard Webhooks message for a final job: the body is what GET /v1/jobs/{id} answers
 * (`{job, result}`, result only when completed) plus `event`. `webhook-id` is derived from the job,
 * so it is the same on every retry (the receiver's idempotency key); the timestamp is this attempt's.
 */
export function buildMessage(record: JobRecord, secret: string, now: Date): WebhookMessage {
  const completed = record.job.status === "completed";
  const event: WebhookEvent = completed ? "job.completed" : "job.failed";
  const body = JSON.stringify({ event, ...jobResponse(record) });
  const id = webhookDeliveryId(record.job.id);
  return {
    id,
    event,
    body,
    headers: {
      "content-type": "application/json",
      "user-agent": "serp-webhooks/1",
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
      "webhook-signature": new Webhook(secret).sign(id, now, body),
    },
  };
}
