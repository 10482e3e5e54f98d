import type { Worker } from "bullmq";
import { pino } from "pino";
import { createMetrics } from "@serp/metrics";
import { Closers, LogOutput, onShutdown } from "@serp/shared";
import { createRedis, keySpace, openPageBlobs, redisTargetOf, RedisExitHealth, UpstreamStatusBoard } from "@serp/store";
import { CaptchaSolver, captchaOptionsOf, ConfigFileError, createUpstream, exitHealthOptionsOf, upstreamOptionsOf } from "@serp/upstream";
import { drainWorkers, trackJobsInFlight, workerShutdownBounds } from "./drain.js";
import { loadEnv, webhookOptions } from "./env.js";
import { startHealthServer, workerReadiness, type HealthServer } from "./health.js";
import { createWorkerRuntime, type WorkerRuntime } from "./runtime.js";
import { scrapeGauges } from "./scrape-gauges.js";
import { watchUpstream } from "./upstream-watch.js";

/** Log lines go to standard output; a reader that stalls or is gone never holds the process up. */
const output = new LogOutput();

/**
 * Every setting is checked before anything connects: a bad one is a single fatal log line naming it,
 * then exit 78 (EX_CONFIG: npm start's supervisor does not restart it), as the API does.
 */
function configuration() {
  try {
    const env = loadEnv();
    return { env, fromEnv: upstreamOptionsOf(env), exitOptions: exitHealthOptionsOf(env), captchaOptions: captchaOptionsOf(env) };
  } catch (err) {
    // Only settings are read here (the upstream's include its CA file): any failure is one.
    pino({ base: { app: "worker" } }, output).fatal(String((err as Error).message ?? err).replace(/\s*\n\s*/g, "; "));
    process.exit(78);
  }
}
const { env, fromEnv, exitOptions, captchaOptions } = configuration();
const { WORKER_SHUTDOWN_TIMEOUT_MS } = env;
/** Past the deadline, handing jobs back and closing get until handBackMs; the closers after them until exitAfterMs. */
const { handBackMs, exitAfterMs } = workerShutdownBounds(WORKER_SHUTDOWN_TIMEOUT_MS);
const logger = pino({ level: env.LOG_LEVEL, base: { app: "worker", queues: env.WORKER_QUEUES.join(",") } }, output);
const metrics = createMetrics("worker");
/** Exit health lives in Redis, so an exit one worker saw blocked rests for the whole fleet (docs/proxies.md). */
const exitRedis = createRedis(redisTargetOf(env), "command", "worker-exits");
exitRedis.on("error", (err) => logger.debug({ err: err.message }, "redis exits error"));
const upstream = configured(() =>
  createUpstream(
  { ...fromEnv, parseThreads: env.PARSE_THREADS },
  {
    log: (level, msg, fields) => logger[level](fields ?? {}, msg),
    exitHealth: new RedisExitHealth(exitRedis, keySpace(env.SERP_PREFIX), exitOptions),
    exitEvents: { sessionOpened: (pool) => metrics.exitSessions.inc({ pool }), sessionClosed: (pool) => metrics.exitSessions.dec({ pool }) },
    // The opt-in CAPTCHA rung (docs/operations.md, "CAPTCHA solving"): off unless CAPTCHA_SOLVER_URL and _KEY are set.
    ...(captchaOptions
      ? {
          captcha: new CaptchaSolver({ ...captchaOptions, redis: exitRedis, redisKey: `${env.SERP_PREFIX}:captcha:solves` }),
          onCaptcha: ({ pool, result, cost }) => {
            if (result === "met") metrics.captchas.inc({ pool });
            else metrics.captchaSolves.inc({ pool, result });
            if (cost) metrics.captchaCost.inc({ pool }, cost);
          },
        }
      : {}),
  },
  ),
);
if (captchaOptions) logger.warn({ maxPerHour: captchaOptions.maxPerHour }, "CAPTCHA solving is ON (CAPTCHA_SOLVER_URL): /sorry/ pages are solved through a paid solver; see the legal note in docs/operations.md");

/** The configuration files (profile table, geotargets, proxies) are settings too: a bad one is one fatal line, then exit 78. */
function configured<T>(load: () => T): T {
  try {
    return load();
  } catch (err) {
    if (!(err instanceof ConfigFileError)) throw err;
    logger.fatal(err.message);
    process.exit(78);
  }
}
if (fromEnv.tlsInsecure) logger.warn("UPSTREAM_TLS_INSECURE=true: upstream certificates are NOT checked (upstream requests only)");
else if (fromEnv.ca && hasImpersonating()) {
  logger.warn("UPSTREAM_CA_FILE is trusted by the http transport only: impersonating profiles cannot take a CA, so against a private-CA upstream they fail unless UPSTREAM_TLS_INSECURE=true");
}

function hasImpersonating(): boolean {
  return Object.values(upstream.profiles().kinds).some((list) => list.some((p) => p.transport === "impersonate"));
}

