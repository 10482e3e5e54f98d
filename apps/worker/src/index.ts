import { pino } from "pino";
import { createUpstream } from "@serp/upstream";
import { loadEnv } from "./env.js";
import { createWorkerRuntime } from "./runtime.js";

const env = loadEnv();
const logger = pino({ level: env.LOG_LEVEL, base: { app: "worker" } });
const upstream = createUpstream({
  baseUrl: env.UPSTREAM_BASE_URL,
  proxies: env.UPSTREAM_PROXIES,
  timeoutMs: env.UPSTREAM_TIMEOUT_MS,
  geotargetsDir: env.GEOTARGETS_DIR,
});
const rt = await createWorkerRuntime({
  redisUrl: env.REDIS_URL,
  prefix: env.SERP_PREFIX,
  queues: env.WORKER_QUEUES,
  concurrency: env.WORKER_CONCURRENCY,
  retentionSeconds: env.JOB_RETENTION_SECONDS,
  scraper: upstream,
  logger,
});
rt.closers.add("upstream", () => upstream.close());
logger.info({ queues: env.WORKER_QUEUES, concurrency: env.WORKER_CONCURRENCY, upstream: env.UPSTREAM_BASE_URL ?? "real hosts" }, "workers ready");

let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "finishing jobs in flight, then stopping");
    await rt.closers.closeAll(30_000, (name, err) => logger.error({ err, name }, "close failed"));
    process.exit(0);
  });
}
