/**
 * Per-account request rate on the job-submitting routes: RateLimit / RateLimit-Policy headers on
 * every limited response, 429 rate_limited with Retry-After past the quota, defaults from the
 * environment, overrides stored with the account, counters shared by API processes, and 503 (never
 * 500) when the counters' Redis is unreachable.
 */
import type { Request, RequestHandler, Response } from "express";
import request from "supertest";
import { ApiError } from "@serp/shared";
import { createRedis } from "@serp/store";
import { loadEnv } from "@serp/api/env";
import { createApiRuntime } from "@serp/api/runtime";
import { createLimits } from "../../apps/api/src/limits/index.js";
import { silent, startStack, type Stack } from "../support/stack.js";

const job = { endpoint: "web-news", params: { query: "coffee" }, queue: "regular" };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** `"rate";r=2;t=60, "concurrency";r=9` → { rate: { r: 2, t: 60 }, concurrency: { r: 9 } } */
function parseList(header: string | undefined): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const item of (header ?? "").split(",").map((s) => s.trim()).filter(Boolean)) {
    const [name, ...params] = item.split(";");
    out[JSON.parse(name!)] = Object.fromEntries(params.map((p) => p.split("=") as [string, string]));
  }
  return out;
}

describe("request rate with the default quota", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ workerQueues: [] });
  });
  afterAll(() => stack.close());

  test("a successful submission carries RateLimit-Policy and RateLimit for the rate and the concurrency quota", async () => {
    const { auth } = await stack.account(10);
    const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send(job);
    expect(res.status).toBe(202);
    expect(res.headers["ratelimit-policy"]).toBe('"rate";q=600;w=60, "concurrency";q=100;qu="concurrent-requests"');
    const state = parseList(res.headers.ratelimit);
    expect(state.rate).toEqual({ r: "599", t: expect.stringMatching(/^(59|60)$/) });
    // This job now holds one of the 100 slots.
    expect(state.concurrency).toEqual({ r: "99" });
    expect(res.headers["retry-after"]).toBeUndefined();
  });

  test("counts every submission, invalid ones included, and decreases r one by one", async () => {
    const { auth } = await stack.account(10);
    const first = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "nope" });
    expect(first.status).toBe(400);
    expect(parseList(first.headers.ratelimit).rate!.r).toBe("599");
    const second = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send(job);
    expect(parseList(second.headers.ratelimit).rate!.r).toBe("598");
  });

  test("reading jobs is not rate-limited and sends no RateLimit headers", async () => {
    const { auth } = await stack.account(10);
    const sub = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send(job);
    const res = await request(stack.api.app).get(`/v1/jobs/${sub.body.job.id}`).set("Authorization", auth);
    expect(res.status).toBe(200);
    expect(res.headers.ratelimit).toBeUndefined();
  });

  test("past the quota answers 429 rate_limited with Retry-After, RateLimit-Policy and RateLimit, then succeeds after the window", async () => {
    const { auth, accountId } = await stack.account(20);
    await stack.api.accounts.setLimits(accountId, { rateLimit: 3, rateWindowSeconds: 2 });
    const post = () => request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send(job);

    const remaining: string[] = [];
    for (let i = 0; i < 3; i++) {
      const ok = await post();
      expect(ok.status).toBe(202);
      expect(ok.headers["ratelimit-policy"]).toMatch(/^"rate";q=3;w=2, /);
      remaining.push(parseList(ok.headers.ratelimit).rate!.r!);
    }
    expect(remaining).toEqual(["2", "1", "0"]);

    const refused = await post();
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: "rate_limited", message: expect.stringMatching(/3 requests per 2 seconds/) });
    const retryAfter = Number(refused.headers["retry-after"]);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(2);
    expect(refused.headers["ratelimit-policy"]).toMatch(/^"rate";q=3;w=2/);
    // Retry-After and RateLimit's t point at the same instant.
    expect(parseList(refused.headers.ratelimit).rate).toEqual({ r: "0", t: String(retryAfter) });
    // A refused request reserves nothing.
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ reserved: 3 });

    await sleep(retryAfter * 1000 + 100);
    const again = await post();
    expect(again.status).toBe(202);
    expect(parseList(again.headers.ratelimit).rate!.r).toBe("2");
  }, 15_000);

  test.each([
    ["GET /search.json", (auth: string) => request(stack.api.app).get("/search.json").query({ api_key: auth.slice(7) })],
    ["GET /search", (auth: string) => request(stack.api.app).get("/search").set("Authorization", auth)],
    ["POST /mcp", (auth: string) => request(stack.api.app).post("/mcp").set("Authorization", auth).set("Accept", "application/json, text/event-stream").send({ jsonrpc: "2.0", id: 1, method: "ping" })],
  ])("%s is limited by the same per-account rate, with the same headers", async (_route, call) => {
    const { auth, accountId } = await stack.account(5);
    await stack.api.accounts.setLimits(accountId, { rateLimit: 1, rateWindowSeconds: 60 });
    const first = await call(auth);
    expect(first.status).not.toBe(429);
    expect(first.headers["ratelimit-policy"]).toMatch(/^"rate";q=1;w=60/);
    expect(parseList(first.headers.ratelimit).rate!.r).toBe("0");
    const refused = await call(auth);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    expect(refused.headers["ratelimit-policy"]).toMatch(/^"rate";q=1;w=60/);
    expect(parseList(refused.headers.ratelimit).rate).toEqual({ r: "0", t: refused.headers["retry-after"] });
    // Each surface keeps its own error shape, with a clear message.
    expect(JSON.stringify(refused.body)).toMatch(/Rate limit exceeded/);
  });

  test("the job endpoints and the compatibility endpoint share one count", async () => {
    const { auth, accountId } = await stack.account(5);
    await stack.api.accounts.setLimits(accountId, { rateLimit: 2, rateWindowSeconds: 60 });
    expect((await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send(job)).status).toBe(202);
    expect((await request(stack.api.app).get("/search.json").set("Authorization", auth)).status).toBe(400);
    expect((await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send(job)).status).toBe(429);
  });

  test("accounts are counted separately", async () => {
    const a = await stack.account(10);
    const b = await stack.account(10);
    await stack.api.accounts.setLimits(a.accountId, { rateLimit: 1, rateWindowSeconds: 60 });
    expect((await request(stack.api.app).post("/v1/jobs").set("Authorization", a.auth).send(job)).status).toBe(202);
    expect((await request(stack.api.app).post("/v1/jobs").set("Authorization", a.auth).send(job)).status).toBe(429);
    expect((await request(stack.api.app).post("/v1/jobs").set("Authorization", b.auth).send(job)).status).toBe(202);
  });

  test("an unauthenticated request is refused before it is counted", async () => {
    const res = await request(stack.api.app).post("/v1/jobs").send(job);
    expect(res.status).toBe(401);
    expect(res.headers.ratelimit).toBeUndefined();
  });
});

