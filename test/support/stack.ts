/**
 * A whole service on loopback for tests: the API runtime, real BullMQ workers and the replay
 * upstream, on the real Redis the test command started (REDIS_URL), under a key prefix of its own.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pino, type Logger } from "pino";
import { Redis } from "ioredis";
import { loadEnv } from "@serp/api/env";
import { createApiRuntime, type ApiRuntime } from "@serp/api/runtime";
import { startReplayServer, type ReplayOptions, type ReplayServer } from "@serp/replay";
import type { QueueName } from "@serp/shared";
import { createUpstream, profileTable, readUpstreamEnv, shippedProfilesFile, type UpstreamDeps } from "@serp/upstream";
import { loadEnv as loadWorkerEnv, type WorkerEnv } from "@serp/worker/env";
import { createWorkerRuntime, type WorkerRuntime, type WorkerRuntimeDeps } from "@serp/worker/runtime";
import { createPgPool, createRedis, migrate, redisTargetOf, withSchema } from "@serp/store";
import { FIXTURES_DIR, GEOTARGETS_DIR, fixturesAvailable, geotargetsAvailable } from "../../packages/upstream/test/fixtures-dir.js";

export { FIXTURES_DIR, fixturesAvailable, geotargetsAvailable };
export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
/** The test run's PostgreSQL (npm test starts a private one); unset: stacks run without PostgreSQL. */
export const DATABASE_URL = process.env.DATABASE_URL;
export const silent = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });

/**
 * The shipped profile table without its browser rungs, unless a test brings its own: most tests are
 * about the service around the upstream, and a Chromium per stack would only slow them (the browser
 * tier has its own tests, test/e2e/browser.test.ts).
 */
const shippedTable = JSON.parse(readFileSync(shippedProfilesFile(), "utf8")) as { profiles: Record<string, { transport: string }>; kinds: Record<string, string[]> };
const WITHOUT_BROWSER = profileTable({
  ...shippedTable,
  kinds: Object.fromEntries(Object.entries(shippedTable.kinds).map(([k, names]) => [k, names.filter((n) => shippedTable.profiles[n]!.transport !== "browser")])),
});

export interface StackOptions {
  env?: Record<string, string>;
  /** Another Redis than the test run's (a drill's private one); REDIS_SENTINELS in `env` names a Sentinel set instead. */
  redisUrl?: string;
  /**
   * Another PostgreSQL than the test run's (a drill's private one), or false for none. The stack
   * works in a schema of its own on it (named as its key prefix), made and migrated at start and
   * dropped at close: stacks share one database as they share one Redis.
   */
  databaseUrl?: string | false;
  /** Queues the workers serve; [] starts no worker. */
  workerQueues?: QueueName[];
  concurrency?: number;
  replay?: Partial<ReplayOptions>;
  upstreamTimeoutMs?: number;
  /** Parse threads of the workers' upstream (as PARSE_THREADS); 0, parsing on the event loop, unless set. */
  parseThreads?: number;
  withGeotargets?: boolean;
  /** Webhook delivery for the workers (their WEBHOOK_* settings; private targets refused unless allowed here), or false for none. */
  webhooks?: WebhookOptions | false;
  /** The API's logger (silent unless set). */
  apiLogger?: Logger;
  /** More upstream settings for the workers (a browser, breakers…), as the environment names them, given the replay (`caFileOf` for its certificate). */
  upstream?: (replay: ReplayServer) => Record<string, unknown>;
  upstreamDeps?: UpstreamDeps;
  /** The workers' WORKER_ACCOUNT_SHARE (its default unless set). */
  accountShare?: number;
  /** The workers' JOB_HOT_SECONDS. */
  jobHotSeconds?: number;
  /** The workers' metrics (none unless set). */
  workerMetrics?: WorkerRuntimeDeps["metrics"];
  /** The workers' sweeper of jobs never queued (createWorkerRuntime's `sweep`; its defaults unless set). */
  sweep?: WorkerRuntimeDeps["sweep"];
  /** The workers' sweeper of pages past their retention (createWorkerRuntime's `rawPageSweep`; its defaults unless set). */
  rawPageSweep?: WorkerRuntimeDeps["rawPageSweep"];
}

/** The workers' webhook settings, by the names tests give them. */
export interface WebhookOptions {
  allowPrivateTargets?: boolean;
  timeoutMs?: number;
  concurrency?: number;
  retryDelaysMs?: readonly number[];
}

