/**
 * Which upstream the CLI's canary asks. With any UPSTREAM_* setting in its own environment, that;
 * otherwise the settings a running `npm start` gave its workers (recorded by scripts/run.mjs in
 * REDIS_DATA_DIR/upstream-env.json while it runs), so the canary follows the running stack the way
 * the CLI's Redis does (redis-url.ts); otherwise the defaults (the real engine). The note says which.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

const DEFAULT_DATA_DIR = ".redis-data";
const FILE = "upstream-env.json";

export interface UpstreamSettingsChoice {
  env: NodeJS.ProcessEnv;
  note: string;
}

export function chooseUpstreamSettings(env: NodeJS.ProcessEnv, cwd = process.cwd()): UpstreamSettingsChoice {
  if (Object.keys(env).some((k) => k.startsWith("UPSTREAM_"))) return { env, note: "upstream settings: this environment's UPSTREAM_* variables" };
  const file = join(resolve(cwd, env.REDIS_DATA_DIR || DEFAULT_DATA_DIR), FILE);
  let recorded: { pid?: unknown; env?: unknown };
  try {
    recorded = JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return { env, note: `upstream settings: the defaults (no UPSTREAM_* variable here, and ${file} names no running npm start's)` };
  }
  if (typeof recorded.pid !== "number" || !alive(recorded.pid) || typeof recorded.env !== "object" || recorded.env === null) {
    return { env, note: `upstream settings: the defaults (no UPSTREAM_* variable here, and the npm start that wrote ${file} is not running)` };
  }
  const settings = Object.fromEntries(Object.entries(recorded.env).filter(([, v]) => typeof v === "string")) as Record<string, string>;
  const base = settings.UPSTREAM_BASE_URL ? ` (UPSTREAM_BASE_URL ${settings.UPSTREAM_BASE_URL})` : " (the real engine)";
  return { env: { ...settings, ...env }, note: `upstream settings: the running npm start's${base}, named in ${file}` };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
