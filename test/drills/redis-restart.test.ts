/**
 * Drill: Redis stopped and started again (append-only on). Meanwhile the API answers 503 with
 * Retry-After at once (never hangs or crashes); afterwards it recovers by itself, the workers
 * resume, and no accepted job is lost or billed twice.
 */
import request from "supertest";
import { PrivateRedis } from "../support/redis-server.js";
import { fixturesAvailable, startStack, type Stack } from "../support/stack.js";

const d = fixturesAvailable ? describe : describe.skip;

d("drill: Redis restart", () => {
  let redis: PrivateRedis;
  let stack: Stack;
  beforeAll(async () => {
    redis = await PrivateRedis.start();
    stack = await startStack({ redisUrl: redis.url, workerQueues: ["fast"], concurrency: 4, replay: { faults: { latencyMs: 100 } } });
  }, 20_000);
  afterAll(async () => {
    await stack?.close();
    await redis?.destroy();
  }, 30_000);

  test("503 with Retry-After while down, recovery by itself, every accepted job final and billed once", async () => {
    const { auth, accountId } = await stack.account(200);
    const api = () => request(stack.api.app);
    const body = { endpoint: "web-search", params: { query: "coffee" }, queue: "fast" };
    const accepted: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await api().post("/v1/jobs").set("Authorization", auth).send(body);
      expect(res.status).toBe(202);
      accepted.push(res.body.job.id);
    }

    await redis.down();
    for (let i = 0; i < 5; i++) {
      const started = Date.now();
      const post = await api().post("/v1/jobs").set("Authorization", auth).send(body);
      expect(post.status).toBe(503);
      expect(post.body.error.code).toBe("unavailable");
      expect(Number(post.headers["retry-after"])).toBeGreaterThan(0);
      const get = await api().get(`/v1/jobs/${accepted[0]}`).set("Authorization", auth);
      expect(get.status).toBe(503);
      expect(Date.now() - started).toBeLessThan(5_000);
    }

    await redis.up();
    // The API recovers by itself: no restart, no manual step.
    const recoverBy = Date.now() + 20_000;
    let after;
    for (;;) {
      after = await api().post("/v1/jobs").set("Authorization", auth).send(body);
      if (after.status === 202 || Date.now() > recoverBy) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(after.status).toBe(202);
    accepted.push(after.body.job.id);

    // Workers resume and every accepted job becomes final.
    const finalBy = Date.now() + 45_000;
    let statuses: string[] = [];
    while (Date.now() < finalBy) {
      statuses = await Promise.all(accepted.map(async (id) => (await stack.api.jobs.get(id))?.job.status ?? "lost"));
      if (statuses.every((s) => s === "completed" || s === "failed")) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(statuses).not.toContain("lost");
    expect(statuses.every((s) => s === "completed" || s === "failed")).toBe(true);

    const ledger = await stack.api.accounts.ledger(accountId, 1000);
    for (const id of accepted) expect(ledger.filter((e) => e.jobId === id)).toHaveLength(1);
    const charged = ledger.filter((e) => e.type !== "grant").reduce((s, e) => s + e.credits, 0);
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 200 - charged, reserved: 0 });
  }, 120_000);
});
