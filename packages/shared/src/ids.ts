import { randomBytes } from "node:crypto";
import { ulid } from "ulid";
import { z } from "zod";

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

/**
 * A well-formed job id (what `newJobId` makes), the one check every surface and queue payload uses.
 * It decides only the form: an id that fails it is answered as an unknown job is, without a read.
 */
export const jobIdSchema = z.string().regex(JOB_ID_PATTERN);

/** Whether `id` is a well-formed job id (`jobIdSchema`), for the routes that look one up. */
export const isJobId = (id: unknown): id is string => jobIdSchema.safeParse(id).success;

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
