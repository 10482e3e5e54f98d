/**
 * The apps' PostgreSQL: a pool that exists from the start and is migrated in the background, so
 * the API and the workers start, and serve everything that does not need history, while PostgreSQL
 * is down (submissions, live jobs, hot reads and cache hits never touch it).
 */
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { migrate, pgPoolConfig, type PgLog } from "./pool.js";

/** PostgreSQL has not been reached (and migrated) since this process started: nothing was asked of it. */
export class PostgresUnavailableError extends Error {
  override readonly name = "PostgresUnavailableError";
  constructor() {
    super("PostgreSQL has not been reached yet (connecting and migrating in the background)");
  }
}

export interface AppPoolLog {
  info: PgLog;
  warn: PgLog;
}

/** The first pause between two attempts to connect and migrate, doubled after each failure up to the second. */
const FIRST_DELAY_MS = 500;
const MAX_DELAY_MS = 5_000;

/**
 * A pool that refuses at once (PostgresUnavailableError) until its database has been migrated once,
 * instead of each query waiting for a connection that cannot be made, and against tables that may
 * not exist yet. Past that, a query while PostgreSQL is down fails as pg fails it. Its `end()` also
 * stops the migration attempts.
 */
export class AppPool extends pg.Pool {
  private migratedOnce = false;
  private readonly stop = new AbortController();
  private readonly waiters: (() => void)[] = [];
  /** Settles when the first attempt to connect and migrate has ended, whichever way. */
  readonly firstAttempt: Promise<void>;

  constructor(url: string, name: string, log: AppPoolLog) {
    super(pgPoolConfig(url, name));
    this.on("error", (err) => log.warn(`postgres (${name}): idle client error: ${err.message}`));
    let attempted: () => void = () => undefined;
    this.firstAttempt = new Promise((r) => (attempted = r));
    void this.migrateInBackground(url, name, log, attempted);
  }

  /** Whether the database has been reached and migrated (it may be down again since). */
  get migrated(): boolean {
    return this.migratedOnce;
  }

  /** Resolves once the database has been migrated (at once when it has been). */
  whenMigrated(): Promise<void> {
    return this.migratedOnce ? Promise.resolve() : new Promise((r) => this.waiters.push(r));
  }

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void): void;
  override connect(callback?: (err: Error | undefined, client: pg.PoolClient | undefined, done: (release?: unknown) => void) => void): Promise<pg.PoolClient> | void {
    // pool.query() checks its client out through connect(callback): this gates it too.
    if (!this.migratedOnce) {
      const err = new PostgresUnavailableError();
      if (!callback) return Promise.reject(err);
      process.nextTick(() => callback(err, undefined, () => undefined));
      return;
    }
    return callback ? super.connect(callback) : super.connect();
  }

  override end(): Promise<void>;
  override end(callback: () => void): void;
  override end(callback?: () => void): Promise<void> | void {
    this.stop.abort();
    return callback ? super.end(callback) : super.end();
  }

  /** Connects and migrates, pausing longer after each failure, until it worked or the pool is ended. */
  private async migrateInBackground(url: string, name: string, log: AppPoolLog, attempted: () => void): Promise<void> {
    let delay = FIRST_DELAY_MS;
    let lastError = "";
    for (let tries = 1; !this.stop.signal.aborted; tries++) {
      try {
        await migrate(url, log.info, this.stop.signal);
        this.migratedOnce = true;
        for (const wake of this.waiters.splice(0)) wake();
        if (tries > 1) log.info(`postgres (${name}): reached and migrated after ${tries} attempts; history is available`);
        attempted();
        return;
      } catch (err) {
        attempted();
        if (this.stop.signal.aborted) return;
        const message = (err as Error).message;
        // One line per kind of failure, not one per attempt.
        if (message !== lastError) log.warn(`postgres (${name}): cannot connect and migrate (${message}); history is unavailable, trying again in the background`);
        lastError = message;
      }
      await sleep(delay, undefined, { signal: this.stop.signal }).catch(() => undefined);
      delay = Math.min(MAX_DELAY_MS, delay * 2);
    }
  }
}

/**
 * The pool of an app's process role (`name` becomes application_name), connected and migrated in
 * the background; see AppPool.
 */
export function openPostgres(url: string, name: string, log: AppPoolLog): AppPool {
  return new AppPool(url, name, log);
}
