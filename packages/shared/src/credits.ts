import type { Endpoint, JobStatus } from "./endpoints.js";
import { KINDS } from "./kinds/index.js";

/** What a job costs once final (SPEC §8): failed 0, else its kind's rule (product sellers: 1 per 10, minimum 1), else 1. */
export function creditsFor(endpoint: Endpoint, status: JobStatus, result?: unknown): number {
  if (status !== "completed") return 0;
  return KINDS[endpoint].credits?.of(result) ?? 1;
}

/** Credits reserved when a job is accepted: the minimum any completed job costs. */
export const RESERVED_CREDITS = 1;

/** Credit packs operators grant (SPEC §8). */
export const CREDIT_PACKS = {
  starter: 50_000,
  standard: 500_000,
  scale: 2_500_000,
  ultimate: 12_500_000,
} as const;
export type CreditPack = keyof typeof CREDIT_PACKS;
