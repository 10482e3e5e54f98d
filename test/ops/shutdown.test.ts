/**
 * Graceful shutdown of the real processes under load: a worker finishes its jobs in flight on
 * SIGTERM (or, past its deadline, hands them back), the next worker takes the rest, and every job
 * ends final and billed exactly once; the API answers a live request in flight before it exits.
 */
import { randomBytes } from "node:crypto";
import request from "supertest";
import { fixturesAvailable, REDIS_URL, startStack, type Stack } from "../support/stack.js";
import { freePort, sleep, spawnService, statusOf, waitFor, type ServiceProcess, START_BOUND_MS } from "./support.js";

const d = fixturesAvailable ? describe : describe.skip;
const search = (i: number) => ({ endpoint: "web-search", params: { query: `coffee ${i}` }, queue: "fast" });

d("worker graceful shutdown", () => {
  let stack: Stack;
  const processes: ServiceProcess[] = [];
  const startWorker = async (env: Record<string, string> = {}) => {
    const worker = spawnService("worker", {
      // One account fills every slot here: no fair-share cap (docs/FAIRNESS.md), it is not what this tests.
      ...stack.settings, WORKER_QUEUES: "fast", WORKER_CONCURRENCY: "4", WORKER_ACCOUNT_SHARE: "1",
      HEALTH_PORT: String(await freePort()), UPSTREAM_BASE_URL: stack.replay.url, ...env,
    });
    processes.push(worker);
    await worker.waitForLog("workers ready", (l) => l.msg === "workers ready", START_BOUND_MS);
    return worker;
  };

  beforeAll(async () => {
    stack = await startStack({ workerQueues: [], env: { RATE_LIMIT_PER_MINUTE: "0", MAX_JOBS_IN_FLIGHT: "0" } });
  });
  afterEach(async () => {
    await Promise.all(processes.splice(0).map((p) => p.kill()));
    stack.replay.clearFaults();
    stack.replay.clearRequests();
  });
  afterAll(() => stack.close());

  async function submit(auth: string, n: number): Promise<string[]> {
    const responses = await Promise.all(Array.from({ length: n }, (_, i) => request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send(search(i))));
    for (const res of responses) expect(res.status).toBe(202);
    return responses.map((r) => r.body.job.id as string);
  }
  const statuses = async (ids: string[]) => Promise.all(ids.map(async (id) => (await stack.api.jobs.get(id))!.job.status));

  /** Every job final, completed jobs charged exactly once, and the balance equal to grants minus charges. */
  async function expectSettledOnce(accountId: string, ids: string[], granted: number) {
    const records = await Promise.all(ids.map((id) => stack.api.jobs.get(id)));
    for (const r of records) expect(["completed", "failed"]).toContain(r!.job.status);
    const completed = records.filter((r) => r!.job.status === "completed").map((r) => r!.job.id);
    const ledger = await stack.api.accounts.ledger(accountId, 10_000);
    const charges = ledger.filter((e) => e.type === "charge");
    // One charge per completed job, never two for the same job.
    expect(charges.map((c) => c.jobId).sort()).toEqual([...completed].sort());
    const charged = charges.reduce((sum, c) => sum + c.credits, 0);
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: granted - charged, reserved: 0 });
    return { completed: completed.length, charged };
  }

  test("SIGTERM mid-batch: jobs in flight finish, the rest wait for the next worker; all 40 complete, each billed once", async () => {
    stack.replay.setFaults({ latencyMs: 300 });
    const { auth, accountId } = await stack.account(100);
    const first = await startWorker();
    const ids = await submit(auth, 40);
    await waitFor("a few jobs done and more in flight", () => stack.replay.requests().length >= 10, 15_000, 20);

    first.child.kill("SIGTERM");
    const { code } = await first.exited;
    expect(code).toBe(0);
    expect(first.logs.find((l) => l.msg === "stopped")).toMatchObject({ clean: true });
    expect(first.logs.some((l) => String(l.msg).includes("handed back"))).toBe(false);
    // Nothing was left half-done: each job is finished or still waiting, none stuck in processing.
    const atStop = await statuses(ids);
    expect(atStop.filter((s) => s === "processing")).toEqual([]);
    const doneAtStop = atStop.filter((s) => s === "completed").length;
    expect(doneAtStop).toBeGreaterThan(0);
    expect(doneAtStop).toBeLessThan(40);

    await startWorker();
    await waitFor("all jobs final", async () => (await statuses(ids)).every((s) => s === "completed" || s === "failed"), 25_000, 100);
    const settled = await expectSettledOnce(accountId, ids, 100);
    expect(settled).toEqual({ completed: 40, charged: 40 });
  }, 180_000);

  test("past the shutdown deadline, jobs in flight are handed back to the queue and the next worker takes them at once", async () => {
    stack.replay.setFaults({ latencyMs: 4_000 });
    const { auth, accountId } = await stack.account(20);
    const first = await startWorker({ WORKER_SHUTDOWN_TIMEOUT_MS: "300" });
    const ids = await submit(auth, 6);
    await waitFor("four jobs in flight", () => stack.replay.requests().length >= 4, 15_000, 20);

    const stoppedAt = Date.now();
    first.child.kill("SIGTERM");
    const { code } = await first.exited;
    expect(code).toBe(0);
    expect(Date.now() - stoppedAt).toBeLessThan(3_000);
    expect(first.logs.find((l) => String(l.msg).startsWith("deadline passed"))).toMatchObject({ handedBack: 4, notHandedBack: 0 });
    // Back in the queue, not left active under a lock until the stalled-job check notices.
    // (Jobs carry their account's fair-share priority, so waiting ones sit in BullMQ's prioritized set.)
    const counts = await stack.api.queues.fast.getJobCounts("waiting", "prioritized", "active");
    expect({ waiting: counts.waiting! + counts.prioritized!, active: counts.active }).toEqual({ waiting: 6, active: 0 });

    stack.replay.setFaults({ latencyMs: 100 });
    await startWorker();
    // From the next worker's "ready", not its spawn: how long a process takes to start on a busy
    // machine is not what this measures.
    const readyAt = Date.now();
    await waitFor("all jobs final", async () => (await statuses(ids)).every((s) => s === "completed" || s === "failed"), 20_000, 100);
    // Well inside the lock duration (15 s) a crashed worker's jobs would wait for.
    expect(Date.now() - readyAt).toBeLessThan(12_000);
    const settled = await expectSettledOnce(accountId, ids, 20);
    expect(settled).toEqual({ completed: 6, charged: 6 });
  }, 180_000);
});

