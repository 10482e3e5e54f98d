#!/usr/bin/env node
/**
 * The private redis-server of `npm start`, held by scripts/keeper.mjs (which says how): it stays up
 * while the API and worker finish their requests and jobs, and stops last, with SIGTERM (it writes
 * out its append-only file). Two servers on one append-only file would corrupt it: one left running by
 * a previous npm start is taken over instead.
 *
 *   node scripts/redis-keeper.mjs DATA_DIR APPS_GRACE_MS     (with an IPC channel to run.mjs)
 */
import { keep } from "./keeper.mjs";
import { URL_FILE, freePort, ping, redisServerProcess, waitForRedis } from "./redis.mjs";
import { Supervised } from "./supervise.mjs";

await keep({
  label: "redis-server",
  command: "redis-server",
  urlFile: URL_FILE,
  ownerFile: "redis-keeper.json",
  answers: (url) => {
    const port = Number(/:(\d+)\/?$/.exec(url)?.[1]);
    return port ? ping(port) : false;
  },
  async start(dir, say, port) {
    port ??= await freePort();
    const server = new Supervised("redis-server", () => redisServerProcess(port, dir), { say });
    try {
      await waitForRedis(port, server.run().child, dir);
    } catch (err) {
      server.stopping = true;
      throw err;
    }
    return { url: `redis://127.0.0.1:${port}`, server };
  },
  stopSignal: "SIGTERM",
  stopGraceMs: 10_000,
});
