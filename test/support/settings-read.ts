/**
 * The settings the apps read, found in their source (so a list checked against it cannot go stale):
 * - the keys of the env schemas and of the packages' env fragments they compose (any `NAME: …`
 *   inside a `z.object({…})` in app or package code),
 * - names read directly as `process.env.NAME`.
 * Used by test/ops/env-example.test.ts (.env.example lists them) and test/deploy (the manifests and
 * docker-compose.yml set only these).
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { ROOT } from "../ops/support.js";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "node_modules" || name === "test" ? [] : sourceFiles(path);
    return path.endsWith(".ts") && !path.endsWith(".test.ts") ? [path] : [];
  });
}

/** Upper-case keys declared with a Zod type (`NAME: z.…`, or a helper such as `NAME: count(…)` inside a schema object). */
function schemaKeys(source: string): string[] {
  const keys = new Set<string>();
  for (const block of source.matchAll(/z\.(?:strictObject|object)\(\{([\s\S]*?)\n\}\)/g)) {
    for (const m of block[1]!.matchAll(/^\s+([A-Z][A-Z0-9_]+)\s*:/gm)) keys.add(m[1]!);
  }
  for (const m of source.matchAll(/^\s+([A-Z][A-Z0-9_]+)\s*:\s*z\./gm)) keys.add(m[1]!);
  return [...keys];
}

function directReads(source: string): string[] {
  return [...source.matchAll(/process\.env(?:\.([A-Z][A-Z0-9_]+)|\[\s*["']([A-Z][A-Z0-9_]+)["']\s*\])/g)].map((m) => (m[1] ?? m[2])!);
}

/** Settings read by the apps at run time, each with the first file that reads it: app code under apps/*\/src plus the packages they use. */
export function settingsReadByCode(): Map<string, string> {
  const found = new Map<string, string>();
  const note = (name: string, file: string) => {
    if (!found.has(name)) found.set(name, relative(ROOT, file));
  };
  const appFiles = readdirSync(join(ROOT, "apps")).flatMap((app) => sourceFiles(join(ROOT, "apps", app, "src")));
  // The replay server is a test and demo tool, not part of a deployment.
  const packageFiles = readdirSync(join(ROOT, "packages"))
    .filter((p) => p !== "replay")
    .flatMap((p) => sourceFiles(join(ROOT, "packages", p, "src")));
  // Variables the system sets, not settings of ours: the X display a headed browser uses when present.
  const system = new Set(["DISPLAY"]);
  for (const file of [...appFiles, ...packageFiles]) {
    const source = readFileSync(file, "utf8");
    for (const name of [...schemaKeys(source), ...directReads(source)]) if (!system.has(name)) note(name, file);
  }
  return found;
}
