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
 * (re)connection and checks the server it reached is a primary. A dead primary's connections close;
 * a demoted one's are closed by the sentinels (CLIENT KILL), and a write that still reaches it
 * (READONLY) reconnects. ioredis's `failoverDetector` is left off: its sentinel subscriptions
 * outlive the connection they watch (they kept reconnecting after quit()).
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
  });
}

/**
 * Redis replication is asynchronous: a write the primary acknowledged but had not yet sent to a
 * replica when it died is lost when that replica is promoted. `reached()` resolves once everything
 * written before it was called (by any connection of this process) is on `replicas` replicas, by
 * a marker write then WAIT on a connection of its own, so the caller's connection is never blocked.
 * Concurrent callers share one round: while one is in flight, the next callers wait for the next.
 *
 * Resolves false when fewer replicas confirmed within `timeoutMs` (a replica down, or none yet
 * after a failover): from then on callers are answered false at once, without waiting, while a
 * round in the background checks again, until one succeeds. Rejects when Redis cannot be reached
 * (the write may be lost).
 */
export class ReplicaBarrier {
  private running: Promise<number> | undefined;
  private next: Promise<number> | undefined;
  private short = false;
  private probing = false;
  constructor(
    private readonly redis: Redis,
    private readonly markerKey: string,
    readonly replicas: number,
    readonly timeoutMs: number,
  ) {}

  async reached(): Promise<boolean> {
    if (this.replicas <= 0) return true;
    if (this.short) {
      // Known short of replicas: no caller waits; one round at a time checks whether they are back.
      if (!this.probing) {
        this.probing = true;
        void this.round().catch(() => undefined).finally(() => (this.probing = false));
      }
      return false;
    }
    this.next ??= (this.running ?? Promise.resolve(0))
      .catch(() => 0)
      .then(() => {
        this.next = undefined;
        this.running = this.round();
        return this.running;
      });
    return (await this.next) >= this.replicas;
  }

  private async round(): Promise<number> {
    // WAIT counts the writes of its own connection: the marker makes that everything written so far.
    await this.redis.set(this.markerKey, Date.now(), "PX", 60_000);
    const acked = await this.redis.wait(this.replicas, this.timeoutMs);
    this.short = acked < this.replicas;
    return acked;
  }
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
