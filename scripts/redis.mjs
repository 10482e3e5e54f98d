/**
 * Private redis-server processes, for `npm start`, `npm test`, the benchmarks and the drills.
 * Plain JavaScript with Node's standard library only: it runs before dependencies are installed.
 */
import { spawn, spawnSync } from "node:child_process";
import net from "node:net";
import { join } from "node:path";

function which(bin) {
  return spawnSync("sh", ["-c", `command -v ${bin}`], { encoding: "utf8" }).stdout.trim();
}

/** Debian's redis-server, installed with apt-get when missing and allowed (root). */
export function redisServerBinary() {
  let bin = which("redis-server");
  if (bin) return bin;
  if (process.getuid?.() === 0 && which("apt-get")) {
    console.log("[run] redis-server not found: installing Debian's redis-server…");
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    for (const args of [["update", "-qq"], ["install", "-y", "-qq", "redis-server"]]) {
      if (spawnSync("apt-get", args, { stdio: "inherit", env }).status !== 0) break;
    }
    bin = which("redis-server");
  }
  if (!bin) throw new Error("redis-server is needed: install it (apt-get install redis-server) or set REDIS_URL");
  return bin;
}

export function freePort() {
  return new Promise((ok, fail) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
    s.on("error", fail);
  });
}

/** True when a Redis answers PING on the port within `timeoutMs`. */
export function ping(port, timeoutMs = 500) {
  return new Promise((ok) => {
    const sock = net.connect(port, "127.0.0.1");
    sock.setTimeout(timeoutMs);
    sock.on("connect", () => sock.write("PING\r\n"));
    sock.on("data", (d) => {
      ok(d.toString().startsWith("+PONG"));
      sock.destroy();
    });
    sock.on("error", () => ok(false));
    sock.on("timeout", () => {
      sock.destroy();
      ok(false);
    });
  });
}

/** The data folder `npm start` keeps its private redis-server in when REDIS_DATA_DIR is unset. */
export const DEFAULT_DATA_DIR = ".redis-data";
/**
 * The file in the data folder naming the URL of the redis-server `npm start` runs, while it runs;
 * the CLI reads it when REDIS_URL is unset (apps/cli/src/redis-url.ts names the same file).
 */
export const URL_FILE = "redis-url";

/** redis-server on `port` (append-only on, no eviction, as in production), data and log in `dir`. */
export function redisServerProcess(port, dir) {
  return spawn(
    redisServerBinary(),
    ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "yes",
      "--appendfsync", "everysec", "--maxmemory-policy", "noeviction", "--logfile", join(dir, "redis.log")],
    { stdio: "ignore" },
  );
}

/** Resolves once the redis-server `child` answers PING on `port`; kills it after 10 s without. */
export async function waitForRedis(port, child, dir) {
  for (let i = 0; i < 200; i++) {
    if (await ping(port)) return child;
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill("SIGKILL");
  throw new Error(`redis-server did not answer on port ${port} (log: ${join(dir, "redis.log")})`);
}

/** Starts redis-server on `port` with its data and log in `dir`, and resolves once it answers PING. */
export async function spawnRedis(port, dir) {
  return waitForRedis(port, redisServerProcess(port, dir), dir);
}
