import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import type { KeySpace } from "./keys.js";
import { ABANDON, BEGIN, RECORD } from "./lua/webhooks.js";

/** One try at delivering a job's webhook, as its owner sees it. */
export interface DeliveryAttempt {
  /** When the attempt started. */
  at: string;
  /** The receiver's status code, or null when no response came (refused, timed out, unreachable). */
  statusCode: number | null;
  /** Why the attempt did not count as delivered, or null when it did. */
  error: string | null;
  durationMs: number;
}

/**
 * - `pending`: waiting for its first or next attempt
 * - `delivered`: a 2xx came back
 * - `failed`: every attempt of the retry schedule failed
 * - `gone`: the receiver answered 410, so no more attempts
 * - `refused`: the target is not allowed (not http(s), or a loopback, private, link-local,
 *   metadata or reserved address), so no request was sent and none will be
 */
export type DeliveryState = "pending" | "delivered" | "failed" | "gone" | "refused";
export const FINAL_DELIVERY_STATES: readonly DeliveryState[] = ["delivered", "failed", "gone", "refused"];

export interface DeliveryLog {
  state: DeliveryState;
  url: string;
  attempts: DeliveryAttempt[];
  /** When the next attempt is due, while `pending` after a failed attempt. */
  nextAttemptAt: string | null;
}

/** A Standard Webhooks symmetric secret: `whsec_` + base64 of 32 random bytes. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/** Webhook keys sit beside the account and the job they belong to (and expire with the job). */
export function webhookKeys(keys: KeySpace) {
  return {
    secret: (accountId: string) => `${keys.prefix}:acct:${accountId}:whsec`,
    delivery: (jobId: string) => `${keys.prefix}:job:${jobId}:webhook`,
    attempts: (jobId: string) => `${keys.prefix}:job:${jobId}:webhook:attempts`,
  };
}

/** Per-account signing secrets and per-job delivery records. */
export class WebhookStore {
  private readonly k: ReturnType<typeof webhookKeys>;

  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
    /** Seconds delivery records are kept when their job's own expiry is unknown. */
    readonly retentionSeconds: number,
  ) {
    this.k = webhookKeys(keys);
  }

  /** The account's signing secret, made on first use (concurrent first uses agree on one). */
  async secret(accountId: string): Promise<string> {
    const key = this.k.secret(accountId);
    const existing = await this.redis.get(key);
    if (existing) return existing;
    await this.redis.set(key, newWebhookSecret(), "NX");
    return (await this.redis.get(key))!;
  }

  /** Replaces the account's secret; deliveries from now on are signed with the new one only. */
  async rotateSecret(accountId: string): Promise<string> {
    const secret = newWebhookSecret();
    await this.redis.set(this.k.secret(accountId), secret);
    return secret;
  }

  /** Opens the job's delivery record if it has none; returns its state (new ones are pending). */
  async begin(jobId: string, url: string): Promise<DeliveryState> {
    return BEGIN.run<DeliveryState>(this.redis, { job: this.keys.job(jobId), delivery: this.k.delivery(jobId), url, retention: this.retentionSeconds });
  }

  async state(jobId: string): Promise<DeliveryState | null> {
    return ((await this.redis.hget(this.k.delivery(jobId), "state")) as DeliveryState | null) ?? null;
  }

  async recordAttempt(jobId: string, url: string, attempt: DeliveryAttempt, state: DeliveryState, nextAttemptAt: Date | null): Promise<void> {
    await RECORD.run(this.redis, {
      job: this.keys.job(jobId), delivery: this.k.delivery(jobId), attempts: this.k.attempts(jobId),
      attempt: JSON.stringify(attempt), state, nextAttemptAt: nextAttemptAt?.toISOString() ?? "", retention: this.retentionSeconds, url,
    });
  }

  async abandon(jobId: string): Promise<boolean> {
    return (await ABANDON.run<number>(this.redis, { delivery: this.k.delivery(jobId) })) === 1;
  }

  /** The job's delivery record, or null when none was opened (no postbackUrl, not final yet, expired). */
  async log(jobId: string): Promise<DeliveryLog | null> {
    const [h, rows] = await Promise.all([
      this.redis.hgetall(this.k.delivery(jobId)),
      this.redis.lrange(this.k.attempts(jobId), 0, -1),
    ]);
    if (!h.state) return null;
    return {
      state: h.state as DeliveryState,
      url: h.url ?? "",
      attempts: rows.map((r) => JSON.parse(r) as DeliveryAttempt),
      nextAttemptAt: h.nextAttemptAt || null,
    };
  }
}
