import { Redis, type RedisOptions } from "ioredis";

/**
 * Redis connections by role (BullMQ "going to production"):
 * - `command`: API requests and producers fail fast while Redis is down instead of queueing
 *   commands in memory, so the API can answer 503 at once.
 * - `worker`: BullMQ workers and blocking readers wait for Redis forever.
 * - `subscriber`: pub/sub listeners, which reconnect and resubscribe by themselves.
 */
export type RedisRole = "command" | "worker" | "subscriber";

const ROLE_OPTIONS: Record<RedisRole, RedisOptions> = {
  command: { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2_000 },
  worker: { maxRetriesPerRequest: null, enableOfflineQueue: true },
  subscriber: { maxRetriesPerRequest: null, enableOfflineQueue: true },
};

export function createRedis(url: string, role: RedisRole, name?: string): Redis {
  return new Redis(url, {
    ...ROLE_OPTIONS[role],
    connectionName: name,
    lazyConnect: false,
    // Back off 50 ms, 100 ms … up to 2 s between reconnection attempts.
    retryStrategy: (times) => Math.min(times * 50, 2_000),
  });
}

/** Resolves once the connection is ready (or rejects after `timeoutMs`). */
export async function waitReady(redis: Redis, timeoutMs = 10_000): Promise<void> {
  if (redis.status === "ready") return;
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(new Error(`Redis not ready after ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      cleanup();
      resolve();
    };
    const cleanup = () => {
      clearTimeout(timer);
      redis.off("ready", onReady);
    };
    redis.on("ready", onReady);
  });
}
