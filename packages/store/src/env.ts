/**
 * The store's settings, as Zod env fragments each app composes into its one schema (apps/api and
 * apps/worker `env.ts`; the CLI takes what it needs): each variable, its rule and its default are
 * written here only.
 */
import { z } from "zod";
import { CACHE_SCOPES } from "./cache.js";
import { DEFAULT_MAX_JOBS_IN_FLIGHT, DEFAULT_RATE_LIMIT_PER_MINUTE } from "./limits.js";
import { DEFAULT_JOB_HOT_SECONDS } from "./pg/archive.js";
import { DEFAULT_RAW_HTML_RETENTION_SECONDS, DEFAULT_RAW_PAGES_DIR } from "./raw-pages.js";

/** The Redis a process uses when REDIS_URL is unset. */
export const DEFAULT_REDIS_URL = "redis://127.0.0.1:6379";

const count = (fallback: number) => z.coerce.number().int().min(0).default(fallback);
/** An empty value (`NAME=` in an .env file) is unset. */
const unsetIfEmpty = <T extends z.ZodType>(schema: T) => z.preprocess((v) => (v === "" ? undefined : v), schema);

/**
 * Where kept upstream pages' bytes go (Redis keeps only where each is): RAW_PAGES_DIR by default,
 * or an S3-compatible bucket when RAW_PAGES_S3_BUCKET is set (docs/RAW-PAGES.md).
 */
