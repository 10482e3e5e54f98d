#!/usr/bin/env node
/**
 * The private PostgreSQL of `npm start`, held like its Redis (scripts/redis-keeper.mjs): a small
 * process in a session of its own, so a terminal's Ctrl-C does not reach the server, which stays up
 * while the API and worker finish, and stops last.
 *
 *   node scripts/postgres-keeper.mjs DATA_DIR APPS_GRACE_MS     (with an IPC channel to run.mjs)
 *
 * - Makes the cluster in DATA_DIR when missing (scripts/postgres.mjs), starts it on a free loopback
 *   port, creates the apps' database, sends `{ url }` to run.mjs and writes DATA_DIR/postgres-url
 *   (the CLI reads it when DATABASE_URL is unset); the file goes when the server stops.
 * - run.mjs sends `{ apps: [pid…] }` whenever it (re)starts one. On `{ stop: true }`, on SIGTERM/
 *   SIGINT/SIGHUP, or when run.mjs is gone (its channel closed, even after a SIGKILL), the keeper
 *   waits until those processes have exited (at most APPS_GRACE_MS), then shuts PostgreSQL down
 *   (SIGINT: fast shutdown, a clean checkpoint) and exits.
 * - A server that dies on its own is started again on the same port, with the apps' back-off.
 * Plain JavaScript with Node's standard library only: it runs before dependencies are installed.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { URL_FILE, createDatabase, databaseUrl, initCluster, isReady, postgresProcess, waitForPostgres } from "./postgres.mjs";
import { freePort } from "./redis.mjs";
import { Supervised, isRunning } from "./supervise.mjs";

const say = (msg) => console.log(`[run] ${msg}`);
const [dir, graceArg] = process.argv.slice(2);
const appsGraceMs = Number(graceArg) || 60_000;
const urlFile = join(dir, URL_FILE);
const send = (msg) => process.connected && process.send(msg);

/** The server another `npm start` (or one left behind) runs on this cluster: PostgreSQL would refuse a second one. */
function alreadyRunning() {
  try {
    const url = readFileSync(urlFile, "utf8").trim();
    const port = Number(new URL(url).port);
    return port && isReady(port) ? url : undefined;
  } catch {
    return undefined;
  }
}

let server;
let url;
try {
  const other = alreadyRunning();
  if (other) throw new Error(`a PostgreSQL already runs on ${dir} at ${other} (another npm start, or one left behind: stop it with kill -INT $(head -1 ${join(dir, "postmaster.pid")}))`);
  initCluster(dir);
  const port = await freePort();
  url = databaseUrl(port);
  server = new Supervised("postgres", () => postgresProcess(port, dir), { say });
  await waitForPostgres(port, server.run().child, dir);
  createDatabase(port);
} catch (err) {
  if (server) server.stopping = true;
  send({ error: err.message });
  process.exit(1);
}
writeFileSync(urlFile, `${url}\n`);
send({ url });

let apps = [];
let stopping = false;
async function stop(why) {
  if (stopping) return;
  stopping = true;
  const until = Date.now() + appsGraceMs;
  while (apps.some(isRunning) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  const left = apps.filter(isRunning);
  if (left.length) say(`pids ${left.join(", ")} still run after ${appsGraceMs} ms: stopping PostgreSQL anyway`);
  await server.stop("SIGINT", 30_000);
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
process.on("disconnect", () => void stop("run.mjs is gone: PostgreSQL stopped after the API and worker"));
for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => void stop(`${signal}: PostgreSQL stopped`));
