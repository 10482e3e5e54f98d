import { z } from "zod";
import { loadConfig, metricsEnv, processEnv, QUEUES, type QueueName } from "@serp/shared";
import { checkRawPagesEnv, storeEnv } from "@serp/store";
import { checkUpstreamEnv, upstreamEnv } from "@serp/upstream";
import { SWEEPER_DEFAULTS } from "./sweeper.js";

const queueList = z
  .string()
  .transform((s) => s.split(",").map((q) => q.trim()).filter(Boolean))
  .pipe(z.array(z.enum(QUEUES)).min(1, "name at least one of live, fast, regular"));

/** The worker's own settings; the store's, the upstream's and LOG_LEVEL come from their packages' fragments. */
const workerEnv = z.object({
  /** Which queues this process serves, so live, fast and regular scale separately. */
  WORKER_QUEUES: queueList.default(["live", "fast", "regular"]),
  /** Jobs in flight per queue in this process (each mostly waits on the upstream). */
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(16),
  /**
   * The share of this process's slots per queue (scrape and webhook) one account may hold; its
   * other jobs wait a moment so another account finds a free slot (docs/FAIRNESS.md). 1: no cap.
   */
  WORKER_ACCOUNT_SHARE: z.coerce.number().gt(0).max(1).default(0.75),
  /** A job's lock without renewal: after a worker dies, its jobs are taken again after about this long. */
  WORKER_LOCK_MS: z.coerce.number().int().min(1_000).max(600_000).default(15_000),
  /** How long jobs in flight may take to finish after SIGTERM before they are handed back (empty: default). */
  WORKER_SHUTDOWN_TIMEOUT_MS: z.preprocess((v) => v || undefined, z.coerce.number().int().min(0).max(600_000).default(25_000)),
  /**
   * A job stored this long ago and never put on its queue (Redis went away between the two) is
   * settled as failed by the sweeper; a retry with its Idempotency-Key enqueues it before then.
   */
  JOB_SWEEP_GRACE_MS: z.coerce.number().int().min(1_000).max(86_400_000).default(SWEEPER_DEFAULTS.graceMs),
  /** Run the canary (one query per kind through every profile) this often; 0 or unset: never. */
  CANARY_INTERVAL_MS: z.coerce.number().int().min(0).default(0),
  /** How often this process publishes its breakers' states for `upstream status`. */
  UPSTREAM_STATUS_INTERVAL_MS: z.coerce.number().int().min(100).default(5_000),
  /** Liveness, readiness and /metrics (behind METRICS_TOKEN when set) on this port; unset: none. */
  HEALTH_PORT: z.coerce.number().int().min(0).max(65_535).optional(),
  /** The address HEALTH_PORT listens on: loopback unless told otherwise (0.0.0.0 in containers, docker-compose.yml). */
  HOST: z.string().min(1).default("127.0.0.1"),
  /** Serve the webhooks queue in this process (deliveries are enqueued either way). */
  WEBHOOK_WORKER: z.stringbool().default(true),
  /** A receiver that has not answered in this long counts as a failed delivery attempt. */
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
  /** Deliveries in flight in this process (each mostly waits on a receiver). */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(32),
  /** Comma-separated retry delays in ms, replacing the default schedule WEBHOOK_RETRY_DELAYS_MS of the store (for tests and drills). */
  WEBHOOK_RETRY_DELAYS_MS: z
    .string()
    .regex(/^\s*\d+(\s*,\s*\d+)*\s*$/, "must be comma-separated milliseconds, such as 5000,30000,120000")
    .transform((s) => s.split(",").map(Number))
    .optional(),
});

/** Settings a worker process reads, validated once at boot. */
const schema = z
  .object({ ...storeEnv.shape, ...upstreamEnv.shape, ...processEnv.shape, ...metricsEnv.shape, ...workerEnv.shape })
  .superRefine(checkRawPagesEnv)
  .superRefine(checkUpstreamEnv);
export type WorkerEnv = Readonly<z.infer<typeof schema>> & { WORKER_QUEUES: QueueName[] };

/** Throws ConfigError (`Invalid worker configuration: NAME: rule`), which index.ts logs as one line before exiting 78. */
export function loadEnv(source: NodeJS.ProcessEnv = process.env): WorkerEnv {
  return loadConfig(schema, "worker", source);
}
