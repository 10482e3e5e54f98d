import { z } from "zod";

/** Settings the API reads, validated once at boot (fails before a port is opened). */
const schema = z.object({
  PORT: z.coerce.number().int().min(0).max(65_535).default(3000),
  HOST: z.string().default("0.0.0.0"),
  REDIS_URL: z.string().url().default("redis://127.0.0.1:6379"),
  /** Key prefix in Redis: isolates deployments sharing one Redis. */
  SERP_PREFIX: z.string().regex(/^[A-Za-z0-9_-]+$/).default("serp"),
  LIVE_DEADLINE_MS: z.coerce.number().int().min(100).default(60_000),
  JOB_RETENTION_SECONDS: z.coerce.number().int().min(1).default(7 * 24 * 3600),
  BODY_LIMIT: z.string().default("64kb"),
  API_KEY: z.string().regex(/^sk_[A-Za-z0-9_]{8,200}$/, "API_KEY must start with sk_").optional(),
  API_KEY_CREDITS: z.coerce.number().int().min(0).default(1000),
  GEOTARGETS_DIR: z.string().optional(),
  PUBLIC_BASE_URL: z.string().url().optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});
export type ApiEnv = Readonly<z.infer<typeof schema>>;

export function loadEnv(source: NodeJS.ProcessEnv = process.env): ApiEnv {
  const parsed = schema.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`Invalid API configuration:\n${lines.join("\n")}`);
  }
  return Object.freeze(parsed.data);
}