/** Options given, as the workers' settings (WEBHOOK_*, WORKER_*) name them. */
function workerSettings(o: StackOptions, queues: readonly QueueName[]): Record<string, string> {
  const w = o.webhooks || {};
  const given = {
    WORKER_QUEUES: queues.join(","),
    WORKER_CONCURRENCY: o.concurrency ?? 8,
    WORKER_LOCK_MS: 5_000,
    WORKER_ACCOUNT_SHARE: o.accountShare,
    JOB_HOT_SECONDS: o.jobHotSeconds,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: w.allowPrivateTargets ?? false,
    WEBHOOK_TIMEOUT_MS: w.timeoutMs,
    WEBHOOK_CONCURRENCY: w.concurrency,
    WEBHOOK_RETRY_DELAYS_MS: w.retryDelaysMs?.join(","),
  };
  return Object.fromEntries(Object.entries(given).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)]])));
}

export interface Stack {
  api: ApiRuntime;
  upstream: ReturnType<typeof createUpstream>;
  worker?: WorkerRuntime;
  replay: ReplayServer;
  prefix: string;
  redis: Redis;
  /**
   * What another process on this stack needs to share its keys, pages and results: REDIS_URL,
   * SERP_PREFIX and the page store's settings (RAW_PAGES_*, JOB_RESULT_STORE) as the stack has them.
   */
  settings: Record<string, string>;
  /** The folder of kept pages the API and workers share (a temporary one unless env sets RAW_PAGES_DIR), when no bucket is set. */
  rawPagesDir?: string;
  /** The stack's PostgreSQL URL (its own schema on the search_path), when it has one. */
  databaseUrl?: string;
  /**
   * Settings for another worker of this stack (a second process, a slower lock…): the stack's own
   * Redis, prefix, database and page store, with `settings` over them, parsed as the worker parses its environment.
   */
  workerEnv(settings: Record<string, string>): WorkerEnv;
  /** A new account holding `credits`, and a key for it. */
  account(credits?: number): Promise<{ accountId: string; key: string; auth: string }>;
  close(): Promise<void>;
}

/** The replay's self-signed certificate in a file, for UPSTREAM_CA_FILE (as `npm run replay` writes it). */
export function caFileOf(replay: ReplayServer): string {
  const file = join(tmpdir(), `replay-${replay.port}-cert.pem`);
  writeFileSync(file, replay.certPem ?? "");
  return file;
}