d("API graceful shutdown", () => {
  let stack: Stack;
  let api: ServiceProcess | undefined;
  beforeAll(async () => {
    // The live worker runs in the test process; the API is the real process under test.
    stack = await startStack({ workerQueues: ["live"] });
  });
  afterAll(async () => {
    await api?.kill();
    await stack.close();
  });

  test("SIGTERM while a live request waits on its job: new connections are refused, the request still gets its 200, the process exits 0", async () => {
    stack.replay.setFaults({ latencyMs: 2_000 });
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const key = `sk_test_${randomBytes(12).toString("hex")}`;
    api = spawnService("api", {
      ...stack.settings, PORT: String(port), HOST: "127.0.0.1", LIVE_DEADLINE_MS: "10000",
      API_KEY: key, API_KEY_CREDITS: "5",
    });
    await api.waitForLog("API listening", (l) => String(l.msg).startsWith("API listening"), START_BOUND_MS);
    expect(await statusOf(`${base}/readyz`)).toBe(200);

    const live = fetch(`${base}/v1/jobs`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ endpoint: "web-search", params: { query: "coffee" }, queue: "live" }),
    });
    await waitFor("the live job in flight upstream", () => stack.replay.requests().length >= 1, 10_000, 20);

    api.child.kill("SIGTERM");
    await api.waitForLog("shutdown started", (l) => String(l.msg).startsWith("shutting down"), 5_000);
    expect(await statusOf(`${base}/healthz`)).toBe(0);

    const res = await live;
    expect(res.status).toBe(200);
    expect(res.headers.get("connection")).toBe("close");
    const body = (await res.json()) as { job: { status: string; credits: number } };
    expect(body.job).toMatchObject({ status: "completed", credits: 1 });

    const { code } = await api.exited;
    expect(code).toBe(0);
    expect(api.logs.find((l) => l.msg === "stopped")).toMatchObject({ clean: true });
  }, 120_000);
});
