/**
 * What each worker process knows of the upstream (its profile table's version, every breaker's
 * state, its last canary), published to Redis under a key that expires unless refreshed, so the
 * CLI and the admin route see the fleet without asking each worker. A worker that stops simply
 * drops out after the key's time to live.
 */
import type { Redis } from "ioredis";
import type { KeySpace } from "./keys.js";

export interface PublishedStatus<T> {
  /** The worker process (host and pid). */
  instance: string;
  /** When it was published (ISO). */
  at: string;
  status: T;
}

export class UpstreamStatusBoard {
  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
  ) {}

  async publish(instance: string, status: unknown, ttlSeconds: number): Promise<void> {
    const entry: PublishedStatus<unknown> = { instance, at: new Date().toISOString(), status };
    await this.redis.set(this.keys.upstreamStatus(instance), JSON.stringify(entry), "EX", ttlSeconds);
  }

  /** Every live worker's latest status, by instance name. */
  async list<T>(): Promise<PublishedStatus<T>[]> {
    const found: string[] = [];
    let cursor = "0";
    do {
      const [next, keys] = await this.redis.scan(cursor, "MATCH", this.keys.upstreamStatus("*"), "COUNT", 200);
      found.push(...keys);
      cursor = next;
    } while (cursor !== "0");
    if (!found.length) return [];
    const values = await this.redis.mget(found.sort());
    return values.filter((v): v is string => v !== null).map((v) => JSON.parse(v) as PublishedStatus<T>);
  }
}
