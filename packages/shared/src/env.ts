/**
 * What every process's configuration shares: each app composes the env fragments of the packages it
 * uses (`storeEnv`, `upstreamEnv`…) and its own settings into one Zod schema, read once at boot.
 */
import { z } from "zod";

/** Settings every long-running process reads. */
export const processEnv = z.object({
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

/** A token an operator sets (empty counts as unset); one that is set must be long enough to resist guessing. */
export const tokenSetting = (name: string) =>
  z
    .string()
    .optional()
    .transform((s) => s?.trim() || undefined)
    .pipe(z.string().min(16, `${name} must be at least 16 characters`).optional());

/** Settings of every process that serves /metrics (the API, and the workers on HEALTH_PORT). */
export const metricsEnv = z.object({
  /** Closes /metrics: a scraper must present it (Bearer, or basic auth password); unset, /metrics is open. */
  METRICS_TOKEN: tokenSetting("METRICS_TOKEN"),
});

/** Each refused setting as `NAME: rule`, for the one line a process logs before it exits. */
export function envProblems(error: z.ZodError): string[] {
  return error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
}
