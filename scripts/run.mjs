#!/usr/bin/env node
/**
 * The two commands of the README, on a machine with only Node and npm:
 *   npm start  → installs dependencies if needed (and Debian's chromium for the browser transport
 *                when no remote browser is configured), starts a private redis-server when
 *                REDIS_URL is unset and a private PostgreSQL (.pg-data/) when DATABASE_URL is
 *                unset (scripts/postgres-keeper.mjs, stopped last like Redis), then the API and workers for all three queues, and supervises
 *                them: a crashed API or worker is restarted with back-off (scripts/supervise.mjs);
 *                Ctrl-C, SIGTERM or SIGHUP (or npm going away) stops the apps, then Redis; a second
 *                Ctrl-C kills them at once. Started again at once after a stop or a kill of any
 *                kind, it takes over the private servers the previous run left running, or waits
 *                for them to stop (scripts/keeper.mjs).
 *   npm test   → installs dependencies (and chromium) if needed, type-checks, starts a private
 *                redis-server (unless TEST_REDIS_URL is given) and a private PostgreSQL (unless
 *                TEST_DATABASE_URL is given; as DATABASE_URL for jest) and runs every test.
 * `npm start` reads a .env in the repository root first, when there is one (scripts/env-file.mjs).
 * Uses only Node's standard library, since it runs before dependencies exist (dotenv is imported
 * once they are).
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { ensureChromium } from "./chromium.mjs";
import { report } from "./slowest-suites.mjs";
import { readEnvFile } from "./env-file.mjs";
import { DEFAULT_DATA_DIR, freePort, spawnRedis } from "./redis.mjs";
import { DEFAULT_DATA_DIR as DEFAULT_PG_DATA_DIR, startPostgres } from "./postgres.mjs";
import { EXIT_CONFIG, Supervised, surviveLostOutput, watchParent } from "./supervise.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const PNPM = ["--yes", "pnpm@10.34.8"];
const say = (msg) => console.log(`[run] ${msg}`);
/** Where npm start keeps upstream pages when RAW_PAGES_DIR is unset (the store's default, resolved against the project). */
const DEFAULT_RAW_PAGES_DIR = ".raw-pages";

function sh(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: "inherit", cwd: root, ...opts });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${r.status ?? r.signal})`);
}

function ensureDependencies() {
  const marker = join(root, "node_modules/.modules.yaml");
  const lock = join(root, "pnpm-lock.yaml");
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(lock).mtimeMs) return;
  say("installing dependencies (pnpm via npx)…");
  sh("npx", [...PNPM, "install", "--frozen-lockfile"], { env: { ...process.env, COREPACK_INTEGRITY_KEYS: "0" } });
}

/** A private redis-server on a free loopback port, with its data in `dir`. */
async function startRedis(dir) {
  const port = await freePort();
  mkdirSync(dir, { recursive: true });
  const child = await spawnRedis(port, dir);
  return { url: `redis://127.0.0.1:${port}`, port, child };
}

/** A whole number of ms from the environment, or the apps' default when unset or not a number. */
function msFrom(env, name, fallback) {
  const n = Number(env[name]);
  return env[name] && Number.isFinite(n) && n >= 0 ? n : fallback;
}

/**
 * The private Redis (or PostgreSQL), held by scripts/redis-keeper.mjs (postgres-keeper.mjs) in a
 * session of its own, so that a terminal's Ctrl-C does not reach it and it stops after the apps,
 * even when this process is killed. One a previous npm start left running is taken over.
 */
function startKeeper(dir, appsGraceMs, script = "scripts/redis-keeper.mjs") {
  const child = spawn(process.execPath, [join(root, script), dir, String(appsGraceMs)], {
    cwd: root,
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    detached: true,
  });
  const exited = new Promise((r) => child.once("exit", r));
  const stop = async () => {
    if (child.connected) child.send({ stop: true });
    await exited;
  };
  return new Promise((ok, fail) => {
    child.once("message", (msg) => (msg.url ? ok({ ...msg, child, stop }) : fail(new Error(msg.error))));
    child.once("exit", (code) => fail(new Error(`${script} exited (${code}) before its server answered`)));
  });
}

/** What the keeper did, for the one line run.mjs says about each private server. */
function how({ url, pid, tookOver, waitedMs }, label) {
  if (tookOver) return `took over the private ${label} at ${url} (pid ${pid}) that a previous npm start left running`;
  const waited = waitedMs >= 100 ? ` after waiting ${(waitedMs / 1_000).toFixed(1)} s for the previous npm start's to stop` : "";
  return `started a private ${label} at ${url}${waited}`;
}

