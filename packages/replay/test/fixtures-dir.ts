/** The captured pages the replay tests serve: `SERP_FIXTURES_DIR`, else `../shared/fixtures/google` beside the repository. */
import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
export const FIXTURES_DIR = process.env.SERP_FIXTURES_DIR ?? resolve(repoRoot, "../shared/fixtures/google");
export const fixturesAvailable = existsSync(FIXTURES_DIR);
