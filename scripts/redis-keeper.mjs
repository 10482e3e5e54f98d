#!/usr/bin/env node
/**
 * The private redis-server of `npm start`, held by a small process of its own that scripts/run.mjs
 * starts in a session of its own (detached): a terminal's Ctrl-C reaches npm and run.mjs but not
 * Redis, so Redis stays up while the API and worker finish their requests and jobs, and stops last.
 *
 *   node scripts/redis-keeper.mjs DATA_DIR APPS_GRACE_MS     (with an IPC channel to run.mjs)
 *
 * - Once Redis answers: sends `{ url }` to run.mjs and writes DATA_DIR/redis-url, which the CLI
 *   reads when REDIS_URL is unset; the file goes when Redis stops.
 * - run.mjs sends `{ apps: [pid…] }` whenever it (re)starts one. On `{ stop: true }`, on SIGTERM/
 *   SIGINT/SIGHUP, or when run.mjs is gone (its channel closed, even after a SIGKILL), the keeper
 *   waits until those processes have exited (at most APPS_GRACE_MS), then stops Redis with SIGTERM
 *   (it writes out its append-only file) and exits.
 * - A redis-server that dies on its own is started again on the same port, with the apps' back-off.
 * Plain JavaScript with Node's standard library only: it runs before dependencies are installed.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { URL_FILE, freePort, ping, redisServerProcess, waitForRedis } from "./redis.mjs";
import { Supervised, isRunning } from "./supervise.mjs";

const say = (msg) => console.log(`[run] ${msg}`);
const [dir, graceArg] = process.argv.slice(2);
const appsGraceMs = Number(graceArg) || 60_000;
const urlFile = join(dir, URL_FILE);
const send = (msg) => process.connected && process.send(msg);

/** A redis-server another `npm start` (or one left behind) runs on this data: two on one append-only file would corrupt it. */
async function alreadyRunning() {
  let url;
  try {
    url = readFileSync(urlFile, "utf8").trim();
  } catch {
    return undefined;
  }
  const port = Number(/:(\d+)\/?$/.exec(url)?.[1]);
  return port && (await ping(port)) ? url : undefined;
}

mkdirSync(dir, { recursive: true });
const other = await alreadyRunning();
if (other) {
  send({ error: `a redis-server already runs on ${dir} at ${other} (another npm start, or one left behind: stop it with redis-cli -u ${other} shutdown)` });
  process.exit(1);
}

const port = await freePort();
const url = `redis://127.0.0.1:${port}`;
let apps = [];
let stopping = false;
const redis = new Supervised("redis-server", () => redisServerProcess(port, dir), { say });
await waitForRedis(port, redis.run().child, dir).catch((err) => {
  redis.stopping = true;
  send({ error: err.message });
  process.exit(1);
});
writeFileSync(urlFile, `${url}\n`);
send({ url });

async function stop(why) {
  if (stopping) return;
  stopping = true;
  const until = Date.now() + appsGraceMs;
  while (apps.some(isRunning) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  const left = apps.filter(isRunning);
  if (left.length) say(`pids ${left.join(", ")} still run after ${appsGraceMs} ms: stopping redis-server anyway`);
  await redis.stop("SIGTERM", 10_000);
  // Only our own URL: a file another run wrote since is not ours to remove.
  try {
    if (readFileSync(urlFile, "utf8").trim() === url) rmSync(urlFile);
  } catch {
    // already gone
  }
  if (why) say(why);
  process.exit(0);
}

process.on("message", (msg) => {
  if (Array.isArray(msg?.apps)) apps = msg.apps.filter(Number.isInteger);
  if (msg?.stop) void stop();
});
process.on("disconnect", () => void stop("run.mjs is gone: redis-server stopped after the API and worker"));
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => void stop(`${signal}: redis-server stopped`));
