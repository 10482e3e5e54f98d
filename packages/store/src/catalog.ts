import { createHash } from "node:crypto";
import type { JobsOptions } from "bullmq";
import { z } from "zod";
import type { Redis } from "ioredis";
import { ENDPOINTS, QUEUES, jobIdSchema, type Endpoint, type Job, type JobParams, type QueueName } from "@serp/shared";
import { defineQueue, type Producer, type ProducerHost, type QueueDefinition } from "./queues.js";

/**
 * The SHA-256 (hex) of a job's params written with their members in a fixed order: what a live
 * job's queue entry and its record are compared by, whatever order either wrote them in.
 */
export function paramsHashOf(params: JobParams): string {
  const ordered = Object.fromEntries(Object.entries(params).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  return createHash("sha256").update(JSON.stringify(ordered)).digest("hex");
}

/**
 * What a scrape queue carries: the job's id; the job record holds the rest. A live job carries its
 * endpoint and params too, so the worker can start fetching while it marks the job started (one
 * Redis round trip less before the upstream is asked); the record stays the authority, and the
 * params hash is what the worker compares with it. Entries queued by a version that wrote no
 * endpoint or hash (their BullMQ name was the endpoint) still parse: they are fetched once the
 * record is read.
 */
export const scrapePayloadSchema = z
  .strictObject({
    jobId: jobIdSchema,
    endpoint: z.enum(ENDPOINTS).optional(),
    // Written by the API from validated params.
    params: z.custom<JobParams>((v) => typeof v === "object" && v !== null && !Array.isArray(v)).optional(),
    paramsHash: z.string().regex(/^[0-9a-f]{64}$/).optional(),
    /** The job's owner, so a worker can hold each account to its fair share of slots before reading the record. */
    accountId: z.string().min(1).max(64).optional(),
    /** The job opted in to the result cache: the worker looks it up (and waits for an identical fetch) before fetching. */
    useCache: z.literal(true).optional(),
  })
  .refine((p) => p.paramsHash === undefined || (p.params !== undefined && p.paramsHash === paramsHashOf(p.params)), {
    path: ["paramsHash"],
    message: "not the hash of params",
  });
export type ScrapePayload = z.infer<typeof scrapePayloadSchema>;

/** The params a live job's entry carries, with its endpoint and their hash (the worker's early fetch). */
export interface CarriedParams {
  endpoint: Endpoint;
  params: JobParams;
  paramsHash: string;
}

/**
 * A job's queue entry, built from the job alone (so a replay can enqueue a job whose first
 * submission never did): its id and owner; on the live queue its endpoint, params and their hash
 * too. `useCache`: the worker must ask the result cache before it fetches (no early fetch).
 */
export function scrapePayloadOf(job: Pick<Job, "id" | "endpoint" | "queue" | "params">, accountId: string, useCache = false): ScrapePayload {
  const payload: ScrapePayload =
    job.queue === "live"
      ? { jobId: job.id, endpoint: job.endpoint, params: job.params, paramsHash: paramsHashOf(job.params), accountId }
      : { jobId: job.id, accountId };
  if (useCache) payload.useCache = true;
  return payload;
}

/** The params an entry carries, when it carries all three (an entry an older version queued carries no endpoint or hash). */
export function carriedParams({ endpoint, params, paramsHash }: ScrapePayload): CarriedParams | undefined {
  return endpoint && params && paramsHash ? { endpoint, params, paramsHash } : undefined;
}

/** BullMQ's highest priority number; a lower number is taken first. */
const MAX_PRIORITY = 2_097_152;

/**
 * The queue priority of a job whose account has `inFlight` jobs pending or processing, this one
 * among them: an account's first job is taken before any account's second, so a flood of one
 * account's jobs never stands in front of another's single job (docs/FAIRNESS.md). Jobs of equal
 * priority keep their order.
 */
export function fairPriority(inFlight: number): number {
  return Math.min(MAX_PRIORITY, Math.max(1, Math.floor(inFlight)));
}

const keep = { removeOnComplete: { age: 3_600, count: 5_000 }, removeOnFail: { age: 86_400, count: 5_000 } };

/** A scrape queue: its BullMQ id is the job's id; BullMQ retries a job whose upstream fault was transient. */
const scrapeQueue = (name: QueueName, retries: Pick<JobsOptions, "attempts" | "backoff">) =>
  defineQueue({ name, payload: scrapePayloadSchema, jobOptions: { ...retries, ...keep }, jobId: (p) => p.jobId });

/** The three scrape queues, declared once (STYLE.md habit 5). A job's name is its endpoint. */
export const QUEUE_CATALOG: Record<QueueName, QueueDefinition<typeof scrapePayloadSchema>> = {
  // A live request waits for its answer: one quick retry at most, inside the live deadline.
  live: scrapeQueue("live", { attempts: 2, backoff: { type: "fixed", delay: 250 } }),
  fast: scrapeQueue("fast", { attempts: 4, backoff: { type: "exponential", delay: 1_000 } }),
  regular: scrapeQueue("regular", { attempts: 5, backoff: { type: "exponential", delay: 5_000 } }),
};

export type ScrapeProducers = Record<QueueName, Producer<typeof scrapePayloadSchema>>;

/** The producers of the three scrape queues, sharing `connection` (the API's). */
export function openScrapeQueues(host: ProducerHost, connection: Redis): ScrapeProducers {
  return Object.fromEntries(QUEUES.map((name) => [name, QUEUE_CATALOG[name].open(host, connection)])) as ScrapeProducers;
}

/** What the webhook queue carries: the id of the final job whose outcome is delivered. */
export const webhookPayloadSchema = z.strictObject({ jobId: jobIdSchema });
export type WebhookPayload = z.infer<typeof webhookPayloadSchema>;

/**
 * Delays before the 2nd, 3rd … attempt of a webhook delivery (DECISIONS.md, Webhooks): about
 * 23 hours in all, 10 attempts.
 */
export const WEBHOOK_RETRY_DELAYS_MS: readonly number[] = [
  5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 3 * 3_600_000, 6 * 3_600_000, 12 * 3_600_000,
];

/** The name of the custom backoff strategy the webhook worker implements. */
export const WEBHOOK_BACKOFF = "webhook";

/** One delivery per job: a fixed BullMQ id (and the Standard Webhooks `webhook-id`) derived from the job's. */
export const webhookDeliveryId = (jobId: string) => `wh_${jobId}`;

/**
 * The webhook delivery queue: its own workers, so a slow receiver never holds a scrape worker.
 * Attempts follow the retry schedule (a process with another schedule enqueues with its own
 * `attempts`). Finished deliveries stay a day, failed ones a week.
 */
export const WEBHOOK_QUEUE = defineQueue({
  name: "webhooks",
  payload: webhookPayloadSchema,
  jobName: "deliver",
  jobId: (p) => webhookDeliveryId(p.jobId),
  jobOptions: {
    attempts: WEBHOOK_RETRY_DELAYS_MS.length + 1,
    backoff: { type: WEBHOOK_BACKOFF },
    removeOnComplete: { age: 86_400, count: 10_000 },
    removeOnFail: { age: 7 * 86_400, count: 10_000 },
  },
});
