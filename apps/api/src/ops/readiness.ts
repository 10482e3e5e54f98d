import type { Redis } from "ioredis";
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

/** Contexts whose process is shutting down: /readyz answers 503 so no new traffic is routed here. */
const draining = new WeakSet<AppContext>();

export function startDraining(ctx: AppContext): void {
  draining.add(ctx);
}

export function isDraining(ctx: AppContext): boolean {
  return draining.has(ctx);
}
