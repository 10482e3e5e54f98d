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

/** One sentinel of a Redis Sentinel set (REDIS_SENTINELS). */
export interface SentinelAddress {
  host: string;
  port: number;
}

/**
 * Where a process's Redis is: REDIS_URL, or, with REDIS_SENTINELS, the primary the sentinels name
 * (`redisTargetOf(env)`). With sentinels, REDIS_URL's host and port are not used; its user,
 * password, database number and `rediss:` (TLS) still apply to the primary.
 */
export type RedisTarget =
  | string
  | { url: string; sentinels: readonly SentinelAddress[]; name: string; sentinelUsername?: string; sentinelPassword?: string };

/** The Redis settings of the store's env fragment (env.ts), as every process reads them. */
export interface RedisSettings {
  REDIS_URL: string;
  REDIS_SENTINELS?: readonly SentinelAddress[];
  REDIS_SENTINEL_NAME: string;
  REDIS_SENTINEL_USERNAME?: string;
  REDIS_SENTINEL_PASSWORD?: string;
}

export function redisTargetOf(env: RedisSettings): RedisTarget {
  if (!env.REDIS_SENTINELS?.length) return env.REDIS_URL;
  return {
    url: env.REDIS_URL,
    sentinels: env.REDIS_SENTINELS,
    name: env.REDIS_SENTINEL_NAME,
    ...(env.REDIS_SENTINEL_USERNAME ? { sentinelUsername: env.REDIS_SENTINEL_USERNAME } : {}),
    ...(env.REDIS_SENTINEL_PASSWORD ? { sentinelPassword: env.REDIS_SENTINEL_PASSWORD } : {}),
  };
}

/** The target as a log may show it: no password, and the sentinels and primary's name when it has them. */
export function describeRedisTarget(target: RedisTarget): string {
  const redact = (url: string) => url.replace(/\/\/([^:@/]*):[^@/]*@/, "//$1:***@");
  if (typeof target === "string") return redact(target);
  return `primary "${target.name}" of sentinels ${target.sentinels.map((s) => `${s.host}:${s.port}`).join(",")}`;
}

/** A failed-over primary that is now a replica answers writes with READONLY: reconnect (through the sentinels) and send again. */
const reconnectOnReadonly = (err: Error): 2 | false => (err.message.startsWith("READONLY") ? 2 : false);

/** What REDIS_URL gives a connection besides its host and port (used with sentinels). */
function credentialsOf(url: string): RedisOptions {
  const u = new URL(url);
  const db = Number(u.pathname.slice(1) || 0);
  return {
    ...(u.username ? { username: decodeURIComponent(u.username) } : {}),
    ...(u.password ? { password: decodeURIComponent(u.password) } : {}),
    ...(Number.isInteger(db) && db > 0 ? { db } : {}),
    ...(u.protocol === "rediss:" ? { tls: {}, enableTLSForSentinelMode: true } : {}),
  };
}

/**
 * Every connection of every process (API, workers, BullMQ's, the CLI) is made here, so each one
 * follows a Sentinel failover: with sentinels, ioredis asks them for the primary at each
 * (re)connection, checks the server it reached is a primary, and drops the connection when a
 * sentinel announces a new one (`failoverDetector`), instead of waiting for the old one's socket.
 */
export function createRedis(target: RedisTarget, role: RedisRole, name?: string): Redis {
  const common: RedisOptions = {
    ...ROLE_OPTIONS[role],
    connectionName: name,
    lazyConnect: false,
    // Back off 50 ms, 100 ms … up to 2 s between reconnection attempts.
    retryStrategy: (times) => Math.min(times * 50, 2_000),
    reconnectOnError: reconnectOnReadonly,
  };
  if (typeof target === "string") return new Redis(target, common);
  return new Redis({
    ...common,
    ...credentialsOf(target.url),
    sentinels: target.sentinels.map((s) => ({ host: s.host, port: s.port })),
    name: target.name,
    role: "master",
    sentinelUsername: target.sentinelUsername,
    sentinelPassword: target.sentinelPassword,
    // Asking the sentinels again: quickly while they elect a new primary (a few seconds), never slower than every 2 s.
    sentinelRetryStrategy: (times) => Math.min(times * 100, 2_000),
    sentinelMaxConnections: 3,
    failoverDetector: true,
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
