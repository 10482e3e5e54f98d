/**
 * Which Redis the CLI works on. REDIS_URL when set; otherwise the private redis-server a running
 * `npm start` recorded in REDIS_DATA_DIR/redis-url (default .redis-data/, next to package.json,
 * where npm runs scripts), if it answers; otherwise the default. Without this an operator's
 * `npm run cli -- account create` wrote to 127.0.0.1:6379 while the API read its private Redis, and
 * the new key got 401. The note says which one and why, for one line on stderr.
 */
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { join, resolve } from "node:path";

export const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";
/** As scripts/redis.mjs names them (DEFAULT_DATA_DIR, URL_FILE), which run.mjs and its Redis keeper write. */
const DEFAULT_DATA_DIR = ".redis-data";
const URL_FILE = "redis-url";

export interface RedisChoice {
  url: string;
  note: string;
}

export async function chooseRedis(env: { REDIS_URL?: string; REDIS_DATA_DIR?: string }, cwd = process.cwd()): Promise<RedisChoice> {
  if (env.REDIS_URL) return { url: env.REDIS_URL, note: `using Redis ${redact(env.REDIS_URL)} (REDIS_URL)` };
  const file = join(resolve(cwd, env.REDIS_DATA_DIR || DEFAULT_DATA_DIR), URL_FILE);
  let recorded = "";
  try {
    recorded = readFileSync(file, "utf8").trim();
  } catch {
    // no npm start running from here (or it never started a Redis)
  }
  if (!recorded) return { url: DEFAULT_REDIS_URL, note: `using Redis ${DEFAULT_REDIS_URL} (REDIS_URL is unset, and ${file} names no Redis of npm start)` };
  if (await answers(recorded)) return { url: recorded, note: `using Redis ${redact(recorded)}, the one npm start runs (named in ${file}; REDIS_URL is unset)` };
  return {
    url: DEFAULT_REDIS_URL,
    note: `the Redis named in ${file} (${redact(recorded)}) does not answer (npm start stopped?): using ${DEFAULT_REDIS_URL} instead`,
  };
}

/**
 * True when a Redis answers PING at `url` within a second. A raw PING over TCP, as scripts/redis.mjs
 * does: the file names a plain loopback redis-server, and a client library would keep its timers
 * running after a refused connection.
 */
function answers(url: string): Promise<boolean> {
  let host: string;
  let port: number;
  try {
    const u = new URL(url);
    host = u.hostname || "127.0.0.1";
    port = Number(u.port || 6379);
  } catch {
    return Promise.resolve(false);
  }
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    // +PONG, or an error such as -NOAUTH: a Redis either way.
    socket.once("data", (d) => done(/^[+-]/.test(d.toString())));
    socket.once("error", () => done(false));
  });
}

/** The URL without its password, for a log line. */
function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(an unparseable URL)";
  }
}
