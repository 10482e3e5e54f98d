import { z } from "zod";
import { metricsEnv, tokenSetting } from "@serp/shared";
import { ConfigError } from "../env.js";

/**
 * Operator settings read here rather than in env.ts, so the ops surface stays in one folder.
 * An empty value counts as unset; a token that is set must be long enough to resist guessing.
 */
const schema = z.object({
  ADMIN_TOKEN: tokenSetting("ADMIN_TOKEN"),
  ...metricsEnv.shape,
  /** Serve /metrics on this port of its own (on HOST) instead of the API's; with METRICS_TOKEN, closed there too. */
  METRICS_PORT: z.preprocess((v) => v || undefined, z.coerce.number().int().min(0).max(65_535).optional()),
});
export type OpsSettings = Readonly<z.infer<typeof schema>>;

export function loadOpsSettings(source: NodeJS.ProcessEnv = process.env): OpsSettings {
  const parsed = schema.safeParse({ ADMIN_TOKEN: source.ADMIN_TOKEN, METRICS_TOKEN: source.METRICS_TOKEN, METRICS_PORT: source.METRICS_PORT });
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => i.message));
  return Object.freeze(parsed.data);
}