describe("request rate defaults and overrides", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ workerQueues: [], env: { RATE_LIMIT_PER_MINUTE: "2", MAX_JOBS_IN_FLIGHT: "0" } });
  });
  afterAll(() => stack.close());

  const burst = async (auth: string, n: number) => {
    const statuses: number[] = [];
    for (let i = 0; i < n; i++) statuses.push((await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send(job)).status);
    return statuses;
  };

  test("without an override the environment's RATE_LIMIT_PER_MINUTE applies", async () => {
    const { auth } = await stack.account(10);
    expect(await burst(auth, 3)).toEqual([202, 202, 429]);
  });

  test("an account's override takes precedence over the default", async () => {
    const { auth, accountId } = await stack.account(10);
    await stack.api.accounts.setLimits(accountId, { rateLimit: 4, rateWindowSeconds: 60 });
    expect(await burst(auth, 5)).toEqual([202, 202, 202, 202, 429]);
  });

  test("an override of 0 lifts the limit, and with no limit at all no RateLimit headers are sent", async () => {
    const { auth, accountId } = await stack.account(10);
    await stack.api.accounts.setLimits(accountId, { rateLimit: 0 });
    expect(await burst(auth, 4)).toEqual([202, 202, 202, 202]);
    const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send(job);
    expect(res.headers.ratelimit).toBeUndefined();
    expect(res.headers["ratelimit-policy"]).toBeUndefined();
  });

  test("removing the override returns the account to the default", async () => {
    const { auth, accountId } = await stack.account(10);
    await stack.api.accounts.setLimits(accountId, { rateLimit: 0 });
    expect(await burst(auth, 3)).toEqual([202, 202, 202]);
    await stack.api.accounts.setLimits(accountId, { rateLimit: null, rateWindowSeconds: null });
    expect(await burst(auth, 3)).toEqual([202, 202, 429]);
  });
});