async function start() {
  ensureDependencies();
  // Before anything reads a setting (the browser check below reads the upstream's).
  const file = await readEnvFile(root);
  if (file) {
    const kept = file.overridden.length ? `; the environment's ${file.overridden.join(", ")} kept over it` : "";
    say(`read settings from .env (${file.applied.length} set${kept})`);
  }
  ensureChromium();
  const env = { ...process.env };
  // WORKER_PROCESSES=N: N worker processes, each supervised on its own; the i-th serves /metrics on HEALTH_PORT + i.
  const workers = Number(env.WORKER_PROCESSES || 1);
  if (!Number.isInteger(workers) || workers < 1 || workers > 64) {
    console.error(`WORKER_PROCESSES must be a whole number from 1 to 64, got "${env.WORKER_PROCESSES}"`);
    process.exit(EXIT_CONFIG);
  }
  // How long each app may take to stop on SIGTERM (its own deadlines, plus a margin) before SIGKILL.
  const grace = {
    api: msFrom(env, "LIVE_DEADLINE_MS", 60_000) + 15_000,
    worker: msFrom(env, "WORKER_SHUTDOWN_TIMEOUT_MS", 25_000) + 5_000,
  };
  let keeper;
  // With REDIS_SENTINELS, the sentinels name the Redis (docs/REDIS.md): no private one.
  if (!env.REDIS_URL && !env.REDIS_SENTINELS) {
    const dataDir = env.REDIS_DATA_DIR || DEFAULT_DATA_DIR;
    keeper = await startKeeper(resolve(root, dataDir), Math.max(grace.api, grace.worker) + 5_000);
    env.REDIS_URL = keeper.url;
    say(`REDIS_URL is not set: ${how(keeper, "redis-server")} (data in ${dataDir}; npm run cli finds it there)`);
  }
  let pgKeeper;
  if (!env.DATABASE_URL) {
    const dataDir = env.PG_DATA_DIR || DEFAULT_PG_DATA_DIR;
    pgKeeper = await startKeeper(resolve(root, dataDir), Math.max(grace.api, grace.worker) + 5_000, "scripts/postgres-keeper.mjs").catch(async (err) => {
      await keeper?.stop();
      throw err;
    });
    env.DATABASE_URL = pgKeeper.url;
    say(`DATABASE_URL is not set: ${how(pgKeeper, "PostgreSQL")} (data in ${dataDir}; npm run cli finds it there)`);
  }
  // Kept upstream pages go to a folder the API and the workers share, the project's unless set
  // (docs/RAW-PAGES.md); a bucket (RAW_PAGES_S3_BUCKET) takes its place when named.
  if (!env.RAW_PAGES_S3_BUCKET) {
    env.RAW_PAGES_DIR = resolve(root, env.RAW_PAGES_DIR || DEFAULT_RAW_PAGES_DIR);
    say(`raw pages kept in ${env.RAW_PAGES_DIR}`);
  }
  const keepers = [keeper, pgKeeper].filter(Boolean);
  recordUpstreamSettings(env);
  // Each app in a process group of its own: a terminal's Ctrl-C reaches this process only, which
  // stops them once (a second signal would force them). The guard stops them if this process dies.
  const node = [process.execPath, "--import", pathToFileURL(join(root, "scripts/parent-guard.mjs")).href, "--import", "tsx"];
  const spawnApp = (file, appEnv) => () => spawn(node[0], [...node.slice(1), file], { stdio: "inherit", cwd: root, env: appEnv, detached: true });
  const apps = [];
  // The keeper waits for these before it stops Redis, even if this process is killed.
  const tellKeeper = () => {
    for (const k of keepers) if (k.child.connected) k.child.send({ apps: apps.map((a) => a.pid).filter(Boolean) });
  };
  // An app that refuses its configuration stops the whole run: nothing works until it is fixed.
  const options = { say, onStart: tellKeeper, onConfigError: (name) => void stop(`${name}'s configuration is invalid`, EXIT_CONFIG) };
  const workerEnv = (i) => ({
    ...env,
    WORKER_QUEUES: env.WORKER_QUEUES ?? "live,fast,regular",
    ...(env.HEALTH_PORT && i > 0 ? { HEALTH_PORT: String(Number(env.HEALTH_PORT) + i) } : {}),
  });
  apps.push(
    new Supervised("api", spawnApp("apps/api/src/index.ts", env), options),
    ...Array.from({ length: workers }, (_, i) => new Supervised(workers > 1 ? `worker ${i + 1}` : "worker", spawnApp("apps/worker/src/index.ts", workerEnv(i)), options)),
  );
  for (const app of apps) app.run();

  let stopping = false;
  const stop = async (why, code = 0) => {
    if (stopping) {
      say(`${why} again: killing the API and worker now`);
      await Promise.all(apps.map((a) => a.kill()));
      await Promise.all(keepers.map((k) => k.stop()));
      process.exit(1);
    }
    stopping = true;
    const servers = [keeper && "redis-server", pgKeeper && "PostgreSQL"].filter(Boolean).join(" and ");
    say(`${why}: stopping the API and worker${servers ? `, then ${servers}` : ""} (again to force)`);
    await Promise.all(apps.map((a) => a.stop("SIGTERM", grace[a.name])));
    await Promise.all(keepers.map((k) => k.stop()));
    say("stopped");
    process.exit(code);
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(signal, () => void stop(signal));
  // Under npm, SIGTERM to npm reaches only its `sh -c`, never this process: npm's going is the signal.
  // (Started directly, by a shell that then exits, it keeps running, as any background job does.)
  if (process.env.npm_lifecycle_event) watchParent(() => void stop("npm is gone"));
}

/**
 * `npm test -- --fast`: the inner loop's tier. The unit tests of the packages and apps (their own
 * Redis and PostgreSQL still real), without the suites that parse every captured page many times
 * over, drive Chromium, or start whole stacks (`test/`); no type-check (`npm run typecheck`).
 */
const FAST_TIER = ["--testPathPatterns", "/(packages|apps)/|/test/(docs|cli)/", "--testPathIgnorePatterns", "/node_modules/|/(conformance|html-equivalence|class-rename|class-rename-web|kind-fields|organic-fields|web-rich-blocks|field-audit|browser|browser-captured|parse-pool)\\.test\\.ts$"];

/**
 * The drills that measure time or kill and restart servers under load (a latency ratio, a failover
 * within its deadlines, processes gone within their drain deadlines, jobs handed back well inside
 * the lock duration, the exits proof's per-address budget): they run one file at a time in each of
 * two lanes beside the rest (split by their known durations: heavy-first-sequencer.mjs), so no more
 * than two of them compete with each other. Everything else runs
 * in parallel: each stack has its own Redis key prefix and PostgreSQL schema, and a drill's private
 * servers take free ports.
 */
const ALONE = ["/test/drills/(?!credits-race|fuzz)[^/]+\\.test\\.ts$", "/test/ops/(supervisor|shutdown)\\.test\\.ts$", "/test/exits/proof\\.test\\.ts$"];
/**
 * Jest processes for the rest: most files wait on Redis, HTTP and child processes (the suite's
 * CPU is about a third of its files' wall time: the slowest-files report), so four, beside the
 * drills' two lanes, keep two cores busy (measured: issue 28). A worker whose heap passed 2 GB after
 * a file (captured pages, a stack's modules) is replaced by a fresh one.
 */
const WORKERS = ["--maxWorkers=4", "--workerIdleMemoryLimit=2GB"];

async function test(rawArgs) {
  const started = Date.now();
  const fast = rawArgs.includes("--fast");
  const args = rawArgs.filter((a) => a !== "--fast");
  ensureDependencies();
  let typecheck;
  if (fast) say("fast tier: unit tests only, no type-check (the whole suite: npm test)");
  else {
    ensureChromium();
    // Beside Jest: its answer is awaited before the run's exit status is given.
    say("type-checking (beside the tests)…");
    const tsc = spawn(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"], { stdio: "inherit", cwd: root });
    typecheck = new Promise((ok) => tsc.once("exit", (code, signal) => ok(code ?? signal)));
  }
  const env = { ...process.env };
  let redis;
  let dir;
  if (env.TEST_REDIS_URL) env.REDIS_URL = env.TEST_REDIS_URL;
  else {
    dir = mkdtempSync(join(tmpdir(), "serp-test-redis-"));
    redis = await startRedis(dir);
    env.REDIS_URL = redis.url;
    say(`tests use a private redis-server at ${redis.url}`);
  }
  const pg = await privatePostgres(env, "TEST_DATABASE_URL", "serp-test-pg-");
  if (pg) say(`tests use a private PostgreSQL at ${pg.url}`);
  // Apps a test starts as processes keep their pages here, not in the project's folder.
  const pagesDir = env.RAW_PAGES_DIR ? undefined : mkdtempSync(join(tmpdir(), "serp-test-pages-"));
  if (pagesDir) env.RAW_PAGES_DIR = pagesDir;
  // Each Jest run adds its files' times here; the ten slowest of them all are printed at the end.
  const timings = mkdtempSync(join(tmpdir(), "serp-test-timings-"));
  env.SLOWEST_SUITES_FILE = join(timings, "suites.jsonl");
  // An 8 GB heap per Jest process: a process's heap grows with each file's modules and captured pages.
  // `held`: its output is kept and written at once when it ends, so that two Jests at once do not
  // interleave their lines.
  const jest = (jestArgs, { held = false } = {}) =>
    new Promise((ok) => {
      const child = spawn(
        process.execPath,
        ["--max-old-space-size=8192", "--experimental-vm-modules", "--no-warnings=ExperimentalWarning", "node_modules/jest/bin/jest.js", ...jestArgs],
        { stdio: held ? ["ignore", "pipe", "pipe"] : "inherit", cwd: root, env },
      );
      const output = [];
      if (held) for (const stream of [child.stdout, child.stderr]) stream.on("data", (chunk) => output.push(chunk));
      child.once("close", (code) => {
        if (held) process.stderr.write(Buffer.concat(output));
        ok(code ?? 1);
      });
    });
  // Files named on the command line, or the fast tier, run as asked, in parallel.
  let runs;
  if (fast) runs = [jest([...FAST_TIER, ...WORKERS, ...args])];
  else if (args.some((a) => !a.startsWith("-"))) runs = [jest([...WORKERS, ...args])];
  else {
    say("the test files in parallel, and beside them the timing drills one at a time in two lanes (their output when each lane ends)");
    const lanes = [1, 2].map((i) => jest(["--runInBand", `--shard=${i}/2`, "--testPathPatterns", ...ALONE, ...args], { held: true }));
    runs = [jest([...WORKERS, "--testPathIgnorePatterns", "/node_modules/", ...ALONE, ...args]), ...lanes];
  }
  const statuses = await Promise.all(runs);
  report(env.SLOWEST_SUITES_FILE, started, root + "/");
  const typed = await typecheck;
  if (typed !== undefined && typed !== 0) say(`the type-check failed (${typed})`);
  await pg?.stop();
  redis?.child.kill("SIGTERM");
  for (const d of [dir, pagesDir, timings]) if (d) rmSync(d, { recursive: true, force: true });
  process.exit(statuses.find((s) => s !== 0) ?? (typed ? 1 : 0));
}

/** As apps/cli/src/upstream-settings.ts reads it. */
const UPSTREAM_SETTINGS_FILE = "upstream-env.json";

/**
 * The upstream settings this run gives its workers (UPSTREAM_*, CANARY_*, CAPTCHA_* aside), in the
 * Redis data folder beside `redis-url`, so `npm run cli -- canary` asks the upstream the running
 * stack asks, as the CLI's Redis is the running stack's. Readable by its owner only: a proxy list
 * may carry credentials.
 */
function recordUpstreamSettings(env) {
  const dir = resolve(root, env.REDIS_DATA_DIR || DEFAULT_DATA_DIR);
  const settings = Object.fromEntries(Object.entries(env).filter(([k]) => /^(UPSTREAM|CANARY|EXIT|BROWSER)_/.test(k)));
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, UPSTREAM_SETTINGS_FILE), JSON.stringify({ pid: process.pid, cwd: root, env: settings }), { mode: 0o600 });
  } catch (err) {
    say(`could not record the upstream settings for the CLI's canary: ${err.message}`);
  }
}

