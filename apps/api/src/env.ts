import { z } from "zod";
import { DEFAULT_MAX_JOBS_IN_FLIGHT, DEFAULT_RATE_LIMIT_PER_MINUTE } from "@serp/store";

const count = (fallback: number) => z.coerce.number().int().min(0).default(fallback);

/** Settings the API reads, validated once at boot (fails before a port is opened). */
const schema = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(3000),
  HOST: z.string().default("0.0.0.0"),
  REDIS_URL: z.string().url().default("redis://127.0.0.1:6379"),
  /**
   * PostgreSQL (postgres://…): the ledger, accounts and keys, and job history (npm start runs a private one when
   * unset). Unset here: no PostgreSQL, the ledger stays in its bounded Redis stream (tests and trials only).
   */
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, "DATABASE_URL is a postgres:// URL").optional(),
  /** Key prefix in Redis: isolates deployments sharing one Redis. */
  SERP_PREFIX: z.string().regex(/^[A-Za-z0-9_-]+$/).default("serp"),
  LIVE_DEADLINE_MS: z.coerce.number().int().min(100).default(60_000),
  JOB_RETENTION_SECONDS: z.coerce.number().int().min(1).default(7 * 24 * 3600),
  /** How long a final job stays whole in Redis; after it, only the archive in PostgreSQL holds it (until JOB_RETENTION_SECONDS). */
  JOB_HOT_SECONDS: z.coerce.number().int().min(1).default(3_600),
  /** Seconds a completed result answers identical searches from the result cache; 0 turns the cache off. Same on the API and the workers. */
  CACHE_TTL_SECONDS: z.coerce.number().int().min(0).default(3600),
  /** Credits a job answered from the cache costs: the spec's 1, or 0 for the model API's free cached searches. Same on the API and the workers. */
  CACHE_HIT_CREDITS: z.coerce.number().int().min(0).max(1).default(1),
  /** Seconds each completed job's upstream page is kept (the workers keep it; the API serves it); 0 keeps none. */
  RAW_HTML_RETENTION_SECONDS: z.coerce.number().int().min(0).default(3600),
  /** Largest JSON body accepted (body-parser size: `64kb`, `1mb`, bytes); larger → 413. */
  BODY_LIMIT: z.string().regex(/^\d+\s*(b|kb|mb)?$/i, "BODY_LIMIT is a size such as 64kb").default("64kb"),
  /** Largest request head (request line + headers) in bytes; Node answers 431 above it. */
  MAX_HEADER_SIZE: z.coerce.number().int().min(1024).max(1024 * 1024).default(16 * 1024),
  /** A client must finish sending its headers within this (slow-header clients are cut off). */
  HEADERS_TIMEOUT_MS: z.coerce.number().int().min(1000).default(15_000),
  /** A whole request (headers and body) must arrive within this; default: live deadline + 10 s, at least 30 s. */
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1000).optional(),
  /** Idle keep-alive connections are closed after this. */
  KEEP_ALIVE_TIMEOUT_MS: z.coerce.number().int().min(1000).default(5_000),
  /** Per-account requests per minute on the job-submitting routes, unless the account has an override; 0 = none. */
  RATE_LIMIT_PER_MINUTE: count(DEFAULT_RATE_LIMIT_PER_MINUTE),
  /** Per-account jobs pending or processing at once, unless the account has an override; 0 = none. */
  MAX_JOBS_IN_FLIGHT: count(DEFAULT_MAX_JOBS_IN_FLIGHT),
  API_KEY: z.string().regex(/^sk_[A-Za-z0-9_]{8,200}$/, "API_KEY must start with sk_").optional(),
  API_KEY_CREDITS: z.coerce.number().int().min(0).default(1000),
  GEOTARGETS_DIR: z.string().optional(),
  PUBLIC_BASE_URL: z.string().url().optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  /** Accept postback URLs on private networks (tests, private deployments); the workers have the same setting. */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: z.stringbool().default(false),
});
export type ApiEnv = Readonly<z.infer<typeof schema>>;

/**
 * A setting the API cannot start with. index.ts reports it as one line naming the setting and the
 * rule, and exits 1: the operator has something to fix, not a stack trace to read.
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(problems: string[]) {
    super(`Invalid API configuration: ${problems.join("; ")}`);
  }
}

export function loadEnv(source: NodeJS.ProcessEnv = process.env): ApiEnv {
  const parsed = schema.safeParse(source);
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`));
  return Object.freeze(parsed.data);
}

/**
 * Bounds on the HTTP server itself (header size, slow clients), for index.ts:
 * `http.createServer({ maxHeaderSize, connectionsCheckingInterval }, app)`, then the three
 * timeouts on the server.
 */
export function httpServerSettings(env: ApiEnv) {
  return {
    maxHeaderSize: env.MAX_HEADER_SIZE,
    // Node enforces headersTimeout and requestTimeout only when it sweeps its connections, every
    // 30 s by default: sweep each second so a slow client is cut off close to its deadline.
    connectionsCheckingInterval: 1_000,
    headersTimeout: env.HEADERS_TIMEOUT_MS,
    requestTimeout: env.REQUEST_TIMEOUT_MS ?? Math.max(env.LIVE_DEADLINE_MS + 10_000, 30_000),
    keepAliveTimeout: env.KEEP_ALIVE_TIMEOUT_MS,
  };
}
