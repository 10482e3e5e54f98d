/**
 * The PostgreSQL side of the store on the test run's PostgreSQL (DATABASE_URL; npm test starts a
 * private one), in a schema of this file's own: migrations from several processes at once, the
 * ledger's idempotent insert, ledger() merging PostgreSQL with the stream, and the accounts, keys
 * and limits written through to PostgreSQL.
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { newJobId, type JobParams } from "@serp/shared";
import {
  AccountStore, JobStore, LedgerDrainer, createPgPool, insertLedgerEntries, keySpace, loadAccounts, loadKeys, migrate, withSchema, type PgPool,
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
});
