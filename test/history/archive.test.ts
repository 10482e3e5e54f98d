/**
 * History in PostgreSQL: a final job past its hot window leaves Redis and is read from the archive
 * the same as before (job API, compatibility archive, MCP's get_job share JobStore.get); usage by
 * day comes from the ledger. Needs DATABASE_URL (npm test starts a private PostgreSQL).
 */
import request from "supertest";
import { runCli } from "../../apps/cli/src/main.js";
import { DATABASE_URL, REDIS_URL, pollUntilFinal, startStack, type Stack } from "../support/stack.js";

const maybe = DATABASE_URL ? describe : describe.skip;
if (!DATABASE_URL) console.warn("test/history/archive.test.ts skipped: DATABASE_URL is not set (npm test sets it)");

maybe("job archive and usage", () => {
  let stack: Stack;
  beforeAll(async () => {
    // A hot window of 1 s: archived jobs leave Redis almost at once.
    stack = await startStack({ workerQueues: ["fast"], env: { JOB_HOT_SECONDS: "1" }, jobHotSeconds: 1 });
  }, 30_000);
  afterAll(() => stack.close());

  const get = (auth: string, id: string) => request(stack.api.app).get(`/v1/jobs/${id}`).set("Authorization", auth);

  test("past its hot window a job is gone from Redis and answers from the archive exactly as before", async () => {
    const { auth } = await stack.account(10);
    const ids: string[] = [];
    for (const body of [
      { endpoint: "web-search", params: { query: "coffee" }, queue: "fast" },
      { endpoint: "web-shopping-product", params: { product_id: "123" }, queue: "fast" }, // a failed job is archived too
    ]) {
      const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send(body);
      expect(res.status).toBe(202);
      ids.push(res.body.job.id);
    }
    const hot = await Promise.all(ids.map((id) => pollUntilFinal(() => get(auth, id))));
    expect(hot.map((h) => h.body.job.status)).toEqual(["completed", "failed"]);

    // Drained, archived, and its Redis copy expired: nothing of the result is left in Redis.
    for (let i = 0; i < 100 && (await stack.redis.exists(...ids.map((id) => `${stack.prefix}:job:${id}`))) > 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await stack.redis.exists(...ids.map((id) => `${stack.prefix}:job:${id}`))).toBe(0);

    for (const [i, id] of ids.entries()) {
      const cold = await get(auth, id);
      expect(cold.status).toBe(200);
      expect(cold.body).toEqual(hot[i]!.body);
    }
    // Still another account's job is as unknown as ever.
    const other = await stack.account(1);
    expect((await get(other.auth, ids[0]!)).status).toBe(404);
  }, 30_000);

  test("usage by day: jobs, failures and credits per endpoint from the ledger, in the API and the CLI; bad ranges are 400", async () => {
    const { auth, accountId } = await stack.account(10);
    for (const body of [
      { endpoint: "web-search", params: { query: "coffee" }, queue: "fast" },
      { endpoint: "web-search", params: { query: "coffee" }, queue: "fast" },
      { endpoint: "web-shopping-product", params: { product_id: "123" }, queue: "fast" },
    ]) {
      const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send(body);
      await pollUntilFinal(() => get(auth, res.body.job.id));
    }
    const today = new Date().toISOString().slice(0, 10);
    let usage: { usage: { period: string; endpoint: string; jobs: number; completed: number; failed: number; credits: number }[] } = { usage: [] };
    for (let i = 0; i < 50; i++) {
      const res = await request(stack.api.app).get("/v1/account/usage").query({ from: today }).set("Authorization", auth);
      expect(res.status).toBe(200);
      usage = res.body;
      if (usage.usage.reduce((n, r) => n + r.jobs, 0) === 3) break;
      await new Promise((r) => setTimeout(r, 100)); // the drainer's lag
    }
    expect(usage.usage).toEqual([
      { period: today, endpoint: "web-search", jobs: 2, completed: 2, failed: 0, cacheHits: expect.any(Number), credits: 2 },
      { period: today, endpoint: "web-shopping-product", jobs: 1, completed: 0, failed: 1, cacheHits: 0, credits: 0 },
    ]);
    // The same from the CLI, for operators (invoicing a month).
    const saved = { SERP_PREFIX: process.env.SERP_PREFIX, DATABASE_URL: process.env.DATABASE_URL, REDIS_URL: process.env.REDIS_URL };
    Object.assign(process.env, { ...stack.settings, DATABASE_URL: stack.databaseUrl });
    const lines: string[] = [];
    try {
      expect(await runCli(["usage", "--account", accountId, "--from", today], (l) => lines.push(l), () => undefined)).toBe(0);
    } finally {
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
    }
    expect(JSON.parse(lines.join("\n")).usage).toEqual(usage.usage);
    const month = await request(stack.api.app).get("/v1/account/usage").query({ from: `${today.slice(0, 7)}-01`, granularity: "month" }).set("Authorization", auth);
    expect(month.body.usage).toEqual(expect.arrayContaining([expect.objectContaining({ period: `${today.slice(0, 7)}-01`, endpoint: "web-search", jobs: 2 })]));

    for (const query of [{ from: "2026-13-01" }, { from: "2026-11-02", to: "2026-11-01" }, { from: "2020-01-01", to: "2026-01-01" }, { granularity: "week" }, { since: "x" }]) {
      const res = await request(stack.api.app).get("/v1/account/usage").query(query).set("Authorization", auth);
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe("invalid_request");
    }
  }, 30_000);

  test("PostgreSQL unreachable: an archived job answers 503 with Retry-After, never 500", async () => {
    const { auth } = await stack.account(10);
    const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: "coffee" }, queue: "fast" });
    await pollUntilFinal(() => get(auth, res.body.job.id));
    for (let i = 0; i < 100 && (await stack.redis.exists(`${stack.prefix}:job:${res.body.job.id}`)) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    // The API's connections to PostgreSQL are gone (as when it is down): last in this file.
    await stack.api.pg!.end();
    const cold = await get(auth, res.body.job.id);
    expect(cold.status).toBe(503);
    expect(cold.headers["retry-after"]).toBeDefined();
    expect((await request(stack.api.app).get("/v1/account/usage").set("Authorization", auth)).status).toBe(503);
  }, 30_000);
});
