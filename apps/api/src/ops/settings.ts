import { z } from "zod";
import { ConfigError } from "../env.js";

/**
 * Operator settings read here rather than in env.ts, so the ops surface stays in one folder.
 * An empty value counts as unset; a token that is set must be long enough to resist guessing.
 */
const schema = z.object({
  ADMIN_TOKEN: z
    .string()
    .optional()
    .transform((s) => s?.trim() || undefined)
    .pipe(z.string().min(16, "ADMIN_TOKEN must be at least 16 characters").optional()),
});
export type OpsSettings = Readonly<z.infer<typeof schema>>;

export function loadOpsSettings(source: NodeJS.ProcessEnv = process.env): OpsSettings {
  const parsed = schema.safeParse({ ADMIN_TOKEN: source.ADMIN_TOKEN });
  if (!parsed.success) throw new ConfigError(parsed.error.issues.map((i) => i.message));
  return Object.freeze(parsed.data);
}
