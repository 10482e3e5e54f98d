#!/usr/bin/env node
/**
 * The two commands of the README, on a machine with only Node and npm:
 *   npm start  → installs dependencies if needed (and Debian's chromium for the browser transport
 *                when no remote browser is configured), starts a private redis-server when
 *                REDIS_URL is unset, then the API and workers for all three queues.
 *   npm test   → installs dependencies (and chromium) if needed, type-checks, starts a private
 *                redis-server (unless TEST_REDIS_URL is given) and runs every test.
 * Uses only Node's standard library, since it runs before dependencies exist.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureChromium } from "./chromium.mjs";
import { freePort, spawnRedis } from "./redis.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const PNPM = ["--yes", "pnpm@10.34.8"];
const say = (msg) => console.log(`[run] ${msg}`);

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

function run(name, args, env) {
  const child = spawn(process.execPath, args, { stdio: "inherit", cwd: root, env });
  child.on("exit", (code, signal) => say(`${name} exited (${code ?? signal})`));
  return child;
}

async function start() {
  ensureDependencies();
  ensureChromium();
  const env = { ...process.env };
  const children = [];
  if (!env.REDIS_URL) {
    const redis = await startRedis(join(root, ".redis-data"));
    env.REDIS_URL = redis.url;
    children.push(redis.child);
    say(`REDIS_URL is not set: started a private redis-server at ${redis.url} (data in .redis-data/)`);
  }
  const tsx = ["--import", "tsx"];
  const api = run("api", [...tsx, "apps/api/src/index.ts"], env);
  const worker = run("worker", [...tsx, "apps/worker/src/index.ts"], { ...env, WORKER_QUEUES: env.WORKER_QUEUES ?? "live,fast,regular" });
  children.unshift(api, worker);
  let stopping = false;
  const stop = async (code = 0) => {
    if (stopping) return;
    stopping = true;
    for (const c of [api, worker]) c.kill("SIGTERM");
    await Promise.all([api, worker].map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once("exit", r)))));
    for (const c of children.slice(2)) c.kill("SIGTERM");
    process.exit(code);
  };
  process.on("SIGINT", () => void stop());
  process.on("SIGTERM", () => void stop());
  for (const c of [api, worker]) c.on("exit", (code) => void stop(code ?? 1));
}

async function test(args) {
  ensureDependencies();
  ensureChromium();
  say("type-checking…");
  sh(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"]);
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
  const r = spawnSync(
    process.execPath,
    ["--experimental-vm-modules", "--no-warnings=ExperimentalWarning", "node_modules/jest/bin/jest.js", ...args],
    { stdio: "inherit", cwd: root, env },
  );
  redis?.child.kill("SIGTERM");
  if (dir) rmSync(dir, { recursive: true, force: true });
  process.exit(r.status ?? 1);
}

/** `npm run bench`: every benchmark, on a private Redis unless REDIS_URL is set. */
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
  const r = spawnSync(process.execPath, ["--import", "tsx", args[0] ?? "bench/run.ts"], { stdio: "inherit", cwd: root, env });
  redis?.child.kill("SIGTERM");
  if (dir) rmSync(dir, { recursive: true, force: true });
  process.exit(r.status ?? 1);
}

const [command, ...rest] = process.argv.slice(2);
if (command === "start") await start();
else if (command === "test") await test(rest);
else if (command === "bench") await bench(rest);
else {
  console.error("usage: node scripts/run.mjs start|test [jest args]|bench [file]");
  process.exit(2);
}