/** Set once the workers run: the runtime, the BullMQ workers to drain, and their jobs in flight. */
let running: { rt: WorkerRuntime; workers: Worker[]; inFlight: ReturnType<typeof trackJobsInFlight> } | undefined;
let stopping = false;
// Up before Redis is reached, so liveness answers while the workers wait for Redis at boot.
const health: HealthServer | undefined =
  env.HEALTH_PORT === undefined
    ? undefined
    : await startHealthServer({
        port: env.HEALTH_PORT,
        host: env.HOST,
        metricsToken: env.METRICS_TOKEN,
        registry: metrics.registry,
        logger,
        refresh: scrapeGauges(upstream, metrics, logger),
        ready: async () => {
          if (stopping) return "shutting down";
          if (!running) return "starting";
          return workerReadiness(running.rt.store, running.workers);
        },
      });

/**
 * Closed last, in this order after the runtime's closers: a job finishing during the drain still
 * needs the upstream, and liveness answers until the end.
 */
const closers = new Closers();
if (health) closers.add("health server", () => health.close());
closers.add("upstream", () => upstream.close());
closers.add("redis exits", () => exitRedis.quit().then(() => undefined, () => exitRedis.disconnect()));
onShutdown(closers, {
  deadlineMs: 5_000,
  // The drain's own bound (below) comes first; this one also covers the closers after it.
  exitAfterMs,
  begin: drain,
  onError: (name, err) => logger.error({ err, name }, "close failed"),
  end: (clean) => logger.info({ clean }, "stopped"),
  again: forceStop,
});

const rt = await createWorkerRuntime({
  redisUrl: redisTargetOf(env),
  databaseUrl: env.DATABASE_URL,
  prefix: env.SERP_PREFIX,
  queues: env.WORKER_QUEUES,
  concurrency: env.WORKER_CONCURRENCY,
  accountShare: env.WORKER_ACCOUNT_SHARE,
  retentionSeconds: env.JOB_RETENTION_SECONDS,
  jobHotSeconds: env.JOB_HOT_SECONDS,
  rawHtmlRetentionSeconds: env.RAW_HTML_RETENTION_SECONDS,
  pageBlobs: openPageBlobs(env),
  resultBlobs: env.JOB_RESULT_STORE === "page-store" ? openPageBlobs(env, "results") : undefined,
  cache: { ttlSeconds: env.CACHE_TTL_SECONDS, hitCredits: env.CACHE_HIT_CREDITS, scope: env.CACHE_SCOPE },
  lockDurationMs: env.WORKER_LOCK_MS,
  sweep: { graceMs: env.JOB_SWEEP_GRACE_MS },
  scraper: upstream,
  logger,
  metrics,
  webhooks: webhookOptions(env),
});
const upstreamWatch = watchUpstream({
  upstream,
  board: new UpstreamStatusBoard(rt.store, rt.keys),
  logger,
  metrics,
  statusIntervalMs: env.UPSTREAM_STATUS_INTERVAL_MS,
  canaryIntervalMs: env.CANARY_INTERVAL_MS,
  canaryProductId: env.CANARY_PRODUCT_ID,
});
closers.adopt(rt.closers);
closers.add("upstream watch", () => upstreamWatch.close());
// Scrape workers and, when this process serves it, the webhook delivery worker.
const workers = rt.webhooks?.worker ? [...rt.workers, rt.webhooks.worker] : rt.workers;
running = { rt, workers, inFlight: trackJobsInFlight(workers) };
logger.info({ concurrency: env.WORKER_CONCURRENCY, upstream: env.UPSTREAM_BASE_URL ?? "real hosts" }, "workers ready");

/** A second Ctrl-C: the operator does not want to wait; jobs in flight are retaken after their lock expires. */
function forceStop(signal: string): void {
  logger.warn({ signal }, "second signal: stopping now, without finishing jobs in flight");
}

/** Takes no new job and lets the ones in flight finish, up to the deadline; the closers run after it. */
async function drain(signal: string): Promise<void> {
  stopping = true;
  // Nothing below may keep the process up past its deadline: with Redis gone, closing BullMQ's
  // connections and handing jobs back wait on reconnection forever.
  setTimeout(() => {
    logger.error({ deadlineMs: handBackMs }, "could not stop cleanly in time (is Redis reachable?): exiting now");
    process.exit(1);
  }, handBackMs).unref();
  if (!running) {
    // Signalled while still waiting for Redis at boot: no job taken, nothing to finish.
    logger.info({ signal }, "stopping before the workers started");
    process.exit(0);
  }
  const { workers, inFlight } = running;
  logger.info({ signal, deadlineMs: WORKER_SHUTDOWN_TIMEOUT_MS }, "finishing jobs in flight, then stopping");
  const drained = await drainWorkers(workers, inFlight, WORKER_SHUTDOWN_TIMEOUT_MS, logger);
  if (!drained.finished) {
    // The jobs still running belong to other workers now; their processors die with this process.
    logger.warn({ handedBack: drained.handedBack, notHandedBack: drained.notHandedBack }, "deadline passed: jobs in flight handed back");
    await health?.close();
    process.exit(0);
  }
}
