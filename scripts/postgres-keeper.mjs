#!/usr/bin/env node
/**
 * The private PostgreSQL of `npm start`, held by scripts/keeper.mjs like its Redis: made in DATA_DIR
 * when missing (scripts/postgres.mjs), started on a free loopback port with the apps' database, and
 * stopped last with SIGINT (a fast shutdown, with a clean checkpoint). PostgreSQL refuses a second
 * server on one cluster: a recorded one that still answers is reported instead.
 *
 *   node scripts/postgres-keeper.mjs DATA_DIR APPS_GRACE_MS     (with an IPC channel to run.mjs)
 */
import { join } from "node:path";
import { keep } from "./keeper.mjs";
import { URL_FILE, createDatabase, databaseUrl, initCluster, isReady, postgresProcess, waitForPostgres } from "./postgres.mjs";
import { freePort } from "./redis.mjs";
import { Supervised } from "./supervise.mjs";

await keep({
  label: "PostgreSQL",
  urlFile: URL_FILE,
  answers: (url) => {
    try {
      const port = Number(new URL(url).port);
      return Boolean(port && isReady(port));
    } catch {
      return false;
    }
  },
  howToStop: (_url, dir) => `stop it with kill -INT $(head -1 ${join(dir, "postmaster.pid")})`,
  async start(dir, say) {
    initCluster(dir);
    const port = await freePort();
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
