import { randomBytes } from "node:crypto";
import type { Queue } from "bullmq";
import type { Logger } from "pino";
import { createMetrics } from "@serp/metrics";
import { Closers, countryOfLocationName, type QueueName } from "@serp/shared";
import { AccountStore, createRedis, redisTargetOf, ReplicaBarrier, IdempotencyKeys, JobArchive, JobStore, keySpace, openPostgres, openJobResults, openPageBlobs, openScrapeQueues, PostgresUnavailableError, RawPageStore, ResultCache, waitReady } from "@serp/store";
import { createApp } from "./app.js";
import type { AppContext } from "./context.js";
import type { ApiEnv } from "./env.js";
import { FinalWaiter } from "./jobs/final-waiter.js";
import { JobService, type LocationCheck } from "./jobs/service.js";
import { createLimits } from "./limits/index.js";

/**
 * How long a key found valid, and an account's limit overrides, are trusted without a Redis read
 * (a revocation or a change of limits is announced at once; this bounds a lost announcement).
 */
const ACCOUNT_CACHE_MS = 5_000;

/** Every long-lived part of the API, wired from the environment. Used by index.ts and tests. */
export async function createApiRuntime(env: ApiEnv, logger: Logger, locationCheck?: LocationCheck) {
  const closers = new Closers();
  const keys = keySpace(env.SERP_PREFIX);
  const target = redisTargetOf(env);
  const redis = createRedis(target, "command", "api");
  redis.on("error", (err) => logger.debug({ err: err.message }, "redis error"));
  closers.add("redis", () => redis.quit().catch(() => redis.disconnect()));
  const subscriber = createRedis(target, "subscriber", "api-sub");
  subscriber.on("error", (err) => logger.debug({ err: err.message }, "redis subscriber error"));
  closers.add("redis subscriber", () => subscriber.quit().catch(() => subscriber.disconnect()));
  // Submissions answered once their job is on REDIS_WAIT_REPLICAS replicas (WAIT blocks: a connection of its own).
  const waitConnection = env.REDIS_WAIT_REPLICAS > 0 ? createRedis(target, "command", "api-wait") : undefined;
  if (waitConnection) {
    waitConnection.on("error", (err) => logger.debug({ err: err.message }, "redis wait error"));
    closers.add("redis wait", () => waitConnection.quit().catch(() => waitConnection.disconnect()));
  }
  const replicas = waitConnection && new ReplicaBarrier(waitConnection, `${env.SERP_PREFIX}:replicated`, env.REDIS_WAIT_REPLICAS, env.REDIS_WAIT_TIMEOUT_MS);
  await Promise.all([waitReady(redis), waitReady(subscriber), ...(waitConnection ? [waitReady(waitConnection)] : [])]);
  // PostgreSQL (DATABASE_URL): never on the submission path, so the API starts without it; it is
  // connected and migrated in the background (the first attempt is waited for: with PostgreSQL up,
  // the API starts with history available), and history reads answer 503 until then.
  const pg = env.DATABASE_URL ? openPostgres(env.DATABASE_URL, "api", { info: (msg) => logger.info(msg), warn: (msg) => logger.warn(msg) }) : undefined;
  if (pg) {
    closers.add("postgres", () => pg.end());
    await pg.firstAttempt;
  } else logger.warn("DATABASE_URL is not set: no PostgreSQL (the ledger stays in its bounded Redis stream; accounts and keys in Redis only)");

  // Producers share the fail-fast connection: a submission while Redis is down errors at once.
  const producers = openScrapeQueues(
    { prefix: keys.bullPrefix, closers, onError: (err, { queue }) => logger.debug({ err: err.message, queue }, "queue error") },
    redis,
  );
  const queues = Object.fromEntries(Object.entries(producers).map(([name, p]) => [name, p.queue])) as Record<QueueName, Queue>;

  const waiter = new FinalWaiter(subscriber, keys.finalChannel(), keys.replyChannel(randomBytes(8).toString("hex")));
  await waiter.start();
  // Completed results beside the pages (JOB_RESULT_STORE): read there, and written there for a live job answered from the cache.
  const results = openJobResults(env, env.JOB_RETENTION_SECONDS);
  if (results) closers.add("result store", () => results.blobs.close());
  const jobs = new JobStore(redis, keys, env.JOB_RETENTION_SECONDS).keepResultsIn(results);
  jobs.onResultNotStored = (jobId, err) => logger.warn({ jobId, err: err.message, where: results?.blobs.where }, "result not written to the result store; kept in the job record");
  // Past its hot window a job is read from the archive, the same for every caller.
  if (pg) jobs.readFromArchive(new JobArchive(pg, redis, keys, env.JOB_HOT_SECONDS, env.JOB_RETENTION_SECONDS));
  const accounts = new AccountStore(redis, keys, ACCOUNT_CACHE_MS, pg);
  await accounts.followChanges(subscriber);
  const locations = locationCheck ?? { countryOf: countryOfLocationName, isKnown: () => undefined };
  const limits = createLimits({ redis, keys, accounts, env });
  const metrics = createMetrics("api");
  const jobService = new JobService({
    jobs, queues: producers, waiter, locations, liveDeadlineMs: env.LIVE_DEADLINE_MS, logger, maxInFlight: limits.maxInFlight,
    allowPrivateWebhookTargets: env.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    idempotency: new IdempotencyKeys(keys),
    replicas,
    cache: { store: new ResultCache(redis, keys, { ttlSeconds: env.CACHE_TTL_SECONDS, scope: env.CACHE_SCOPE }), hitCredits: env.CACHE_HIT_CREDITS },
    metrics,
  });
  const blobs = openPageBlobs(env);
  closers.add("page store", () => blobs.close());
  const rawPages = new RawPageStore(redis, keys, blobs, env.RAW_HTML_RETENTION_SECONDS);
  const ctx: AppContext = { env, logger, metrics, redis, keys, jobs, accounts, queues, jobService, locations, rateLimit: limits.rateLimit, rawPages, pg };
  const app = createApp(ctx);
  return { app, ctx, redis, keys, jobs, accounts, queues, waiter, jobService, closers, pg };
}
export type ApiRuntime = Awaited<ReturnType<typeof createApiRuntime>>;

/**
 * The API_KEY account (made with `credits` unless the key exists). A new account is written to
 * PostgreSQL first: while PostgreSQL has not been reached, it is made in the background once it is,
 * and the API starts meanwhile (an existing key needs only Redis).
 */
export async function ensureApiKeyAccount(rt: Pick<ApiRuntime, "accounts" | "pg">, key: string, credits: number, logger: Logger): Promise<void> {
  const ensure = async () => {
    const { accountId, created } = await rt.accounts.ensureKey(key, credits, "API_KEY account");
    logger.info({ accountId, created, credits: created ? credits : undefined }, "API_KEY account ready");
  };
  const { pg } = rt;
  try {
    await ensure();
  } catch (err) {
    if (!pg || !(err instanceof PostgresUnavailableError)) throw err;
    logger.warn("API_KEY is new and PostgreSQL has not been reached yet: its account is made once it is");
    void pg
      .whenMigrated()
      .then(ensure)
      .catch((e: Error) => logger.error({ err: e.message }, "API_KEY account could not be made; restart the API once PostgreSQL is up"));
  }
}
