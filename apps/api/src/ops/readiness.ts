import type { Redis } from "ioredis";
import type { AppPool } from "@serp/store";
import type { AppContext } from "../context.js";

/** How long a readiness probe waits for Redis to answer PING. */
export const READY_PING_TIMEOUT_MS = 1_000;
/** Retry-After (seconds) on a 503 from /readyz. */
export const READY_RETRY_AFTER_S = 5;

/**
 * True when Redis answers PING within `timeoutMs`. A connection that is not ready fails at once,
 * so probes never pile commands into an offline queue while Redis is down.
 */
export async function redisAnswers(redis: Redis, timeoutMs = READY_PING_TIMEOUT_MS): Promise<boolean> {
  if (redis.status !== "ready") return false;
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("PING timed out")), timeoutMs)));
    return (await Promise.race([redis.ping(), timeout])) === "PONG";
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Whether history (the job archive and usage, in PostgreSQL) can be read, for /readyz's body. The
 * API is ready without it: submissions, live jobs and hot reads never touch PostgreSQL.
 */
export type HistoryReadiness =
  | { history: "available" }
  | { history: "unavailable"; detail: string }
  | { history: "not configured"; detail: string };

export async function historyReadiness(pg: AppPool | undefined, timeoutMs = READY_PING_TIMEOUT_MS): Promise<HistoryReadiness> {
  if (!pg) return { history: "not configured", detail: "DATABASE_URL is not set: usage cannot be read" };
  if (!pg.migrated) {
    return { history: "unavailable", detail: "PostgreSQL has not been reached yet (connecting and migrating in the background): history reads answer 503" };
  }
  let timer: NodeJS.Timeout | undefined;
  try {
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("timed out")), timeoutMs)));
    await Promise.race([pg.query("SELECT 1"), timeout]);
    return { history: "available" };
  } catch {
    return { history: "unavailable", detail: "PostgreSQL does not answer: history reads answer 503 until it is back" };
  } finally {
    clearTimeout(timer);
  }
}

/** Contexts whose process is shutting down: /readyz answers 503 so no new traffic is routed here. */
const draining = new WeakSet<AppContext>();

export function startDraining(ctx: AppContext): void {
  draining.add(ctx);
}

export function isDraining(ctx: AppContext): boolean {
  return draining.has(ctx);
}
