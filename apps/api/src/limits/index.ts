/**
 * Per-account limits: a request rate on the job-submitting routes (counted in Redis, so every API
 * process shares the counters) and the number of jobs pending or processing (checked atomically by
 * the job submit script; this module only says what the number is). Each has a deployment default
 * (env) and an optional per-account override stored with the account.
 *
 * Both quotas are described by the RateLimit-Policy header from the start; the RateLimit header
 * carries the rate's state from the start and the concurrency's once the submit script has counted
 * the account's jobs in flight (so it is exact, not read before the submission).
 */
import type { Request, RequestHandler, Response } from "express";
import type { Redis } from "ioredis";
import { RateLimiterRedis, RateLimiterRes } from "rate-limiter-flexible";
import { ApiError } from "@serp/shared";
import { resolveLimits, type AccountStore, type EffectiveLimits, type KeySpace, type LimitDefaults } from "@serp/store";
import type { ApiEnv } from "../env.js";
import { isStorageDown } from "../errors.js";
import type { Submitter } from "../submitter.js";
import { formatRateLimit, formatRateLimitPolicy, type PolicyState } from "./headers.js";

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The account's effective limits, as the rate limit found them. */
      limits?: EffectiveLimits;
      /** The rate policy's state as the rate limit counted this request (absent: no rate limit). */
      ratePolicy?: PolicyState;
    }
  }
}

export interface Limits {
  /**
   * Per-account request rate; mounted after authentication (reads req.accountId). Leaves the
   * account's limits on req.limits, so a submission need not read them again.
   */
  rateLimit: RequestHandler;
  /** The account's limit on jobs pending or processing (0 = none). */
  maxInFlight(accountId: string): Promise<number>;
}

/**
 * Who submits a job from this request, with the limit on jobs in flight if the rate limit found it.
 * The submission's count of jobs in flight completes the RateLimit header on `res`.
 */
export function submitter(req: Request, res: Response): Submitter {
  if (!req.accountId) throw new Error("submissions run after authentication: req.accountId is not set");
  const limits = req.limits;
  if (!limits) return { accountId: req.accountId };
  const rate = req.ratePolicy;
  return {
    accountId: req.accountId,
    maxInFlight: limits.concurrency.limit,
    onInFlight: (inFlight) => {
      if (!res.headersSent) setHeaders(res, policies(limits, rate, inFlight));
    },
  };
}

export function limitDefaults(env: ApiEnv): LimitDefaults {
  return { ratePerMinute: env.RATE_LIMIT_PER_MINUTE, maxInFlight: env.MAX_JOBS_IN_FLIGHT };
}

export function createLimits(deps: { redis: Redis; keys: KeySpace; accounts: AccountStore; env: ApiEnv }): Limits {
  const defaults = limitDefaults(deps.env);
  // One limiter per (quota, window) pair in use; all count under the same per-account key, so an
  // account whose override changes keeps its current window's count.
  const limiters = new Map<string, RateLimiterRedis>();
  const limiterFor = (points: number, duration: number): RateLimiterRedis => {
    const id = `${points}/${duration}`;
    let limiter = limiters.get(id);
    if (!limiter) {
      limiter = new RateLimiterRedis({
        storeClient: deps.redis,
        keyPrefix: `${deps.keys.prefix}:ratelimit`,
        points,
        duration,
      });
      limiters.set(id, limiter);
    }
    return limiter;
  };

  const rateLimit: RequestHandler = async (req, res, next) => {
    const accountId = req.accountId;
    if (!accountId) throw new Error("rateLimit runs after authentication: req.accountId is not set");
    const overrides = await deps.accounts.limits(accountId).catch((err: unknown) => {
      throw storageError(err);
    });
    if (!overrides) throw new ApiError("unauthorized", "The account of this key no longer exists");
    const limits = resolveLimits(overrides, defaults);
    req.limits = limits;
    let retryAfter: number | undefined;

    const { limit, windowSeconds } = limits.rate;
    if (limit > 0) {
      const { state, refused } = await consume(limiterFor(limit, windowSeconds), accountId);
      // t and Retry-After name the same instant, when the window's count starts again.
      const resetSeconds = Math.max(1, Math.ceil(state.msBeforeNext / 1000));
      req.ratePolicy = { name: "rate", quota: limit, windowSeconds, remaining: state.remainingPoints, resetSeconds };
      if (refused) retryAfter = resetSeconds;
    }
    // The concurrency quota's state is not known until the submission counts it (submitter).
    setHeaders(res, policies(limits, req.ratePolicy));

    if (retryAfter !== undefined) {
      // Set here as well as by the error handler, so a router with its own error shape keeps it.
      res.setHeader("Retry-After", String(retryAfter));
      throw new ApiError(
        "rate_limited",
        `Rate limit exceeded: this account may make ${limit} requests per ${windowSeconds} seconds; retry in ${retryAfter} s`,
        undefined,
        retryAfter,
      );
    }
    next();
  };

  return {
    rateLimit,
    async maxInFlight(accountId) {
      return resolveLimits((await deps.accounts.limits(accountId)) ?? {}, defaults).concurrency.limit;
    },
  };
}

/** Counts one request; a refusal is a result here, not an error. */
async function consume(limiter: RateLimiterRedis, accountId: string): Promise<{ state: RateLimiterRes; refused: boolean }> {
  try {
    return { state: await limiter.consume(accountId, 1), refused: false };
  } catch (err) {
    if (err instanceof RateLimiterRes) return { state: err, refused: true };
    throw storageError(err);
  }
}

/**
 * The request's policies: the rate as counted (when there is a rate limit), then the concurrency
 * quota, of unit `concurrent-requests`, whose `remaining` counts the slots left with `inFlight`
 * jobs pending or processing (this request's job among them once accepted), unknown before the
 * submission counted them.
 */
function policies(limits: EffectiveLimits, rate: PolicyState | undefined, inFlight?: number): PolicyState[] {
  const out = rate ? [rate] : [];
  const { limit } = limits.concurrency;
  if (limit > 0) {
    out.push({ name: "concurrency", quota: limit, unit: "concurrent-requests", remaining: inFlight === undefined ? undefined : Math.max(0, limit - inFlight) });
  }
  return out;
}

/** RateLimit-Policy names every policy; RateLimit the ones whose state is known. */
function setHeaders(res: Response, policies: PolicyState[]): void {
  if (!policies.length) return;
  res.setHeader("RateLimit-Policy", formatRateLimitPolicy(policies));
  const known = policies.filter((p) => p.remaining !== undefined);
  if (known.length) res.setHeader("RateLimit", formatRateLimit(known));
}

/** A counter store that cannot be reached answers 503 like every other storage failure, never 500. */
function storageError(err: unknown): unknown {
  if (isStorageDown(err) || (err instanceof Error && /Redis connection is not ready/.test(err.message))) {
    return new ApiError("unavailable", "Storage is unavailable; try again shortly", undefined, 2);
  }
  return err;
}
