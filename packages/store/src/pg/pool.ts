import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { runner } from "node-pg-migrate";

/**
 * Where the SQL migrations live (`<timestamp>_<name>.sql`, `-- Up Migration` / `-- Down Migration`):
 * packages/store/migrations, or dist/migrations beside the bundles in the image (the Dockerfile).
 */
export const MIGRATIONS_DIR = [new URL("./migrations", import.meta.url), new URL("../../migrations", import.meta.url)]
  .map((u) => fileURLToPath(u))
  .find((dir) => existsSync(dir)) ?? fileURLToPath(new URL("../../migrations", import.meta.url));

/** A pool of PostgreSQL connections (pg's), as createPgPool makes it. */
export type PgPool = pg.Pool;

/** Something that logs a line: a pino logger's `info`, console.log… */
export type PgLog = (msg: string) => void;

/**
 * A connection pool for one process role (`name` becomes application_name, so pg_stat_activity
 * says who holds a connection). Small on purpose: PostgreSQL holds history, not the hot path
 * (submissions and live jobs never wait on it), and every process of every role has a pool of its
 * own. An error on an idle client (PostgreSQL restarted, a connection cut) is logged, not thrown:
 * the pool drops that client and connects again when next asked.
 */
export function createPgPool(url: string, name: string, log: PgLog = (m) => console.error(m)): pg.Pool {
  const pool = new pg.Pool({
    connectionString: url,
    application_name: name,
    max: 5,
    idleTimeoutMillis: 30_000,
    // Fail a query within seconds while PostgreSQL is down, rather than queueing forever.
    connectionTimeoutMillis: 5_000,
  });
  pool.on("error", (err) => log(`postgres (${name}): idle client error: ${err.message}`));
  return pool;
}

/** A lock key of our own (any 64-bit number), taken with a blocking pg_advisory_lock around the run. */
const MIGRATE_LOCK = 7_236_101_811;

/**
 * Brings the database at `url` up to the newest migration. Safe to run from several processes at
 * once: node-pg-migrate's own lock is a try-lock that fails the second runner, so each run first
 * waits for a blocking advisory lock of ours on the same session, and a runner that got it after
 * another finds nothing left to do. Migrates the first schema on the URL's search_path (a test
 * stack's own, see test/support/stack.ts), creating it, or `public`.
 */
export async function migrate(url: string, log: PgLog = () => undefined): Promise<void> {
  const client = new pg.Client({ connectionString: url, application_name: "migrate" });
  await client.connect();
  try {
    await client.query("SELECT pg_advisory_lock($1)", [MIGRATE_LOCK]);
    const { rows } = await client.query<{ search_path: string }>("SHOW search_path");
    const first = rows[0]!.search_path.split(",")[0]!.trim().replace(/^"(.*)"$/, "$1");
    const schema = !first || first === "$user" ? "public" : first;
    await runner({
      dbClient: client,
      dir: MIGRATIONS_DIR,
      direction: "up",
      migrationsTable: "pgmigrations",
      schema,
      createSchema: true,
      count: Infinity,
      checkOrder: true,
      logger: { debug: () => undefined, info: log, warn: log, error: log },
    });
  } finally {
    await client.query("SELECT pg_advisory_unlock_all()").catch(() => undefined);
    await client.end().catch(() => undefined);
  }
}

/**
 * `url` with its sessions' search_path set to `schema` (libpq's `options`), so every pool made from
 * it, and migrate(), work in that schema: how test stacks share one database, each in a schema
 * of its own (test/support/stack.ts), as they share one Redis under key prefixes of their own.
 */
export function withSchema(url: string, schema: string): string {
  if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error(`not a plain schema name: ${schema}`);
  const u = new URL(url);
  u.searchParams.set("options", `-c search_path=${schema}`);
  return u.toString();
}

/**
 * Migrates the database at `url`, then a pool on it for `name` (what each app does at start).
 * PostgreSQL still starting (compose, npm start) is waited for up to `waitMs`, trying each second.
 */
export async function connectPostgres(url: string, name: string, log?: PgLog, waitMs = 30_000): Promise<pg.Pool> {
  const until = Date.now() + waitMs;
  for (;;) {
    try {
      await migrate(url, log);
      break;
    } catch (err) {
      const code = (err as { code?: string }).code;
      // Refused or not yet accepting connections (57P03: the database system is starting up).
      if (Date.now() > until || !["ECONNREFUSED", "57P03", "ENOTFOUND", "EAI_AGAIN"].includes(code ?? "")) throw err;
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
  return createPgPool(url, name, log);
}
