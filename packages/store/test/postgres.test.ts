/**
 * The PostgreSQL side of the store on the test run's PostgreSQL (DATABASE_URL; npm test starts a
 * private one), in a schema of this file's own: migrations from several processes at once, the
 * ledger's idempotent insert, ledger() merging PostgreSQL with the stream, and the accounts, keys
 * and limits written through to PostgreSQL.
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { newJobId, type JobParams } from "@serp/shared";
import { createServer } from "node:net";
import {
  AccountStore, JobStore, LedgerDrainer, PostgresUnavailableError, createPgPool, inTransaction, insertLedgerEntries, keySpace, loadAccounts, loadKeys, migrate,
  openPostgres, withSchema, type PgPool,
} from "../src/index.js";

const DATABASE_URL = process.env.DATABASE_URL;
const d = DATABASE_URL ? describe : describe.skip;
if (!DATABASE_URL) console.warn("postgres.test.ts: DATABASE_URL is unset (npm test sets it): skipped");

const schema = `t${randomBytes(5).toString("hex")}`;
const keys = keySpace(schema);
const params: JobParams = { query: "q", country: "us", language: "en", page: 1 };
let redis: Redis;
let pool: PgPool;
let url: string;

d("the store in PostgreSQL", () => {
  beforeAll(async () => {
    url = withSchema(DATABASE_URL!, schema);
    redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
    pool = createPgPool(url, "store-test", () => undefined);
  });
  afterAll(async () => {
    await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await pool.end();
    const found = await redis.keys(`${keys.prefix}:*`);
    if (found.length) await redis.del(...found);
    redis.disconnect();
  });

  test("migrate: several at once on a new schema all succeed, and the tables are there once", async () => {
    await Promise.all([migrate(url), migrate(url), migrate(url)]);
    const r = await pool.query<{ name: string }>("SELECT name FROM pgmigrations ORDER BY name");
    expect(r.rows.length).toBeGreaterThanOrEqual(1);
    expect(new Set(r.rows.map((x) => x.name)).size).toBe(r.rows.length);
    const t = await pool.query<{ table_name: string }>("SELECT table_name FROM information_schema.tables WHERE table_schema = $1", [schema]);
    expect(t.rows.map((x) => x.table_name)).toEqual(expect.arrayContaining(["accounts", "api_keys", "ledger"]));
  });

  test("withSchema refuses a schema name that is not plain", () => {
    expect(() => withSchema(DATABASE_URL!, 'x"; DROP')).toThrow(/schema/);
  });

  test("accounts, keys, revocations and limits are written to PostgreSQL too", async () => {
    const accounts = new AccountStore(redis, keys, 0, pool);
    const a = await accounts.create("acme");
    const { key, info } = await accounts.createKey(a.id, "first");
    expect(await accounts.setLimits(a.id, { rateLimit: 9, rateWindowSeconds: 30 })).toBe(true);
    expect(await accounts.setLimits(a.id, { rateWindowSeconds: null })).toBe(true);
    expect(await accounts.revokeKey(a.id, info.id)).toBe(true);
    const row = (await loadAccounts(pool)).find((x) => x.id === a.id);
    expect(row).toEqual({ id: a.id, name: "acme", createdAt: a.createdAt, limits: { rateLimit: 9 } });
    const k = (await loadKeys(pool)).find((x) => x.id === info.id)!;
    expect(k).toMatchObject({ accountId: a.id, label: "first", createdAt: info.createdAt, revokedAt: expect.any(String) });
    // Hashes only: the key's text is nowhere in PostgreSQL.
    const dump = JSON.stringify((await pool.query("SELECT * FROM api_keys")).rows);
    expect(dump).not.toContain(key);
  });

  test("ledger(): PostgreSQL's rows and the stream's, each entry once, oldest first; a second insert adds nothing", async () => {
    const accounts = new AccountStore(redis, keys, 0, pool);
    const jobs = new JobStore(redis, keys, 600);
    const a = await accounts.create("ledger");
    await accounts.grant(a.id, 10, "starter");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const id = newJobId();
      ids.push(id);
      await jobs.create({ id, accountId: a.id, endpoint: "web-search", queue: "fast", params, createdAt: new Date().toISOString() }, 1);
      await jobs.finalize(id, a.id, { status: "completed", credits: 1, latencyMs: 5, error: null, result: null, completedAt: new Date(Date.now() + i).toISOString() });
      // The first job is drained into PostgreSQL; the others wait in the stream.
      if (i === 0) await new LedgerDrainer(redis, keys, pool).drainAll();
    }
    const ledger = await accounts.ledger(a.id);
    expect(ledger.map((e) => [e.type, e.jobId ?? e.pack, e.credits])).toEqual([["grant", "starter", 10], ...ids.map((id) => ["charge", id, 1])]);
    expect(ledger.every((e) => !("accountId" in e))).toBe(true);
    expect(await accounts.ledger(a.id, 2)).toEqual(ledger.slice(-2));

    const streamed = (await redis.xrange(keys.ledgerStream(), "-", "+")).map(([, f]) => JSON.parse(f[1]!));
    expect(streamed).toHaveLength(2);
    expect(await insertLedgerEntries(pool, streamed)).toBe(2);
    expect(await insertLedgerEntries(pool, streamed)).toBe(0);
    await new LedgerDrainer(redis, keys, pool).drainAll();
    expect(await redis.xlen(keys.ledgerStream())).toBe(0);
    expect(await accounts.ledger(a.id)).toEqual(ledger);
  });

  test("inTransaction: the connection terminated mid-transaction rejects the work, the process lives, the broken client is discarded", async () => {
    const other = createPgPool(url, "store-test-killer", () => undefined);
    try {
      const uncaught: Error[] = [];
      const onUncaught = (err: Error) => uncaught.push(err);
      process.on("uncaughtException", onUncaught);
      let pid = 0;
      await expect(
        inTransaction(pool, async (client) => {
          pid = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid;
          await other.query("SELECT pg_terminate_backend($1)", [pid]);
          // The FATAL arrives while the client is idle between statements: an 'error' event.
          await new Promise((r) => setTimeout(r, 200));
          await client.query("SELECT 1");
        }),
      ).rejects.toThrow();
      process.off("uncaughtException", onUncaught);
      expect(uncaught).toEqual([]);
      // The next client is a working one, on another backend.
      const next = await inTransaction(pool, async (client) => (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!.pid);
      expect(next).not.toBe(pid);
    } finally {
      await other.end();
    }
  });

  test("openPostgres: while its database cannot be reached the pool refuses at once, and end() stops the attempts", async () => {
    // A port where nothing listens (taken, then freed).
    const port = await new Promise<number>((resolve) => {
      const srv = createServer().listen(0, "127.0.0.1", () => {
        const p = (srv.address() as { port: number }).port;
        srv.close(() => resolve(p));
      });
    });
    const warnings: string[] = [];
    const down = openPostgres(`postgres://postgres@127.0.0.1:${port}/nowhere`, "store-test", { info: () => undefined, warn: (m) => warnings.push(m) });
    await down.firstAttempt;
    expect(down.migrated).toBe(false);
    const started = Date.now();
    await expect(down.query("SELECT 1")).rejects.toBeInstanceOf(PostgresUnavailableError);
    await expect(down.connect()).rejects.toBeInstanceOf(PostgresUnavailableError);
    expect(Date.now() - started).toBeLessThan(100);
    expect(warnings).toEqual([expect.stringMatching(/cannot connect and migrate .*history is unavailable/)]);
    await down.end();

    const up = openPostgres(url, "store-test", { info: () => undefined, warn: () => undefined });
    await up.firstAttempt;
    expect(up.migrated).toBe(true);
    await up.whenMigrated();
    expect((await up.query<{ one: number }>("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    await up.end();
  });
});
