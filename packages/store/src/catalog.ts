import type { JobsOptions } from "bullmq";
import { z } from "zod";
import type { QueueName } from "@serp/shared";

/** What a scrape queue carries: only the id. Params and results live in the job record. */
export const scrapePayloadSchema = z.strictObject({ jobId: z.string().regex(/^job_[0-9A-Z]{26}$/) });
export type ScrapePayload = z.infer<typeof scrapePayloadSchema>;

export interface QueueSpec {
  name: QueueName;
  payload: typeof scrapePayloadSchema;
  /** BullMQ retries a job whose upstream fault was transient, with exponential back-off. */
  jobOptions: JobsOptions;
}

const keep = { removeOnComplete: { age: 3_600, count: 5_000 }, removeOnFail: { age: 86_400, count: 5_000 } };

/** The three scrape queues, declared once (STYLE.md habit 5). */
export const QUEUE_CATALOG: Record<QueueName, QueueSpec> = {
  // A live request waits for its answer: one quick retry at most, inside the live deadline.
  live: { name: "live", payload: scrapePayloadSchema, jobOptions: { attempts: 2, backoff: { type: "fixed", delay: 250 }, ...keep } },
  fast: { name: "fast", payload: scrapePayloadSchema, jobOptions: { attempts: 4, backoff: { type: "exponential", delay: 1_000 }, ...keep } },
  regular: { name: "regular", payload: scrapePayloadSchema, jobOptions: { attempts: 5, backoff: { type: "exponential", delay: 5_000 }, ...keep } },
};
