/**
 * Response shapes of the webhook routes: the routes' types, and ready for the OpenAPI document.
 * Checked against the store's own types below, so they cannot drift from what is served.
 */
import { z } from "zod";
import type { DeliveryAttempt, DeliveryState } from "@serp/store";

export const webhookSecretResponse = z.object({
  secret: z.string().regex(/^whsec_[A-Za-z0-9+/]+=*$/).meta({ description: "Signs every delivery (Standard Webhooks, HMAC-SHA256)" }),
});

export const deliveryAttemptSchema = z.object({
  at: z.iso.datetime().meta({ description: "When the attempt started" }),
  statusCode: z.int().nullable().meta({ description: "The receiver's HTTP status; null when none came (refused, timed out, unreachable)" }),
  error: z.string().nullable().meta({ description: "Why the attempt did not count as delivered; null when it did" }),
  durationMs: z.int(),
});

const DELIVERY_STATES = ["pending", "delivered", "failed", "gone", "refused"] as const satisfies readonly DeliveryState[];

export const deliveriesResponse = z.object({
  jobId: z.string(),
  url: z.string().nullable().meta({ description: "The job's postbackUrl" }),
  state: z.enum([...DELIVERY_STATES, "none"]).meta({
    description:
      "pending: waiting for an attempt; delivered: a 2xx came back; failed: every attempt of the schedule failed; " +
      "gone: the receiver answered 410; refused: the target is not allowed (no request sent); none: the job has no webhook",
  }),
  nextAttemptAt: z.iso.datetime().nullable().meta({ description: "When the next attempt is due, while pending after a failure" }),
  attempts: z.array(deliveryAttemptSchema).meta({ description: "Every attempt, oldest first" }),
});
export type DeliveriesResponse = z.output<typeof deliveriesResponse>;

// Drift checks: each way assignable.
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const same = <T extends true>() => undefined as unknown as T;
same<Mutual<z.output<typeof deliveryAttemptSchema>, DeliveryAttempt>>();
same<Mutual<(typeof DELIVERY_STATES)[number], DeliveryState>>();
