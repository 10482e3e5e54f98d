import { createHash } from "node:crypto";
import type { Redis } from "ioredis";
import type { KeySpace } from "./keys.js";
import { RELEASE_CLAIM } from "./lua/idempotency.js";

/** How long a submission's idempotency key answers with its first job (Stripe's 24 hours). */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;

/** What a key was first used for: the body's fingerprint and the job it made. */
interface Claim {
  body: string;
  jobId: string;
}

export type ClaimOutcome =
  | { kind: "claimed" }
  | { kind: "replay"; jobId: string }
  | { kind: "mismatch" };

/**
 * Idempotency keys of `POST /v1/jobs`, scoped to the account: the first submission with a key claims
 * it for its job (SET NX, so of two concurrent ones exactly one creates a job); a later one with the
 * same body is told that job, one with another body is refused. A claim whose job was never created
 * (refused for credits or limits, or failed to enqueue) is released, so a retry can succeed.
 */
export class IdempotencyStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
    private readonly ttlSeconds = IDEMPOTENCY_TTL_SECONDS,
  ) {}

  /** A stable fingerprint of a request body: its JSON with object keys sorted. */
  static fingerprint(body: unknown): string {
    return createHash("sha256").update(canonical(body)).digest("base64url");
  }

  private key(accountId: string, idempotencyKey: string): string {
    return this.keys.idempotency(accountId, createHash("sha256").update(idempotencyKey).digest("base64url"));
  }

  async claim(accountId: string, idempotencyKey: string, body: string, jobId: string): Promise<ClaimOutcome> {
    const key = this.key(accountId, idempotencyKey);
    const claim: Claim = { body, jobId };
    const set = await this.redis.set(key, JSON.stringify(claim), "EX", this.ttlSeconds, "NX");
    if (set === "OK") return { kind: "claimed" };
    const raw = await this.redis.get(key);
    // Released between the two calls (the first submission was refused): claim it afresh.
    if (raw === null) return this.claim(accountId, idempotencyKey, body, jobId);
    const held = JSON.parse(raw) as Claim;
    return held.body === body ? { kind: "replay", jobId: held.jobId } : { kind: "mismatch" };
  }

  /** Releases a claim that made no job; only the claim for `jobId` (never a later one). */
  async release(accountId: string, idempotencyKey: string, jobId: string): Promise<void> {
    await RELEASE_CLAIM.run(this.redis, { claim: this.key(accountId, idempotencyKey), jobId });
  }
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}
