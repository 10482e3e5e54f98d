/**
 * `npm start` reads a .env in the repository root when there is one, as .env.example invites (docker
 * compose reads the same file). A variable already set in the environment wins over the same one in
 * .env, so `PORT=4000 npm start` still means 4000. Parsed with dotenv, after the dependencies are
 * installed (run.mjs calls it after ensureDependencies).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Adds the settings of `dir`/.env that `env` does not have yet to `env` (process.env by default).
 * Returns the file and the names it set and left to the environment, or undefined when there is no .env.
 */
export async function readEnvFile(dir, env = process.env) {
  const path = join(dir, ".env");
  if (!existsSync(path)) return undefined;
  const { parse } = (await import("dotenv")).default;
  const parsed = parse(readFileSync(path));
  const applied = [];
  const overridden = [];
  for (const [name, value] of Object.entries(parsed)) {
    if (env[name] === undefined) {
      env[name] = value;
      applied.push(name);
    } else overridden.push(name);
  }
  return { path, applied, overridden };
}