/**
 * A private PostgreSQL for one run in a temporary folder (no fsync: thrown away after), unless
 * `given` names a DATABASE_URL to use; sets env.DATABASE_URL either way. Its `stop()` also removes
 * the folder.
 */
async function privatePostgres(env, given, tmpPrefix) {
  if (env[given]) {
    env.DATABASE_URL = env[given];
    return undefined;
  }
  const pgDir = mkdtempSync(join(tmpdir(), tmpPrefix));
  const pg = await startPostgres(pgDir, { fast: true });
  env.DATABASE_URL = pg.url;
  return {
    url: pg.url,
    stop: async () => {
      await pg.stop();
      rmSync(pgDir, { recursive: true, force: true });
    },
  };
}

/** `npm run bench`: every benchmark, on a private Redis unless REDIS_URL is set, and a private PostgreSQL unless DATABASE_URL is. */
async function bench(args) {
  ensureDependencies();
  const env = { ...process.env };
  let redis;
  let dir;
  if (!env.REDIS_URL) {
    dir = mkdtempSync(join(tmpdir(), "serp-bench-redis-"));
    redis = await startRedis(dir);
    env.REDIS_URL = redis.url;
  }
  const pg = await privatePostgres(env, "DATABASE_URL", "serp-bench-pg-");
  const r = spawnSync(process.execPath, ["--import", "tsx", args[0] ?? "bench/run.ts"], { stdio: "inherit", cwd: root, env });
  await pg?.stop();
  redis?.child.kill("SIGTERM");
  if (dir) rmSync(dir, { recursive: true, force: true });
  process.exit(r.status ?? 1);
}

surviveLostOutput();
const [command, ...rest] = process.argv.slice(2);
if (command === "start") {
  // A server that cannot be had (another npm start holds it) is one line, not a stack trace.
  await start().catch((err) => {
    say(`cannot start: ${err.message}`);
    process.exit(1);
  });
}
else if (command === "test") await test(rest);
else if (command === "bench") await bench(rest);
else {
  console.error("usage: node scripts/run.mjs start|test [jest args]|bench [file]");
  process.exit(2);
}
