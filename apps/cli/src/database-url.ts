/**
 * Which PostgreSQL the CLI works on, as redis-url.ts chooses Redis: DATABASE_URL when set; otherwise
 * the private PostgreSQL a running `npm start` recorded in PG_DATA_DIR/postgres-url (default
 * .pg-data/, where scripts/postgres-keeper.mjs writes it), if it answers; otherwise none (accounts
 * and keys are then written to Redis only, and reconcile/rebuild cannot run). The note says which.
 */
import { answers, recordedUrl, redact } from "./recorded-url.js";

/** As scripts/postgres.mjs names them (DEFAULT_DATA_DIR, URL_FILE). */
const DEFAULT_DATA_DIR = ".pg-data";
const URL_FILE = "postgres-url";

export interface DatabaseChoice {
  url: string | undefined;
  note: string;
}

export async function chooseDatabase(env: { DATABASE_URL?: string; PG_DATA_DIR?: string }, cwd = process.cwd()): Promise<DatabaseChoice> {
  if (env.DATABASE_URL) return { url: env.DATABASE_URL, note: `using PostgreSQL ${redact(env.DATABASE_URL)} (DATABASE_URL)` };
  const { url: recorded, file } = recordedUrl(env.PG_DATA_DIR || DEFAULT_DATA_DIR, URL_FILE, cwd);
  if (recorded && (await answers(recorded, 5432))) return { url: recorded, note: `using PostgreSQL ${redact(recorded)}, the one npm start runs (named in ${file})` };
  return { url: undefined, note: "no PostgreSQL (DATABASE_URL is unset and no npm start runs one here): accounts and keys go to Redis only" };
}
