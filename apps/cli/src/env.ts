/**
 * The settings the CLI reads, read once per command: SERP_PREFIX and the account limits, from the
 * store's fragments, so their rules and defaults are the API's. Where Redis and PostgreSQL are is
 * chosen by redis-url.ts and database-url.ts (unset: the ones a running npm start recorded); the
 * canary reads the workers' upstream settings (`readUpstreamEnv`, the upstream's fragment).
 */
import { envProblems } from "@serp/shared";
import { checkRawPagesEnv, limitsEnv, rawPagesEnv, storeEnv } from "@serp/store";

const schema = storeEnv
  .pick({ SERP_PREFIX: true, REDIS_SENTINELS: true, REDIS_SENTINEL_NAME: true, REDIS_SENTINEL_USERNAME: true, REDIS_SENTINEL_PASSWORD: true })
  .extend(limitsEnv.shape)
  .extend(rawPagesEnv.shape)
  .superRefine(checkRawPagesEnv);
export type CliEnv = Readonly<ReturnType<typeof schema.parse>>;

/** Throws one message naming each refused setting (the CLI prints it with its usage, exit code 2). */
export function loadCliEnv(source: NodeJS.ProcessEnv = process.env): CliEnv {
  const parsed = schema.safeParse(source);
  if (!parsed.success) throw new Error(envProblems(parsed.error).join("; "));
  return Object.freeze(parsed.data);
}
