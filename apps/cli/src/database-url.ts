/**
 * Which PostgreSQL the CLI works on, as redis-url.ts chooses Redis: DATABASE_URL when set; otherwise
 * the private PostgreSQL a running `npm start` recorded in PG_DATA_DIR/postgres-url (default
 * .pg-data/, where scripts/postgres-keeper.mjs writes it), if it answers; otherwise none (accounts
 * and keys are then written to Redis only, and reconcile/rebuild cannot run). The note says which.
 */
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { join, resolve } from "node:path";

/** As scripts/postgres.mjs names them (DEFAULT_DATA_DIR, URL_FILE). */
const DEFAULT_DATA_DIR = ".pg-data";
const URL_FILE = "postgres-url";

export interface DatabaseChoice {
  url: string | undefined;
  note: string;
}

export async function chooseDatabase(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): Promise<DatabaseChoice> {
  if (env.DATABASE_URL) return { url: env.DATABASE_URL, note: `using PostgreSQL ${redact(env.DATABASE_URL)} (DATABASE_URL)` };
  const file = join(resolve(cwd, env.PG_DATA_DIR || DEFAULT_DATA_DIR), URL_FILE);
  let recorded = "";
  try {
    recorded = readFileSync(file, "utf8").trim();
  } catch {
    // no npm start running from here
  }
  if (recorded && (await answers(recorded))) return { url: recorded, note: `using PostgreSQL ${redact(recorded)}, the one npm start runs (named in ${file})` };
  return { url: undefined, note: "no PostgreSQL (DATABASE_URL is unset and no npm start runs one here): accounts and keys go to Redis only" };
}

/** True when something accepts a TCP connection at the URL's host and port within a second. */
function answers(url: string): Promise<boolean> {
  let host: string;
  let port: number;
  try {
    const u = new URL(url);
    host = u.hostname || "127.0.0.1";
    port = Number(u.port || 5432);
  } catch {
    return Promise.resolve(false);
  }
  return new Promise((ok) => {
    const socket = connect({ host, port });
    const done = (yes: boolean) => {
      socket.destroy();
      ok(yes);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once("connect", () => done(true));
    socket.once("error", () => done(false));
  });
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(an unparseable URL)";
  }
}
