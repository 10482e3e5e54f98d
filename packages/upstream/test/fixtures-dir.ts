import { existsSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

/** Captured upstream pages: `SERP_FIXTURES_DIR`, else `../shared/fixtures/google` beside the repository. */
export const FIXTURES_DIR = process.env.SERP_FIXTURES_DIR ?? resolve(repoRoot, "../shared/fixtures/google");
export const fixturesAvailable = existsSync(FIXTURES_DIR);

/** The upstream's location list: `SERP_GEOTARGETS_DIR`, else `../shared/data/geotargets`. */
export const GEOTARGETS_DIR = process.env.SERP_GEOTARGETS_DIR ?? resolve(repoRoot, "../shared/data/geotargets");
export const geotargetsAvailable = existsSync(GEOTARGETS_DIR);

/** The reference API's public client libraries (python/…): `SERP_CLIENTS_DIR`, else `../shared/clients`. */
export const CLIENTS_DIR = process.env.SERP_CLIENTS_DIR ?? resolve(repoRoot, "../shared/clients");
export const clientsAvailable = existsSync(CLIENTS_DIR);
