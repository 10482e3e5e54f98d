import { Queue } from "bullmq";
import type { Logger } from "pino";
import { Closers, QUEUES, countryOfLocationName, type QueueName } from "@serp/shared";
import { AccountStore, JobStore, createRedis, keySpace, waitReady } from "@serp/store";
import { createApp } from "./app.js";
import type { ApiEnv } from "./env.js";
import { FinalWaiter } from "./jobs/final-waiter.js";
import { JobService, type LocationCheck } from "./jobs/service.js";

/** Every long-lived part of the API, wired from the environment. Used by index.ts and tests. */
export async function createApiRuntime(env: ApiEnv, logger: Logger, locations?: LocationCheck) {
  const closers = new Closers();
  const keys = keySpace(env.SERP_PREFIX);
  const redis = createRedis(env.REDIS_URL, "command", "api");
  redis.on("error", (err) => logger.debug({ err: err.message }, "redis error"));
  closers.add("redis", () => redis.quit().catch(() => redis.disconnect()));
  const subscriber = createRedis(env.REDIS_URL, "subscriber", "api-sub");
  subscriber.on("error", (err) => logger.debug({ err: err.message }, "redis subscriber error"));
  closers.add("redis subscriber", () => subscriber.quit().catch(() => subscriber.disconnect()));
  await Promise.all([waitReady(redis), waitReady(subscriber)]);

  const queues = Object.fromEntries(
    QUEUES.map((name) => {
      // Producers share the fail-fast connection: a submission while Redis is down errors at once.
      const queue = new Queue(name, { connection: redis, prefix: keys.bullPrefix });
      queue.on("error", (err) => logger.debug({ err: err.message, queue: name }, "queue error"));
      closers.add(`queue ${name}`, () => queue.close());
      return [name, queue];
    }),
  ) as Record<QueueName, Queue>;

  const waiter = new FinalWaiter(subscriber, keys.finalChannel());
  await waiter.start();
  const jobs = new JobStore(redis, keys, env.JOB_RETENTION_SECONDS);
  const accounts = new AccountStore(redis, keys);
  const jobService = new JobService({
    jobs,
    queues,
    waiter,
    locations: locations ?? { countryOf: countryOfLocationName, isKnown: () => undefined },
    liveDeadlineMs: env.LIVE_DEADLINE_MS,
    logger,
  });
  const app = createApp({ accounts, jobService, logger, bodyLimit: env.BODY_LIMIT });
  return { app, redis, keys, jobs, accounts, queues, waiter, jobService, closers };
}
export type ApiRuntime = Awaited<ReturnType<typeof createApiRuntime>>;
