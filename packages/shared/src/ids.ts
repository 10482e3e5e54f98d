import { randomBytes } from "node:crypto";
import { ulid } from "ulid";

/**
 * Random bytes drawn 4 KiB at a time: ulid's default asks the OS once per character, which cost
 * about 8% of the API's CPU per submission (bench/submissions.ts profile).
 */
let pool = randomBytes(4096);
let at = 0;
function pooledRandom(): number {
  if (at >= pool.length) {
    pool = randomBytes(4096);
    at = 0;
  }
  return pool[at++]! / 256;
}

/** `job_` + a ULID: time-sortable, 80 random bits, no colons (DECISIONS.md, Jobs). */
export function newJobId(): string {
  return `job_${ulid(undefined, pooledRandom)}`;
}

export const JOB_ID_PATTERN = /^job_[0-9A-HJKMNP-TV-Z]{26}$/;

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** Uniformly random base62 text (rejection sampling keeps every character equally likely). */
export function randomBase62(length: number): string {
  let out = "";
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

/** `sk_live_` + 32 base62 characters (about 190 bits). */
export function newApiKey(): string {
  return `sk_live_${randomBase62(32)}`;
}

export const API_KEY_PATTERN = /^sk_[A-Za-z0-9_]{8,200}$/;

export function newAccountId(): string {
  return `acct_${ulid()}`;
}
