/**
 * Drills for the ledger in PostgreSQL (issue 18), on a private PostgreSQL this file starts
 * (scripts/postgres.mjs) so it can stop it:
 * - PostgreSQL stopped mid-run and started again: settlements and grants go on meanwhile (the
 *   entries wait in the Redis stream, and /metrics says so); afterwards every entry arrives once
 *   and `reconcile` is clean.
 * - The drainer killed between its insert and its trim: the entries are drained again, not doubled.
 * - Redis's keys flushed (the stack's own prefix), then `rebuild`: accounts, balances, limits and
 *   keys come back as they were.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import request from "supertest";
import { createMetrics } from "@serp/metrics";
import { AccountStore, LedgerDrainer, createPgPool, keySpace, reconcile, type PgPool } from "@serp/store";
import { startPostgres, type PrivatePostgres } from "../../scripts/postgres.mjs";
import { runCli } from "../../apps/cli/src/main.js";
import { REDIS_URL, fixturesAvailable, startStack, type Stack } from "../support/stack.js";

const d = fixturesAvailable ? describe : describe.skip;

let pgDir: string;
let server: PrivatePostgres;

beforeAll(async () => {
  pgDir = mkdtempSync(join(tmpdir(), "serp-drill-pg-"));
  server = await startPostgres(pgDir, { fast: true });
}, 30_000);
afterAll(async () => {
  await server?.stop();
  rmSync(pgDir, { recursive: true, force: true });
}, 30_000);

/** The CLI as an operator runs it against one stack (its prefix, its schema). */
async function cli(stack: Stack, ...argv: string[]): Promise<{ code: number; text: string }> {
  const saved = { REDIS_URL: process.env.REDIS_URL, DATABASE_URL: process.env.DATABASE_URL, SERP_PREFIX: process.env.SERP_PREFIX };
  Object.assign(process.env, { ...stack.settings, DATABASE_URL: stack.databaseUrl });
  const lines: string[] = [];
  try {
    const code = await runCli(argv, (l) => lines.push(l), () => undefined);
    return { code, text: lines.join("\n") };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}

async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const by = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > by) throw new Error(`${what}: still ${JSON.stringify(v)} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The ledger rows of one account: how many, and how many distinct entries (jobs and types, grants). */
async function rows(pool: PgPool, accountId: string): Promise<{ total: number; distinct: number; jobs: number }> {
  const r = await pool.query<{ total: string; distinct: string; jobs: string }>(
    `SELECT count(*) AS total, count(DISTINCT (type, coalesce(job_id, grant_id))) AS distinct, count(DISTINCT job_id) AS jobs FROM ledger WHERE account_id = $1`,
    [accountId],
  );
  return { total: Number(r.rows[0]!.total), distinct: Number(r.rows[0]!.distinct), jobs: Number(r.rows[0]!.jobs) };
}

const body = { endpoint: "web-search", params: { query: "coffee" }, queue: "fast" };

async function runJobs(stack: Stack, auth: string, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send(body);
    expect(res.status).toBe(202);
    ids.push(res.body.job.id);
  }
  await until("jobs final", () => Promise.all(ids.map(async (id) => (await stack.api.jobs.get(id))?.job.status)), (s) => s.every((x) => x === "completed" || x === "failed"));
  return ids;
}

const metricValue = (text: string, name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text)?.[1]);

d("drill: the ledger in PostgreSQL", () => {
  test("PostgreSQL stopped mid-run and restarted: jobs and grants go on, every entry arrives once, reconcile is clean", async () => {
    const metrics = createMetrics("worker");
    const stack = await startStack({ databaseUrl: server.url, workerQueues: ["fast"], concurrency: 4, workerMetrics: metrics });
    const pool = createPgPool(stack.databaseUrl!, "drill", () => undefined);
    try {
      const { accountId, auth } = await stack.account(500);
      const before = await runJobs(stack, auth, 6);
      await until("drained before the outage", () => rows(pool, accountId), (r) => r.total === 7);

      await server.stop();
      const during = await runJobs(stack, auth, 6);
      expect(await stack.api.accounts.grant(accountId, 50, "topup")).toBe(true);
      // The ledger waits in the stream, and /metrics says so.
      const text = await until("metrics during the outage", () => metrics.registry.metrics(), (t) => metricValue(t, "serp_ledger_postgres_up") === 0 && metricValue(t, "serp_ledger_pending_entries") >= 7);
      expect(metricValue(text, "serp_ledger_drain_lag_seconds")).toBeGreaterThan(0);
      expect(metricValue(text, "serp_ledger_stream_fill_ratio")).toBeGreaterThan(0);
      // Reading the ledger needs PostgreSQL: it says so rather than show a part.
      await expect(stack.api.accounts.ledger(accountId, 1000)).rejects.toThrow();

      server = await startPostgres(pgDir, { fast: true, port: server.port });
      await until("drained after the outage", () => stack.redis.xlen(keySpace(stack.prefix).ledgerStream()), (n) => n === 0);
      // Two grants and twelve jobs, each exactly once.
      expect(await rows(pool, accountId)).toEqual({ total: 14, distinct: 14, jobs: 12 });
      const shown = await stack.api.accounts.ledger(accountId, 1000);
      for (const id of [...before, ...during]) expect(shown.filter((e) => e.jobId === id)).toHaveLength(1);
      expect(shown.filter((e) => e.type === "grant").map((e) => e.credits)).toEqual([500, 50]);
      const after = await until("metrics after", () => metrics.registry.metrics(), (t) => metricValue(t, "serp_ledger_postgres_up") === 1 && metricValue(t, "serp_ledger_pending_entries") === 0);
      expect(metricValue(after, "serp_ledger_drain_lag_seconds")).toBe(0);

      const rec = await cli(stack, "reconcile");
      expect(rec).toEqual({ code: 0, text: expect.stringMatching(/ 0 with a difference$/) });
    } finally {
      await pool.end();
      await stack.close();
    }
  }, 90_000);

  test("the drainer killed between its insert and its trim: drained again, no entry doubled", async () => {
    const stack = await startStack({ databaseUrl: server.url, workerQueues: [] });
    const pool = createPgPool(stack.databaseUrl!, "drill", () => undefined);
    const keys = keySpace(stack.prefix);
    try {
      const { accountId } = await stack.account(100);
      for (let i = 0; i < 5; i++) {
        const id = `job_drill_${stack.prefix}_${i}`;
        const created = await stack.api.jobs.create({ id, accountId, endpoint: "web-search", queue: "fast", params: { query: `q${i}` } as never, createdAt: new Date().toISOString() }, 1);
        expect(created.outcome).toBe("created");
        const ok = i % 2 === 0;
        await stack.api.jobs.finalize(id, accountId, {
          status: ok ? "completed" : "failed", credits: ok ? 1 : 0, latencyMs: 10, error: ok ? null : "boom", result: null, completedAt: new Date().toISOString(),
        });
      }
      expect(await stack.redis.xlen(keys.ledgerStream())).toBe(6);

      const child = spawn(process.execPath, ["--import", "tsx", "test/support/ledger-drainer-child.ts"], {
        env: { ...process.env, ...stack.settings, DATABASE_URL: stack.databaseUrl },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
      const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((r) => child.once("exit", (c, s) => r([c, s])));
      expect({ code, signal, stderr }).toEqual({ code: null, signal: "SIGKILL", stderr: "" });
      // It died after its insert committed and before its trim: everything in both places.
      expect(await rows(pool, accountId)).toEqual({ total: 6, distinct: 6, jobs: 5 });
      expect(await stack.redis.xlen(keys.ledgerStream())).toBe(6);

      await new LedgerDrainer(stack.redis, keys, pool).drainAll();
      expect(await rows(pool, accountId)).toEqual({ total: 6, distinct: 6, jobs: 5 });
      expect(await stack.redis.xlen(keys.ledgerStream())).toBe(0);
      expect(await reconcile(stack.redis, keys, pool)).toEqual({ accounts: 1, differences: [] });
      expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 97, reserved: 0 });
    } finally {
      await pool.end();
      await stack.close();
    }
  }, 60_000);

  test("Redis's keys flushed, then rebuild: accounts, balances, limits and keys come back equal; reconcile finds a difference before and none after", async () => {
    const stack = await startStack({ databaseUrl: server.url, workerQueues: ["fast"], concurrency: 4 });
    const keys = keySpace(stack.prefix);
    try {
      const a = await stack.account(100);
      const b = await stack.account(30);
      const { key: second } = await stack.api.accounts.createKey(a.accountId, "second");
      const { info: revoked } = await stack.api.accounts.createKey(a.accountId, "to revoke");
      expect(await stack.api.accounts.revokeKey(a.accountId, revoked.id)).toBe(true);
      expect(await stack.api.accounts.setLimits(a.accountId, { rateLimit: 7, rateWindowSeconds: 10, maxInFlight: 3 })).toBe(true);
      await runJobs(stack, a.auth, 3);
      await until("drained", () => stack.redis.xlen(keys.ledgerStream()), (n) => n === 0);
      await stack.worker!.closers.closeAll(10_000);

      const fresh = () => new AccountStore(stack.redis, keys);
      const snapshot = async () => {
        const store = fresh();
        return {
          list: await store.list(),
          accounts: await Promise.all([a.accountId, b.accountId].map((id) => store.get(id))),
          keys: await Promise.all([a.accountId, b.accountId].map(async (id) => (await store.listKeys(id)).sort((x, y) => x.id.localeCompare(y.id)))),
        };
      };
      const before = await snapshot();
      expect(before.accounts[0]!.balance).toBeLessThan(100);
      expect(before.accounts[0]!.limits).toEqual({ rateLimit: 7, rateWindowSeconds: 10, maxInFlight: 3 });

      // Redis loses everything of this deployment (its own prefix; never FLUSHALL on the shared Redis).
      for (const pattern of [`${stack.prefix}:*`, `{${stack.prefix}}:*`]) {
        let cursor = "0";
        do {
          const [next, found] = await stack.redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
          cursor = next;
          if (found.length) await stack.redis.del(...found);
        } while (cursor !== "0");
      }
      expect(await fresh().get(a.accountId)).toBeNull();
      expect(await fresh().authenticate(a.key)).toBeNull();
      const broken = await cli(stack, "reconcile");
      expect(broken.code).toBe(1);
      expect(broken.text).toContain(`${a.accountId}: missing in Redis`);

      expect(await cli(stack, "rebuild")).toEqual({ code: 0, text: expect.stringContaining('"accounts": 2') });
      expect(await snapshot()).toEqual(before);
      expect(await fresh().authenticate(a.key)).toBe(a.accountId);
      expect(await fresh().authenticate(second)).toBe(a.accountId);
      expect(await fresh().authenticate(b.key)).toBe(b.accountId);
      expect((await fresh().listKeys(a.accountId)).find((k) => k.id === revoked.id)?.revokedAt).toBeTruthy();
      expect(await cli(stack, "reconcile")).toMatchObject({ code: 0 });
    } finally {
      await stack.close();
    }
  }, 60_000);
});
