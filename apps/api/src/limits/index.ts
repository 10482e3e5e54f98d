// Placeholder until the limits issue lands; replaced by the real module.
import type { RequestHandler } from "express";
import type { Redis } from "ioredis";
import type { AccountStore, KeySpace } from "@serp/store";
import type { ApiEnv } from "../env.js";

export interface Limits {
  /** Per-account request rate; mounted after authentication. */
  rateLimit: RequestHandler;
  /** The account's limit on jobs pending or processing (0 = none). */
  maxInFlight(accountId: string): Promise<number>;
}

export function createLimits(_deps: { redis: Redis; keys: KeySpace; accounts: AccountStore; env: ApiEnv }): Limits {
  return { rateLimit: (_req, _res, next) => next(), maxInFlight: async () => 0 };
}
