/**
 * The settings the CLI reads, read once per command with the loader every process uses: SERP_PREFIX,
 * the account limits and the page store from the store's fragments, so their rules and defaults are
 * the API's. Where Redis and PostgreSQL are is chosen by redis-url.ts and database-url.ts from
 * REDIS_URL and DATABASE_URL, which stay unset here when unset (then: the ones a running npm start
 * recorded in its data folders); the canary reads the workers' upstream fragment (upstream.ts).
 */
import { z } from "zod";
import { loadConfig } from "@serp/shared";
import { checkRawPagesEnv, limitsEnv, rawPagesEnv, storeEnv } from "@serp/store";

/** `NAME=` counts as unset. */
const optional = <T extends z.ZodType>(schema: T) => z.preprocess((v) => v || undefined, schema.optional());

const cliEnv = z.object({
  /** Unset: the Redis a running npm start recorded in REDIS_DATA_DIR (redis-url.ts). */
  REDIS_URL: optional(z.string().url()),
  /** Where a running npm start keeps its private Redis's data and URL (as scripts/redis.mjs). */
  REDIS_DATA_DIR: optional(z.string()),
  /** Where a running npm start keeps its private PostgreSQL's data and URL (as scripts/postgres.mjs). */
  PG_DATA_DIR: optional(z.string()),
});

const schema = storeEnv
  .pick({ SERP_PREFIX: true, DATABASE_URL: true, REDIS_SENTINELS: true, REDIS_SENTINEL_NAME: true, REDIS_SENTINEL_USERNAME: true, REDIS_SENTINEL_PASSWORD: true })
  .extend(limitsEnv.shape)
  .extend(rawPagesEnv.shape)
  .extend(cliEnv.shape)
  .superRefine(checkRawPagesEnv);
export type CliEnv = Readonly<z.output<typeof schema>>;

/** Throws ConfigError naming each refused setting (the CLI prints it with its usage, exit code 2). */
export function loadCliEnv(source: NodeJS.ProcessEnv = process.env): CliEnv {
  return loadConfig(schema, "CLI", source);
}
