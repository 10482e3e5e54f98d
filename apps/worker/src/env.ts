import { z } from "zod";
import { QUEUES, type QueueName } from "@serp/shared";
import type { WebhookOptions } from "./webhooks/index.js";

const queueList = z
  .string()
  .transform((s) => s.split(",").map((q) => q.trim()).filter(Boolean))
  .pipe(z.array(z.enum(QUEUES)).min(1, "name at least one of live, fast, regular"));

/** Settings a worker process reads, validated once at boot. */
const schema = z.object({
  REDIS_URL: z.string().url().default("redis://127.0.0.1:6379"),
  /**
   * PostgreSQL (postgres://…): the ledger, accounts and keys, and job history (npm start runs a private one when
   * unset). Unset here: no PostgreSQL, the ledger stays in its bounded Redis stream (tests and trials only).
   */
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, "DATABASE_URL is a postgres:// URL").optional(),
  SERP_PREFIX: z.string().regex(/^[A-Za-z0-9_-]+$/).default("serp"),
  /** Which queues this process serves, so live, fast and regular scale separately. */
  WORKER_QUEUES: queueList.default(["live", "fast", "regular"]),
  /** Jobs in flight per queue in this process (each mostly waits on the upstream). */
  WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(16),
  /**
   * The share of this process's slots per queue (scrape and webhook) one account may hold; its
   * other jobs wait a moment so another account finds a free slot (docs/FAIRNESS.md). 1: no cap.
   */
  WORKER_ACCOUNT_SHARE: z.coerce.number().gt(0).max(1).default(0.75),
  /** Threads parsing pages beside the event loop, so parsing never delays I/O; 0 parses on the event loop. */
  PARSE_THREADS: z.coerce.number().int().min(0).max(64).default(1),
  JOB_RETENTION_SECONDS: z.coerce.number().int().min(1).default(7 * 24 * 3600),
  /** How long a final job stays whole in Redis; after it, only the archive in PostgreSQL holds it (until JOB_RETENTION_SECONDS). */
  JOB_HOT_SECONDS: z.coerce.number().int().min(1).default(3_600),
  /** Seconds a completed result answers identical searches from the result cache; 0 turns the cache off. Same on the API and the workers. */
  CACHE_TTL_SECONDS: z.coerce.number().int().min(0).default(3600),
  /** Credits a job answered from the cache costs: the spec's 1, or 0 for the model API's free cached searches. Same on the API and the workers. */
  CACHE_HIT_CREDITS: z.coerce.number().int().min(0).max(1).default(1),
  /** Seconds each completed job's upstream page is kept, compressed, for its owner and `reparse`; 0 keeps none. */
  RAW_HTML_RETENTION_SECONDS: z.coerce.number().int().min(0).default(3600),
  /** A job's lock without renewal: after a worker dies, its jobs are taken again after about this long. */
  WORKER_LOCK_MS: z.coerce.number().int().min(1_000).max(600_000).default(15_000),
  UPSTREAM_BASE_URL: z.string().url().optional(),
  /** Comma-separated http(s) proxy URLs, rotated. */
  UPSTREAM_PROXIES: z.string().optional().transform((s) => (s ? s.split(",").map((p) => p.trim()).filter(Boolean) : [])),
  UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).default(15_000),
  GEOTARGETS_DIR: z.string().optional(),
  /** Run the canary (one query per kind through every profile) this often; 0 or unset: never. */
  CANARY_INTERVAL_MS: z.coerce.number().int().min(0).default(0),
  /** The product the canary asks the product kinds about (one the upstream knows). */
  CANARY_PRODUCT_ID: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).optional(),
  /** How often this process publishes its breakers' states for `upstream status`. */
  UPSTREAM_STATUS_INTERVAL_MS: z.coerce.number().int().min(100).default(5_000),
  HEALTH_PORT: z.coerce.number().int().min(0).max(65_535).optional(),
  /** Serve the webhooks queue in this process (deliveries are enqueued either way). */
  WEBHOOK_WORKER: z.stringbool().default(true),
  /** Let webhooks reach loopback, private, link-local and CGNAT addresses: tests and private deployments only. */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: z.stringbool().default(false),
  WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(15_000),
  /** Deliveries in flight in this process (each mostly waits on a receiver). */
  WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1_000).default(32),
  /** Comma-separated retry delays in ms, replacing the default schedule (for tests and drills). */
  WEBHOOK_RETRY_DELAYS_MS: z
    .string()
    .regex(/^\s*\d+(\s*,\s*\d+)*\s*$/, "must be comma-separated milliseconds, such as 5000,30000,120000")
    .transform((s) => s.split(",").map(Number))
    .optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});
export type WorkerEnv = Readonly<z.infer<typeof schema>> & { WORKER_QUEUES: QueueName[] };

/** The runtime's webhook options from the environment (createWorkerRuntime's `webhooks`). */
export function webhookOptions(env: WorkerEnv): WebhookOptions {
  return {
    serve: env.WEBHOOK_WORKER,
    allowPrivateTargets: env.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    timeoutMs: env.WEBHOOK_TIMEOUT_MS,
    concurrency: env.WEBHOOK_CONCURRENCY,
    ...(env.WEBHOOK_RETRY_DELAYS_MS ? { retryDelaysMs: env.WEBHOOK_RETRY_DELAYS_MS } : {}),
  };
}

/** A setting the worker refuses: one line naming each (index.ts logs it and exits 78, EX_CONFIG). */
export class WorkerConfigError extends Error {
  override readonly name = "WorkerConfigError";
  constructor(problems: string[]) {
    super(`Invalid worker configuration: ${problems.join("; ")}`);
  }
}

export function loadEnv(source: NodeJS.ProcessEnv = process.env): WorkerEnv {
  const parsed = schema.safeParse(source);
  if (!parsed.success) {
    throw new WorkerConfigError(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`));
  }
  return Object.freeze(parsed.data);
}
