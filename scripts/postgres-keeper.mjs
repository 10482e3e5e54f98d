#!/usr/bin/env node
/**
 * The private PostgreSQL of `npm start`, held by scripts/keeper.mjs like its Redis: made in DATA_DIR
 * when missing (scripts/postgres.mjs), started on a free loopback port with the apps' database, and
 * stopped last with SIGINT (a fast shutdown, with a clean checkpoint). PostgreSQL refuses a second
 * server on one cluster: one left running by a previous npm start is taken over instead.
 *
 *   node scripts/postgres-keeper.mjs DATA_DIR APPS_GRACE_MS     (with an IPC channel to run.mjs)
 */
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { keep } from "./keeper.mjs";
import { URL_FILE, createDatabase, databaseUrl, initCluster, isReady, postgresProcess, waitForPostgres } from "./postgres.mjs";
import { freePort } from "./redis.mjs";
import { Supervised, isRunning } from "./supervise.mjs";

/**
 * The lock file of a killed server whose process is dead but not yet reaped (a zombie, where no init
 * reaps them): PostgreSQL takes that pid for a live server and refuses to start. A zombie runs nothing.
 */
function removeDeadLock(dir) {
  const lock = join(dir, "postmaster.pid");
  let pid;
  try {
    pid = Number(readFileSync(lock, "utf8").split("\n")[0]);
  } catch {
    return;
  }
  if (!Number.isInteger(pid) || pid <= 0 || isRunning(pid)) return;
  rmSync(lock, { force: true });
}

await keep({
  label: "PostgreSQL",
  command: "postgres",
  urlFile: URL_FILE,
  ownerFile: "postgres-keeper.json",
  answers: (url) => {
    try {
      const port = Number(new URL(url).port);
      return Boolean(port && isReady(port));
    } catch {
      return false;
    }
  },
  async start(dir, say, port) {
    initCluster(dir);
    removeDeadLock(dir);
    port ??= await freePort();
    const server = new Supervised("postgres", () => postgresProcess(port, dir), { say });
    try {
      await waitForPostgres(port, server.run().child, dir);
      createDatabase(port);
    } catch (err) {
      server.stopping = true;
      throw err;
    }
    return { url: databaseUrl(port), server };
  },
  stopSignal: "SIGINT",
  stopGraceMs: 30_000,
});