export async function startStack(o: StackOptions = {}): Promise<Stack> {
  const prefix = `t${randomBytes(5).toString("hex")}`;
  const replay = await startReplayServer({ dir: FIXTURES_DIR, ...o.replay });
  const geotargetsDir = o.withGeotargets && geotargetsAvailable ? GEOTARGETS_DIR : undefined;
  const upstream = createUpstream(
    readUpstreamEnv({
      UPSTREAM_BASE_URL: replay.url,
      UPSTREAM_TIMEOUT_MS: o.upstreamTimeoutMs ?? 5_000,
      GEOTARGETS_DIR: geotargetsDir,
      PARSE_THREADS: o.parseThreads ?? 0,
      // A file's tests inject faults one after another; rungs set aside by one test would change the next.
      UPSTREAM_BREAKER_THRESHOLD: 1_000,
      ...o.upstream?.(replay),
    }),
    { profiles: WITHOUT_BROWSER, ...o.upstreamDeps },
  );
  const redisUrl = o.redisUrl ?? REDIS_URL;
  const pgBase = o.databaseUrl === false ? undefined : (o.databaseUrl ?? DATABASE_URL);
  const databaseUrl = pgBase ? withSchema(pgBase, prefix) : undefined;
  // Migrated once here; the API and worker runtimes find nothing left to do.
  if (databaseUrl) await migrate(databaseUrl);
  // Kept pages in a folder of the stack's own, removed at close, unless the test names a folder or a bucket.
  const tempPages = o.env?.RAW_PAGES_DIR || o.env?.RAW_PAGES_S3_BUCKET ? undefined : mkdtempSync(join(tmpdir(), `serp-pages-${prefix}-`));
  const source = {
    REDIS_URL: redisUrl, SERP_PREFIX: prefix, LOG_LEVEL: "silent", ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}), ...(tempPages ? { RAW_PAGES_DIR: tempPages } : {}), ...o.env,
  };
  const env = loadEnv(source);
  const api = await createApiRuntime(env, o.apiLogger ?? silent, upstream.locations);
  const queues = o.workerQueues ?? ["live", "fast", "regular"];
  const worker = queues.length
    ? await createWorkerRuntime(loadWorkerEnv({ ...source, ...workerSettings(o, queues) }), {
        scraper: upstream,
        logger: silent,
        metrics: o.workerMetrics,
        sweep: o.sweep,
        rawPageSweep: o.rawPageSweep,
        ...(o.webhooks === false ? { webhooks: false as const } : {}),
      })
    : undefined;
  // Through the sentinels when the stack has them, following their failovers as the service does.
  const redis = env.REDIS_SENTINELS ? createRedis(redisTargetOf(env), "worker", "test-stack") : new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  redis.on("error", () => undefined);
  return {
    api,
    upstream,
    worker,
    replay,
    prefix,
    redis,
    databaseUrl,
    rawPagesDir: env.RAW_PAGES_S3_BUCKET ? undefined : env.RAW_PAGES_DIR,
    settings: {
      REDIS_URL: redisUrl,
      SERP_PREFIX: prefix,
      ...Object.fromEntries(Object.entries(source).filter((e): e is [string, string] => /^(RAW_PAGES_|JOB_RESULT_STORE$)/.test(e[0]) && typeof e[1] === "string")),
    },
    workerEnv: (settings) => loadWorkerEnv({ ...source, ...settings }),
    async account(credits = 100) {
      const acct = await api.accounts.create("test");
      const { key } = await api.accounts.createKey(acct.id);
      if (credits > 0) await api.accounts.grant(acct.id, credits, "test");
      return { accountId: acct.id, key, auth: `Bearer ${key}` };
    },
    async close() {
      await worker?.closers.closeAll(10_000);
      await api.closers.closeAll(10_000);
      await upstream.close();
      await replay.close();
      // Leave the shared Redis as it was found.
      for (const pattern of [`${prefix}:*`, `{${prefix}}:*`]) {
        let cursor = "0";
        do {
          const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
          cursor = next;
          if (keys.length) await redis.del(...keys);
        } while (cursor !== "0");
      }
      redis.disconnect();
      if (tempPages) rmSync(tempPages, { recursive: true, force: true });
      if (databaseUrl) {
        const pool = createPgPool(pgBase!, "test-stack", () => undefined);
        await pool.query(`DROP SCHEMA IF EXISTS "${prefix}" CASCADE`).finally(() => pool.end());
      }
    },
  };
}

/** Polls GET /v1/jobs/{id} until the job is final. */
export async function pollUntilFinal(
  get: () => Promise<{ status: number; body: { job: { status: string } } }>,
  timeoutMs = 20_000,
): Promise<{ status: number; body: { job: { status: string; [k: string]: unknown }; result: unknown } }> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = (await get()) as { status: number; body: { job: { status: string }; result: unknown } };
    if (res.status === 200 && ["completed", "failed"].includes(res.body.job.status)) return res;
    if (Date.now() > until) throw new Error(`job not final after ${timeoutMs} ms: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The statuses of `ids` (`lost` for a job whose record is gone) once every one is completed, or as
 * they stand when `withinMs` has passed: what a drill counts after its fault.
 */
export async function statusesOnceCompleted(jobs: { status(id: string): Promise<string | null> }, ids: readonly string[], withinMs: number): Promise<string[]> {
  const until = Date.now() + withinMs;
  for (;;) {
    const statuses = await Promise.all(ids.map(async (id) => (await jobs.status(id)) ?? "lost"));
    if (statuses.every((s) => s === "completed") || Date.now() > until) return statuses;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/**
 * The environment of an app process a test (or bench) starts on `stack`: this process's, with the
 * stack's settings (its Redis prefix, its page store) and its own PostgreSQL schema (the run's
 * DATABASE_URL names the database's default schema, where a child's ledger drainer would drain the
 * stack's entries away from it).
 */
export function childEnv(stack: Pick<Stack, "settings" | "databaseUrl">, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...stack.settings, ...extra };
  if (stack.databaseUrl) env.DATABASE_URL = stack.databaseUrl;
  else delete env.DATABASE_URL;
  return env;
}
