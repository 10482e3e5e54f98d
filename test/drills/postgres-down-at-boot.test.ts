/**
 * Drill (issue 26, part 3): the apps start while PostgreSQL is down. The API and a worker start as
 * processes with DATABASE_URL naming a private PostgreSQL that is stopped (a fresh database, never
 * migrated): they come up at once, submissions, live jobs, hot reads and cache hits work, history
 * reads answer 503 with Retry-After, and /readyz says history is unavailable. PostgreSQL is then
 * started: the migrations run once (one process runs them, under the advisory lock; the other finds
 * nothing to do), the ledger drains, and history reads work (usage; a job past its hot window,
 * read from the archive).
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { newJobId } from "@serp/shared";
import { MIGRATIONS_DIR, createPgPool, keySpace, type PgPool } from "@serp/store";
import { startPostgres, type PrivatePostgres } from "../../scripts/postgres.mjs";
import { freePort, spawnService, waitFor, type ServiceProcess } from "../ops/support.js";
import { fixturesAvailable, startStack, type Stack } from "../support/stack.js";

const d = fixturesAvailable ? describe : describe.skip;

let pgDir: string;
let server: PrivatePostgres | undefined;
let stack: Stack;
let pool: PgPool | undefined;
const processes: ServiceProcess[] = [];

beforeAll(async () => {
  pgDir = mkdtempSync(join(tmpdir(), "serp-drill-pgdown-"));
  // Made (with the apps' database) and stopped: the apps find nothing listening on its port.
  server = await startPostgres(pgDir, { fast: true });
  await server.stop();
  // The stack's own API has no PostgreSQL: the account is made in Redis, as one made before the outage.
  stack = await startStack({ databaseUrl: false, workerQueues: [] });
}, 60_000);
afterAll(async () => {
  await Promise.all(processes.map((p) => p.kill()));
  await pool?.end();
  await stack?.close();
  await server?.stop();
  rmSync(pgDir, { recursive: true, force: true });
}, 60_000);

d("drill: the apps start while PostgreSQL is down", () => {
  test("up at once without PostgreSQL, history 503 meanwhile; once it starts: migrated once, the ledger drained, history readable", async () => {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const databaseUrl = server!.url;
    const common = { ...stack.settings, DATABASE_URL: databaseUrl };
    // A new API_KEY: its account is written to PostgreSQL first, so it is made once PostgreSQL is reached.
    const apiKey = `sk_live_drill_${stack.prefix}`;
    const api = spawnService("api", { ...common, PORT: String(port), HOST: "127.0.0.1", API_KEY: apiKey, API_KEY_CREDITS: "7" });
    const worker = spawnService("worker", { ...common, WORKER_QUEUES: "live,fast", WORKER_CONCURRENCY: "4", JOB_HOT_SECONDS: "1", UPSTREAM_BASE_URL: stack.replay.url });
    processes.push(api, worker);
    const started = Date.now();
    await Promise.all([
      api.waitForLog("API listening", (l) => String(l.msg).startsWith("API listening"), 60_000),
      worker.waitForLog("workers ready", (l) => l.msg === "workers ready", 60_000),
    ]);
    // They used to wait 30 s for PostgreSQL, then exit 1.
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(api.logs.some((l) => String(l.msg).includes("history is unavailable"))).toBe(true);
    const apiKeyAccount = () => fetch(`${base}/v1/account`, { headers: { Authorization: `Bearer ${apiKey}` } });
    expect((await apiKeyAccount()).status).toBe(401);

    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ready", history: "unavailable", detail: expect.stringContaining("PostgreSQL") });

    const { accountId, auth } = await stack.account(100);
    const headers = { Authorization: auth, "Content-Type": "application/json" };
    const post = async (body: object) => {
      const res = await fetch(`${base}/v1/jobs`, { method: "POST", headers, body: JSON.stringify(body) });
      return { status: res.status, body: (await res.json()) as { job: { id: string; status: string; cacheHit?: boolean } } };
    };
    const getJob = async (id: string) => {
      const res = await fetch(`${base}/v1/jobs/${id}`, { headers });
      return { status: res.status, headers: res.headers, body: (await res.json()) as { job: { id: string; status: string }; error?: { code: string; message: string } } };
    };

    // Live jobs, a cache hit, and async jobs polled (hot reads): all without PostgreSQL.
    const live = await Promise.all([0, 1].map((i) => post({ endpoint: "web-search", params: { query: `down ${i}` }, queue: "live", cacheMaxAgeSeconds: 600 })));
    for (const r of live) expect({ status: r.status, job: r.body.job.status }).toEqual({ status: 200, job: "completed" });
    const hit = await post({ endpoint: "web-search", params: { query: "down 0" }, queue: "live", cacheMaxAgeSeconds: 600 });
    expect({ status: hit.status, job: hit.body.job.status, cacheHit: hit.body.job.cacheHit }).toEqual({ status: 200, job: "completed", cacheHit: true });
    const queued = await Promise.all([0, 1, 2].map((i) => post({ endpoint: "web-search", params: { query: `queued ${i}` }, queue: "fast" })));
    for (const r of queued) expect(r.status).toBe(202);
    for (const r of queued) {
      await waitFor("a fast job final", async () => ["completed", "failed"].includes((await getJob(r.body.job.id)).body.job?.status));
      expect((await getJob(r.body.job.id)).status).toBe(200);
    }
    const ids = [...live, hit, ...queued].map((r) => r.body.job.id);

    // History reads: 503 with Retry-After and a body that says what is down.
    const usage = await fetch(`${base}/v1/account/usage`, { headers });
    expect(usage.status).toBe(503);
    expect(Number(usage.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await usage.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: "unavailable", message: expect.stringMatching(/^History is unavailable/) });
    const unknown = await getJob(newJobId());
    expect({ status: unknown.status, retryAfter: Number(unknown.headers.get("retry-after")) > 0, code: unknown.body.error?.code }).toEqual({ status: 503, retryAfter: true, code: "unavailable" });
    const keys = keySpace(stack.prefix);
    // Every settlement (and the grant) waits in the stream.
    expect(await stack.redis.xlen(keys.ledgerStream())).toBe(ids.length + 1);

    server = await startPostgres(pgDir, { fast: true, port: server!.port });
    await waitFor("the ledger drained", async () => (await stack.redis.xlen(keys.ledgerStream())) === 0, 30_000, 200);
    await waitFor("history available in /readyz", async () => ((await (await fetch(`${base}/readyz`)).json()) as { history: string }).history === "available", 30_000, 200);

    const made = await waitFor("the API_KEY account made", async () => {
      const res = await apiKeyAccount();
      return res.status === 200 && ((await res.json()) as { balance: number });
    }, 15_000, 200);
    expect(made.balance).toBe(7);

    // The migrations ran once: each recorded once, run by one process; the other found nothing to do.
    pool = createPgPool(databaseUrl, "drill", () => undefined);
    const files = readdirSync(MIGRATIONS_DIR).filter((f) => f.endsWith(".sql")).map((f) => f.replace(/\.sql$/, "")).sort();
    const recorded = await pool.query<{ name: string }>("SELECT name FROM pgmigrations ORDER BY name");
    expect(recorded.rows.map((r) => r.name)).toEqual(files);
    await waitFor("both processes migrated", () => [api, worker].every((p) => p.logs.some((l) => l.msg === "No migrations to run!" || String(l.msg).startsWith("### MIGRATION"))), 30_000);
    const ran = [api, worker].map((p) => p.logs.filter((l) => String(l.msg).startsWith("### MIGRATION")).length);
    expect(ran.sort()).toEqual([0, files.length]);

    // The ledger: the grant and each job once.
    const rows = await pool.query<{ type: string; job_id: string | null }>("SELECT type, job_id FROM ledger WHERE account_id = $1", [accountId]);
    expect(rows.rows.filter((r) => r.type === "grant")).toHaveLength(1);
    expect(rows.rows.filter((r) => r.job_id).map((r) => r.job_id).sort()).toEqual([...ids].sort());

    // History reads work: usage counts the jobs; a job past its 1-second hot window comes from the archive.
    const after = await fetch(`${base}/v1/account/usage`, { headers });
    expect(after.status).toBe(200);
    const byEndpoint = ((await after.json()) as { usage: { endpoint: string; jobs: number }[] }).usage.filter((u) => u.endpoint === "web-search");
    expect(byEndpoint.reduce((n, u) => n + u.jobs, 0)).toBe(ids.length);
    await waitFor("a job gone from Redis", async () => (await stack.redis.exists(keys.job(queued[0]!.body.job.id))) === 0, 15_000, 200);
    const cold = await getJob(queued[0]!.body.job.id);
    expect({ status: cold.status, id: cold.body.job.id }).toEqual({ status: 200, id: queued[0]!.body.job.id });
    expect((await getJob(newJobId())).status).toBe(404);

    for (const p of processes) expect({ exit: p.child.exitCode ?? p.child.signalCode, output: p.child.exitCode === null ? "" : p.output().slice(-2_000) }).toEqual({ exit: null, output: "" });
  }, 150_000);
});
