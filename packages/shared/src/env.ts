/**
 * What every process's configuration shares: each app composes the env fragments of the packages it
 * uses (`storeEnv`, `upstreamEnv`…) and its own settings into one Zod schema, read once at boot.
 */
import { z } from "zod";

/** Settings every long-running process reads. */
export const processEnv = z.object({
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

/** Each refused setting as `NAME: rule`, for the one line a process logs before it exits. */
export function envProblems(error: z.ZodError): string[] {
  return error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
}
