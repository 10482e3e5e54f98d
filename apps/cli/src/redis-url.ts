/**
 * Which Redis the CLI works on. REDIS_URL when set; otherwise the private redis-server a running
 * `npm start` recorded in REDIS_DATA_DIR/redis-url (default .redis-data/, next to package.json,
 * where npm runs scripts), if it answers; otherwise the default. Without this an operator's
 * `npm run cli -- account create` wrote to 127.0.0.1:6379 while the API read its private Redis, and
 * the new key got 401. With REDIS_SENTINELS, the primary the sentinels name, as the API finds it.
 * The note says which one and why, for one line on stderr.
 */
import { DEFAULT_REDIS_URL, describeRedisTarget, redisTargetOf, type RedisSettings, type RedisTarget } from "@serp/store";
import { answers, recordedUrl, redact } from "./recorded-url.js";

/** As scripts/redis.mjs names them (DEFAULT_DATA_DIR, URL_FILE), which run.mjs and its Redis keeper write. */
const DEFAULT_DATA_DIR = ".redis-data";
const URL_FILE = "redis-url";

export interface RedisChoice {
  url: RedisTarget;
  note: string;
}

export async function chooseRedis(
  env: { REDIS_URL?: string; REDIS_DATA_DIR?: string } & Partial<Omit<RedisSettings, "REDIS_URL">>,
  cwd = process.cwd(),
): Promise<RedisChoice> {
  if (env.REDIS_SENTINELS?.length) {
    const target = redisTargetOf({ REDIS_SENTINEL_NAME: "mymaster", ...env, REDIS_URL: env.REDIS_URL || DEFAULT_REDIS_URL });
    return { url: target, note: `using Redis ${describeRedisTarget(target)} (REDIS_SENTINELS)` };
  }
  if (env.REDIS_URL) return { url: env.REDIS_URL, note: `using Redis ${redact(env.REDIS_URL)} (REDIS_URL)` };
  const { url: recorded, file } = recordedUrl(env.REDIS_DATA_DIR || DEFAULT_DATA_DIR, URL_FILE, cwd);
  if (!recorded) return { url: DEFAULT_REDIS_URL, note: `using Redis ${DEFAULT_REDIS_URL} (REDIS_URL is unset, and ${file} names no Redis of npm start)` };
  // +PONG, or an error such as -NOAUTH: a Redis either way.
  if (await answers(recorded, 6379, { send: "PING\r\n", reply: /^[+-]/ })) return { url: recorded, note: `using Redis ${redact(recorded)}, the one npm start runs (named in ${file}; REDIS_URL is unset)` };
  return {
    url: DEFAULT_REDIS_URL,
    note: `the Redis named in ${file} (${redact(recorded)}) does not answer (npm start stopped?): using ${DEFAULT_REDIS_URL} instead`,
  };
}