describe("request rate across API processes", () => {
  let stack: Stack;
  let second: Awaited<ReturnType<typeof createApiRuntime>>;
  beforeAll(async () => {
    stack = await startStack({ workerQueues: [] });
    second = await createApiRuntime(loadEnv({ ...stack.settings, LOG_LEVEL: "silent" }), silent);
  });
  afterAll(async () => {
    await second.closers.closeAll(5_000);
    await stack.close();
  });

  test("two API runtimes on the same Redis share one count per account", async () => {
    const { auth, accountId } = await stack.account(20);
    await stack.api.accounts.setLimits(accountId, { rateLimit: 4, rateWindowSeconds: 60 });
    const apps = [stack.api.app, second.app];
    const seen: [number, string | undefined][] = [];
    for (let i = 0; i < 5; i++) {
      const res = await request(apps[i % 2]!).post("/v1/jobs").set("Authorization", auth).send(job);
      seen.push([res.status, parseList(res.headers.ratelimit).rate?.r]);
    }
    expect(seen).toEqual([[202, "3"], [202, "2"], [202, "1"], [202, "0"], [429, "0"]]);
    // The other process refuses as well: the count lives in Redis.
    expect((await request(second.app).post("/v1/jobs").set("Authorization", auth).send(job)).status).toBe(429);
  });
});

describe("the rate-limit middleware on its own", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ workerQueues: [] });
  });
  afterAll(() => stack.close());

  /** Runs the middleware as a route would after authentication: next() or the error it throws. */
  async function run(rateLimit: RequestHandler, accountId: string) {
    const headers: Record<string, string> = {};
    const req = { accountId } as unknown as Request;
    const res = { setHeader: (name: string, value: string) => void (headers[name.toLowerCase()] = value) } as unknown as Response;
    let passed = false;
    const error = await Promise.resolve(rateLimit(req, res, () => void (passed = true))).then(() => undefined, (err: unknown) => err);
    return { passed, error, headers };
  }

  test("throws an ApiError a router with its own error shape can translate, with the headers already set", async () => {
    const { accountId } = await stack.account(1);
    await stack.api.accounts.setLimits(accountId, { rateLimit: 1, rateWindowSeconds: 30 });
    const ok = await run(stack.api.ctx.rateLimit, accountId);
    expect(ok).toMatchObject({ passed: true, error: undefined });
    // The concurrency quota is described, but its state waits for the submission to count it.
    expect(ok.headers["ratelimit-policy"]).toBe('"rate";q=1;w=30, "concurrency";q=100;qu="concurrent-requests"');
    expect(ok.headers.ratelimit).toMatch(/^"rate";r=0;t=(29|30)$/);

    const refused = await run(stack.api.ctx.rateLimit, accountId);
    expect(refused.passed).toBe(false);
    expect(refused.error).toBeInstanceOf(ApiError);
    const err = refused.error as ApiError;
    expect(err).toMatchObject({ code: "rate_limited", status: 429, retryAfterSeconds: expect.any(Number) });
    expect(err.message).toMatch(/^Rate limit exceeded: this account may make 1 requests per 30 seconds; retry in \d+ s$/);
    // Retry-After is on the response already, so a router that writes its own error body keeps it.
    expect(refused.headers["retry-after"]).toBe(String(err.retryAfterSeconds));
    expect(refused.headers["ratelimit-policy"]).toBe('"rate";q=1;w=30, "concurrency";q=100;qu="concurrent-requests"');
    expect(parseList(refused.headers.ratelimit).rate).toEqual({ r: "0", t: String(err.retryAfterSeconds) });
  });

  test("refuses to run before authentication rather than letting requests through uncounted", async () => {
    const out = await run(stack.api.ctx.rateLimit, undefined as unknown as string);
    expect(out.passed).toBe(false);
    expect(String(out.error)).toMatch(/after authentication/);
  });

  test("turns an unreachable counter store into 503 unavailable with Retry-After, never 500", async () => {
    const { accountId } = await stack.account(1);
    const dead = createRedis("redis://127.0.0.1:1", "command", "dead");
    dead.on("error", () => undefined);
    try {
      const limits = createLimits({ redis: dead, keys: stack.api.keys, accounts: stack.api.accounts, env: stack.api.ctx.env });
      const out = await run(limits.rateLimit, accountId);
      expect(out.passed).toBe(false);
      expect(out.error).toMatchObject({ code: "unavailable", status: 503, retryAfterSeconds: 2 });
    } finally {
      dead.disconnect();
    }
  });

  test("POST /v1/jobs answers 503, not 500, when the API's Redis goes away", async () => {
    const rt = await createApiRuntime(loadEnv({ ...stack.settings, LOG_LEVEL: "silent" }), silent);
    const { auth } = await stack.account(1);
    try {
      rt.redis.disconnect();
      const res = await request(rt.app).post("/v1/jobs").set("Authorization", auth).send(job);
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe("unavailable");
      expect(res.headers["retry-after"]).toBeDefined();
    } finally {
      await rt.closers.closeAll(5_000);
    }
  });
});
