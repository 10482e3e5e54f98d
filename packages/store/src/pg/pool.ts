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
 * the pool drops that client and connects again when next asked. pool.query() guards the client it
 * lends; code that checks a client out itself goes through inTransaction, which guards it too.
 */
export function createPgPool(url: string, name: string, log: PgLog = (m) => console.error(m)): pg.Pool {
  const pool = new pg.Pool(pgPoolConfig(url, name));
  pool.on("error", (err) => log(`postgres (${name}): idle client error: ${err.message}`));
  return pool;
}

/** The settings of every pool (createPgPool's, and the apps' in app-pool.ts). */
export function pgPoolConfig(url: string, name: string): pg.PoolConfig {
  return {
    connectionString: url,
    application_name: name,
    max: 5,
    idleTimeoutMillis: 30_000,
    // Fail a query within seconds while PostgreSQL is down, rather than queueing forever.
    connectionTimeoutMillis: 5_000,
  };
}

/** A lock key of our own (any 64-bit number), taken with a blocking pg_advisory_lock around the run. */
const MIGRATE_LOCK = 7_236_101_811;

/**
 * Brings the database at `url` up to the newest migration. Safe to run from several processes at
 * once: node-pg-migrate's own lock is a try-lock that fails the second runner, so each run first
 * waits for a blocking advisory lock of ours on the same session, and a runner that got it after
 * another finds nothing left to do. Migrates the first schema on the URL's search_path (a test
 * stack's own, see test/support/stack.ts), creating it, or `public`. A connection cut meanwhile
 * fails the run (its queries reject); `signal` ends it early (the app is stopping).
 */
export async function migrate(url: string, log: PgLog = () => undefined, signal?: AbortSignal): Promise<void> {
  const client = new pg.Client({ connectionString: url, application_name: "migrate", connectionTimeoutMillis: 5_000 });
  // Without a listener, a connection PostgreSQL drops would be an uncaught error: the query in
  // progress rejects with it all the same.
  client.on("error", () => undefined);
  const abort = () => void client.end().catch(() => undefined);
  signal?.addEventListener("abort", abort, { once: true });
  try {
    signal?.throwIfAborted();
    await client.connect();
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
    signal?.removeEventListener("abort", abort);
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
 * Migrates the database at `url`, then a pool on it for `name`: the CLI's, which fails at once when
 * PostgreSQL cannot be reached. The apps start without it (openPostgres, app-pool.ts).
 */
export async function connectPostgres(url: string, name: string, log?: PgLog): Promise<pg.Pool> {
  await migrate(url, log);
  return createPgPool(url, name, log);
}

/**
 * Runs `work` in a transaction on a client of `pool`. While the client is checked out it has an
 * `error` listener of its own (the pool's listens only to idle clients: without one, PostgreSQL
 * dropping the connection mid-transaction, by a restart, a failover or pg_terminate_backend, is an
 * uncaught error that ends the process); the statement in progress rejects instead. A client that
 * failed is released with its error, so the pool discards it rather than lend a broken connection.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  let failure: Error | undefined;
  const onError = (err: Error) => (failure ??= err);
  // The listener goes on in the pool's callback, the moment the pool takes its own off: awaiting
  // pool.connect() would leave a gap (until the promise's continuation runs) in which an error
  // parsed from the same socket read, a FATAL right behind the previous query's last reply, finds
  // no listener at all.
  const client = await new Promise<pg.PoolClient>((resolve, reject) =>
    pool.connect((err, c) => {
      if (err || !c) return reject(err ?? new Error("no client"));
      c.on("error", onError);
      resolve(c);
    }),
  );
  try {
    await client.query("BEGIN");
    const out = await work(client);
    await client.query("COMMIT");
    return out;
  } catch (err) {
    failure ??= err as Error;
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    client.off("error", onError);
    client.release(failure);
  }
}
