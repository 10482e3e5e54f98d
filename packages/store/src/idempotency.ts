import { createHash } from "node:crypto";
import type { KeySpace } from "./keys.js";

/** How long a submission's idempotency key answers with its first job (Stripe's 24 hours). */
export const IDEMPOTENCY_TTL_SECONDS = 24 * 3600;

/**
 * An `Idempotency-Key` of `POST /v1/jobs` as the creation scripts take it (lua/jobs.ts). The claim
 * is written in the same script as the job record, only when the job is created: a key never names
 * a job that was not made, and a submission refused (credits, limits) leaves its key free.
 */
export interface IdempotencyClaim {
  /** The Redis key of the claim (scoped to the account; the customer's key hashed). */
  key: string;
  /** The request body's fingerprint: the same key with another body is refused. */
  body: string;
  ttlSeconds: number;
  /**
   * A job the claim may name and still count as free: one found gone (its record expired), so the
   * key makes a new job instead of answering 409 for the rest of its 24 hours.
   */
  staleJob?: string;
}

/**
 * Idempotency keys of `POST /v1/jobs`, scoped to the account: the first submission with a key claims
 * it for its job, a later one with the same body is told that job, one with another body is refused.
 */
export class IdempotencyKeys {
  constructor(
    private readonly keys: KeySpace,
    private readonly ttlSeconds = IDEMPOTENCY_TTL_SECONDS,
  ) {}

  /** A stable fingerprint of a request body: its JSON with object keys sorted. */
  static fingerprint(body: unknown): string {
    return createHash("sha256").update(canonical(body)).digest("base64url");
  }

  /** The claim a submission of `body` with `idempotencyKey` makes. */
  claim(accountId: string, idempotencyKey: string, body: unknown): IdempotencyClaim {
    const key = this.keys.idempotency(accountId, createHash("sha256").update(idempotencyKey).digest("base64url"));
    return { key, body: IdempotencyKeys.fingerprint(body), ttlSeconds: this.ttlSeconds };
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
