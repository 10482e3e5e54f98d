import { z } from "zod";
import { loadConfig, metricsEnv, processEnv, tokenSetting } from "@serp/shared";
import { checkRawPagesEnv, limitsEnv, storeEnv } from "@serp/store";
import { locationsEnv } from "@serp/upstream";

/** The API's own settings; the store's, the limits, the location list and LOG_LEVEL come from their packages' fragments. */
const apiEnv = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(3000),
  /**
   * The address the API (and METRICS_PORT) listens on: loopback unless told otherwise, so a first
   * `npm start` is not reachable from the network; 0.0.0.0 (all) in containers (docker-compose.yml).
   */
  HOST: z.string().min(1).default("127.0.0.1"),
  LIVE_DEADLINE_MS: z.coerce.number().int().min(100).default(60_000),
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
  API_KEY: z.string().regex(/^sk_[A-Za-z0-9_]{8,200}$/, "API_KEY must start with sk_").optional(),
  API_KEY_CREDITS: z.coerce.number().int().min(0).default(1000),
  PUBLIC_BASE_URL: z.string().url().optional(),
  /** Opens /admin/queues and /admin/upstream to whoever presents it (Bearer, or basic auth password); unset: they are absent. */
  ADMIN_TOKEN: tokenSetting("ADMIN_TOKEN"),
  /** Serve /metrics on this port of its own (on HOST) instead of the API's; with METRICS_TOKEN, closed there too. */
  METRICS_PORT: z.preprocess((v) => v || undefined, z.coerce.number().int().min(0).max(65_535).optional()),
});

/** Settings the API reads, validated once at boot (fails before a port is opened). */
const schema = z
  .object({ ...storeEnv.shape, ...limitsEnv.shape, ...locationsEnv.shape, ...processEnv.shape, ...metricsEnv.shape, ...apiEnv.shape })
  .superRefine(checkRawPagesEnv);
export type ApiEnv = Readonly<z.infer<typeof schema>>;

/** Throws ConfigError (`Invalid API configuration: NAME: rule`), which index.ts logs as one line before exiting 78. */
export function loadEnv(source: NodeJS.ProcessEnv = process.env): ApiEnv {
  return loadConfig(schema, "API", source);
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