export const rawPagesEnv = z.object({
  /** The folder the API and the workers share on one host (relative: to the working directory). */
  RAW_PAGES_DIR: z.string().min(1).default(DEFAULT_RAW_PAGES_DIR),
  /** Set: pages go to this bucket instead, which any number of hosts share (required when the API and workers do not share a folder). */
  RAW_PAGES_S3_BUCKET: unsetIfEmpty(z.string().regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, "RAW_PAGES_S3_BUCKET is an S3 bucket name").optional()),
  /** An S3-compatible server (MinIO, R2, Ceph…); unset: AWS S3. */
  RAW_PAGES_S3_ENDPOINT: unsetIfEmpty(z.string().url().optional()),
  RAW_PAGES_S3_REGION: unsetIfEmpty(z.string().min(1).default("us-east-1")),
  /** Both or neither; neither: the AWS SDK's own chain (AWS_ACCESS_KEY_ID…, an instance or pod role). */
  RAW_PAGES_S3_ACCESS_KEY_ID: unsetIfEmpty(z.string().min(1).optional()),
  RAW_PAGES_S3_SECRET_ACCESS_KEY: unsetIfEmpty(z.string().min(1).optional()),
  /** Key prefix in the bucket, where the lifecycle rule points. */
  RAW_PAGES_S3_PREFIX: unsetIfEmpty(z.string().regex(/^([A-Za-z0-9!_.*'()-]+\/)*$/, "RAW_PAGES_S3_PREFIX is empty or ends with /, such as raw/").default("raw/")),
  /** The bucket in the URL's path rather than its host name; default: on when RAW_PAGES_S3_ENDPOINT is set. */
  RAW_PAGES_S3_FORCE_PATH_STYLE: unsetIfEmpty(z.stringbool().optional()),
  /**
   * Where completed jobs' results are kept while their records are in Redis: `page-store` (the
   * default: beside the pages, in RAW_PAGES_DIR/results or the bucket's results prefix; Redis keeps
   * their location) or `redis` (in the job record itself, as before). docs/RAW-PAGES.md.
   */
  JOB_RESULT_STORE: unsetIfEmpty(z.enum(["page-store", "redis"]).default("page-store")),
});
export type RawPagesEnv = z.infer<typeof rawPagesEnv>;

/** What rawPagesEnv's fields cannot say one by one; each app's schema refines with it (`schema.superRefine(checkRawPagesEnv)`). */
export function checkRawPagesEnv(env: Partial<RawPagesEnv>, ctx: z.RefinementCtx): void {
  if (!env.RAW_PAGES_S3_ACCESS_KEY_ID !== !env.RAW_PAGES_S3_SECRET_ACCESS_KEY) {
    ctx.addIssue({ code: "custom", path: ["RAW_PAGES_S3_ACCESS_KEY_ID"], message: "set with RAW_PAGES_S3_SECRET_ACCESS_KEY, or neither for the AWS SDK's own credentials" });
  }
  if (!env.RAW_PAGES_S3_BUCKET && (env.RAW_PAGES_S3_ENDPOINT || env.RAW_PAGES_S3_ACCESS_KEY_ID)) {
    ctx.addIssue({ code: "custom", path: ["RAW_PAGES_S3_BUCKET"], message: "unset while other RAW_PAGES_S3_ settings are set: name the bucket, or pages go to RAW_PAGES_DIR" });
  }
}

/** `host:port` or `[v6]:port`, comma-separated: the sentinels of a Redis Sentinel set. */
const sentinelList = z
  .string()
  .transform((s) => s.split(",").map((a) => a.trim()).filter(Boolean))
  .pipe(
    z
      .array(
        z
          .string()
          .regex(/^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/, "REDIS_SENTINELS is host:port,host:port…")
          .transform((a) => {
            const at = a.lastIndexOf(":");
            return { host: a.slice(0, at).replace(/^\[(.*)\]$/, "$1"), port: Number(a.slice(at + 1)) };
          })
          .refine((s) => s.port >= 1 && s.port <= 65_535, "a sentinel's port is 1 to 65535"),
      )
      .min(1, "REDIS_SENTINELS names at least one sentinel"),
  );

/** Where Redis and PostgreSQL are, and how long jobs, results and pages are kept: the API and the workers read the same. */
export const storeEnv = z.object({
  /** The Redis (redis:// or rediss://). With REDIS_SENTINELS, only its user, password, database number and scheme are used. */
  REDIS_URL: z.string().url().default(DEFAULT_REDIS_URL),
  /**
   * Redis Sentinel (docs/REDIS.md): the sentinels, `host:port,host:port…`. Set: every connection
   * asks them for the primary named REDIS_SENTINEL_NAME, and follows it when they fail over.
   */
  REDIS_SENTINELS: z.preprocess((v) => v || undefined, sentinelList.optional()),
  /** The primary's name in the sentinels' configuration (`sentinel monitor <name> …`). */
  REDIS_SENTINEL_NAME: z.string().regex(/^[A-Za-z0-9._-]+$/, "REDIS_SENTINEL_NAME is a name such as mymaster").default("mymaster"),
  /** The sentinels' own ACL user and password (`requirepass` of sentinel.conf), when they have one. */
  REDIS_SENTINEL_USERNAME: z.string().min(1).optional(),
  REDIS_SENTINEL_PASSWORD: z.string().min(1).optional(),
  /**
   * Replicas that must hold a submission before the API answers 202 (Redis WAIT; 0: answer at once).
   * Replication is asynchronous: 1 with a Sentinel set, so an acknowledged job survives a failover.
   */
  REDIS_WAIT_REPLICAS: count(0),
  /** How long a submission waits for them; past it, it is answered anyway (a replica is down) and a warning logged. */
  REDIS_WAIT_TIMEOUT_MS: z.coerce.number().int().min(1).max(60_000).default(500),
  /**
   * PostgreSQL (postgres://…): the ledger, accounts and keys, and job history (npm start runs a private one when
   * unset). Unset here: no PostgreSQL, the ledger stays in its bounded Redis stream (tests and trials only).
   */
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, "DATABASE_URL is a postgres:// URL").optional(),
  /** Key prefix in Redis: isolates deployments sharing one Redis. */
  SERP_PREFIX: z.string().regex(/^[A-Za-z0-9_-]+$/).default("serp"),
  JOB_RETENTION_SECONDS: z.coerce.number().int().min(1).default(7 * 24 * 3600),
  /** How long a final job stays whole in Redis; after it, only the archive in PostgreSQL holds it (until JOB_RETENTION_SECONDS). */
  JOB_HOT_SECONDS: z.coerce.number().int().min(1).default(DEFAULT_JOB_HOT_SECONDS),
  /** Seconds a completed result answers identical searches from the result cache; 0 turns the cache off. */
  CACHE_TTL_SECONDS: z.coerce.number().int().min(0).default(3600),
  /**
   * Whose searches a cache hit may come from: `account` (only the same account's, the default) or `global`
   * (anyone's: fewer upstream requests, but a hit reveals that someone searched the same thing recently).
   */
  CACHE_SCOPE: z.enum(CACHE_SCOPES).default("account"),
  /** Credits a job answered from the cache costs: the spec's 1, or 0 for the model API's free cached searches. */
  CACHE_HIT_CREDITS: z.coerce.number().int().min(0).max(1).default(1),
  /** Seconds each completed job's upstream page is kept, compressed (the workers keep it; the API serves it); 0 keeps none. */
  RAW_HTML_RETENTION_SECONDS: z.coerce.number().int().min(0).default(DEFAULT_RAW_HTML_RETENTION_SECONDS),
  ...rawPagesEnv.shape,
  /** Accept postback URLs on loopback, private, link-local and CGNAT addresses: tests and private deployments only. */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: z.stringbool().default(false),
});

/** The per-account limits every account has unless it has an override (the API enforces them; the CLI shows them). */
export const limitsEnv = z.object({
  /** Per-account requests per minute on the job-submitting routes; 0 = none. */
  RATE_LIMIT_PER_MINUTE: count(DEFAULT_RATE_LIMIT_PER_MINUTE),
  /** Per-account jobs pending or processing at once; 0 = none. */
  MAX_JOBS_IN_FLIGHT: count(DEFAULT_MAX_JOBS_IN_FLIGHT),
});
