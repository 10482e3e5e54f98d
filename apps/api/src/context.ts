import type { Queue } from "bullmq";
import type { RequestHandler } from "express";
import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { Metrics } from "@serp/metrics";
import type { QueueName } from "@serp/shared";
import type { AccountStore, AppPool, JobStore, KeySpace, RawPageStore } from "@serp/store";
import type { ApiEnv } from "./env.js";
import type { JobService, LocationCheck } from "./jobs/service.js";

/** Everything route modules may use. Built once by runtime.ts; tests build it the same way. */
export interface AppContext {
  env: ApiEnv;
  logger: Logger;
  metrics: Metrics;
  redis: Redis;
  keys: KeySpace;
  jobs: JobStore;
  accounts: AccountStore;
  queues: Record<QueueName, Queue>;
  jobService: JobService;
  locations: LocationCheck;
  /**
   * Per-account request-rate limit. Mount it AFTER authentication (it reads req.accountId) on
   * POST /v1/jobs, /search.json (and /search) and POST /mcp. It refuses by throwing (or next(err)),
   * never by answering itself, so each surface words the refusal in its own error shape.
   */
  rateLimit: RequestHandler;
  /** The upstream pages completed jobs were parsed from (kept by the workers). */
  rawPages: RawPageStore;
  /**
   * PostgreSQL (DATABASE_URL), absent without one. Never on the submission path; it refuses
   * (PostgresUnavailableError) until it has been reached and migrated in the background.
   */
  pg?: AppPool;
}
