/**
 * What every process's configuration shares: each app composes the env fragments of the packages it
 * uses (`storeEnv`, `upstreamEnv`…) and its own settings into one Zod schema, and reads it once at
 * boot with `loadConfig`. A fragment holds each variable's rule and default; factories take what it
 * parses, so a new setting is written in its fragment and where it is used.
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

/** Each refused setting as `NAME: rule` (or the rule alone when it names the setting), for the one line a process logs before it exits. */
function envProblems(error: z.ZodError): string[] {
  return error.issues.map((i) => {
    const name = i.path.join(".");
    return !name || i.message.startsWith(name) ? i.message : `${name}: ${i.message}`;
  });
}

/**
 * A setting a process cannot start with. Each app reports it as one line naming the setting and the
 * rule (the API and the workers log it and exit 78, EX_CONFIG; the CLI prints it with its usage):
 * the operator has something to fix, not a stack trace to read.
 */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(
    app: string,
    readonly problems: string[],
  ) {
    super(`Invalid ${app} configuration: ${problems.join("; ")}`);
  }
}

/** One process's settings, parsed with its schema and frozen; throws ConfigError naming each refused one. */
export function loadConfig<S extends z.ZodType>(schema: S, app: string, source: Record<string, unknown>): Readonly<z.output<S>> {
  const parsed = schema.safeParse(source);
  if (!parsed.success) throw new ConfigError(app, envProblems(parsed.error));
  return Object.freeze(parsed.data);
}
