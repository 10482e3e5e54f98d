/**
 * The worker's small HTTP server on HEALTH_PORT, for orchestrators and Prometheus:
 * - GET /healthz: the process is alive (no dependency checked, so a Redis outage never restarts it);
 * - GET /readyz: Redis answers PING and every BullMQ worker of this process is running (not paused,
 *   not closing); else 503 `{error: {code: "unavailable", message}}` with Retry-After;
 * - GET /metrics: this process's Prometheus registry (job outcomes, latency, upstream, webhooks, credits,
 *   the browser pages and the fleet's exits, read when scraped), behind METRICS_TOKEN when it is set
 *   (401 without it).
 * It listens on HOST (loopback unless told otherwise) and logs the address it really listens on.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Worker } from "bullmq";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { Metrics } from "@serp/metrics";
import { presentsToken } from "@serp/shared";

const PING_TIMEOUT_MS = 1_000;
const RETRY_AFTER_S = 5;

/** Resolves undefined when ready; otherwise why not, in words an operator can act on. */
export type ReadinessCheck = () => Promise<string | undefined>;

export interface HealthServerOptions {
  port: number;
  /** Default 127.0.0.1. */
  host?: string;
  /** Closes /metrics (Bearer, or basic auth password). */
  metricsToken?: string;
  registry: Metrics["registry"];
  ready: ReadinessCheck;
  logger: Logger;
  /** Sets the gauges read at scrape time (browser pages, exits) before /metrics answers; never rejects. */
  refresh?: () => Promise<void>;
}

export interface HealthServer {
  port: number;
  close(): Promise<void>;
}

export async function startHealthServer(o: HealthServerOptions): Promise<HealthServer> {
  const server = createServer((req, res) => {
    handle(req, res, o).catch((err: unknown) => {
      o.logger.error({ err }, "health request failed");
      if (!res.headersSent) sendJson(res, 500, { error: { code: "internal_error", message: "Internal error" } });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(o.port, o.host ?? "127.0.0.1", () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  o.logger.info({ address, port }, `health server listening on http://${address.includes(":") ? `[${address}]` : address}:${port}`);
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, o: HealthServerOptions): Promise<void> {
  const path = (req.url ?? "/").split("?")[0];
  if (req.method !== "GET" && req.method !== "HEAD") {
    return sendJson(res, 405, { error: { code: "method_not_allowed", message: "Only GET" } });
  }
  if (path === "/healthz") return sendJson(res, 200, { status: "ok" });
  if (path === "/readyz") {
    const reason = await o.ready();
    if (reason === undefined) return sendJson(res, 200, { status: "ready" });
    res.setHeader("Retry-After", String(RETRY_AFTER_S));
    return sendJson(res, 503, { error: { code: "unavailable", message: reason } });
  }
  if (path === "/metrics") {
    if (o.metricsToken && !presentsToken(req.headers.authorization, o.metricsToken)) {
      res.setHeader("WWW-Authenticate", 'Basic realm="serp metrics", charset="UTF-8"');
      return sendJson(res, 401, { error: { code: "unauthorized", message: "Metrics need the metrics token (METRICS_TOKEN: Bearer, or basic auth password)" } });
    }
    await o.refresh?.();
    const body = await o.registry.metrics();
    res.writeHead(200, { "Content-Type": o.registry.contentType, "Cache-Control": "no-store" });
    res.end(body);
    return;
  }
  sendJson(res, 404, { error: { code: "not_found", message: `No route for ${req.method} ${path}` } });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Cache-Control": "no-store" });
  res.end(JSON.stringify(body));
}

/** Readiness of a worker process: its Redis answers, and each of its BullMQ workers takes jobs. */
export async function workerReadiness(store: Redis, workers: readonly Worker[]): Promise<string | undefined> {
  if (!(await redisAnswers(store))) return "Redis is unreachable";
  for (const worker of workers) {
    if (worker.closing) return `worker ${worker.name} is closing`;
    if (!worker.isRunning()) return `worker ${worker.name} is not running`;
    if (worker.isPaused()) return `worker ${worker.name} is paused`;
  }
  return undefined;
}

/**
 * PING within the timeout. A connection that is not ready fails at once: worker connections keep an
 * offline queue, and probes must not pile PINGs into it while Redis is down.
 */
async function redisAnswers(redis: Redis): Promise<boolean> {
  if (redis.status !== "ready") return false;
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("PING timed out")), PING_TIMEOUT_MS)));
    return (await Promise.race([redis.ping(), timeout])) === "PONG";
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
