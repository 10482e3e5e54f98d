/**
 * The figures an autoscaler and an on-call engineer read: the age of each queue's oldest waiting job
 * (from a real BullMQ queue on the test Redis, plain and fair-priority jobs), live jobs the API fails
 * past their deadline counted in serp_jobs_total, and a real browser pool's pages (capacity, in use,
 * waiting) against a loopback server that holds its answers.
 */
import { existsSync } from "node:fs";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import request from "supertest";
import { Closers, newJobId } from "@serp/shared";
import { QUEUE_CATALOG, keySpace, oldestWaitingAgeSeconds, type Producer, type scrapePayloadSchema } from "@serp/store";
import { BROWSER_DEFAULTS, BrowserPool } from "@serp/upstream";
import { REDIS_URL, startStack, type Stack } from "../support/stack.js";
import { sample, waitFor } from "../ops/support.js";

describe("the age of a queue's oldest waiting job", () => {
  const redis = new Redis(REDIS_URL);
  const closers = new Closers();
  let fast: Producer<typeof scrapePayloadSchema>;

  beforeAll(() => {
    const keys = keySpace(`t${randomBytes(4).toString("hex")}`);
    fast = QUEUE_CATALOG.fast.open({ prefix: keys.bullPrefix, closers }, redis);
  });
  afterAll(async () => {
    await fast.queue.obliterate({ force: true });
    await closers.closeAll(5_000);
    redis.disconnect();
  });

  const add = (agoMs: number, opts: { priority?: number; delay?: number } = {}) =>
    fast.enqueue({ jobId: newJobId() }, { timestamp: Date.now() - agoMs, ...opts });

  test("is 0 with nothing waiting, and a delayed job does not count", async () => {
    expect(await oldestWaitingAgeSeconds(redis, fast.queue)).toBe(0);
    await add(90_000, { delay: 60_000 });
    expect(await oldestWaitingAgeSeconds(redis, fast.queue)).toBe(0);
  });

  test("reads the oldest job of the wait list and of every priority band, not only the next one taken", async () => {
    const plain = await add(10_000);
    await add(5_000, { priority: 1 });
    // In a low band (an account with 7 jobs in flight): taken last, and the oldest of all.
    const starved = await add(40_000, { priority: 7 });
    await add(2_000, { priority: 7 });
    await add(1_000, { priority: 3 });
    const now = Date.now();
    expect(await oldestWaitingAgeSeconds(redis, fast.queue, now)).toBe((now - starved.timestamp) / 1_000);
    // The plain job is the oldest once the low band's old job is gone.
    await starved.remove();
    expect(await oldestWaitingAgeSeconds(redis, fast.queue, now)).toBe((now - plain.timestamp) / 1_000);
  });
});

describe("the API's /metrics", () => {
  let stack: Stack;
  beforeAll(async () => {
    // No worker: jobs wait, and a live one fails at its (short) deadline.
    stack = await startStack({ workerQueues: [], databaseUrl: false, env: { LIVE_DEADLINE_MS: "300", RATE_LIMIT_PER_MINUTE: "0", MAX_JOBS_IN_FLIGHT: "0" } });
  }, 30_000);
  afterAll(async () => {
    await stack?.close();
  });

  test("exports each queue's oldest waiting age beside its depths, and counts a live job failed past its deadline", async () => {
    const { auth } = await stack.account(10);
    const submitted = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: "coffee" }, queue: "regular" });
    expect(submitted.status).toBe(202);
    const live = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-news", params: { query: "coffee" }, queue: "live" });
    expect(live.body.job).toMatchObject({ status: "failed", error: "timed out" });
    await new Promise((r) => setTimeout(r, 1_100));

    const text = (await request(stack.api.app).get("/metrics")).text;
    expect(sample(text, "serp_queue_oldest_waiting_age_seconds", { queue: "regular" })).toBeGreaterThanOrEqual(1);
    expect(sample(text, "serp_queue_oldest_waiting_age_seconds", { queue: "fast" })).toBe(0);
    // The timed-out live job was removed from its queue: nothing waits there.
    expect(sample(text, "serp_queue_oldest_waiting_age_seconds", { queue: "live" })).toBe(0);
    expect((sample(text, "serp_queue_jobs", { queue: "regular", state: "prioritized" }) ?? 0) + (sample(text, "serp_queue_jobs", { queue: "regular", state: "waiting" }) ?? 0)).toBe(1);
    expect(sample(text, "serp_jobs_total", { endpoint: "web-news", queue: "live", status: "failed", app: "api" })).toBe(1);
  });
});

const CHROMIUM = process.env.BROWSER_EXECUTABLE_PATH ?? BROWSER_DEFAULTS.executablePath;
const withBrowser = existsSync(CHROMIUM) ? describe : describe.skip;

withBrowser("a browser pool's pages", () => {
  let server: Server;
  let url: string;
  const held: ServerResponse[] = [];
  let pool: BrowserPool;

  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url?.startsWith("/hold")) held.push(res);
      else res.end("<html><body>ok</body></html>");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    pool = new BrowserPool({ concurrency: 1, executablePath: CHROMIUM });
  });
  afterAll(async () => {
    await pool?.close();
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  test("shows its capacity, the page in use and the request waiting for it, then frees both", async () => {
    expect(pool.pages()).toEqual({ capacity: 1, inUse: 0, waiting: 0 });
    const ask = (path: string) => ({ url: `${url}${path}`, headers: {}, device: "desktop" as const, language: "en", country: "us" });
    const settings = { timeoutMs: 20_000, maxBodyBytes: 1024 * 1024 };
    const first = pool.fetch(ask("/hold"), settings);
    const second = pool.fetch(ask("/"), settings);
    await waitFor("the held page", () => held.length === 1, 20_000);
    expect(pool.pages()).toEqual({ capacity: 1, inUse: 1, waiting: 1 });
    held[0]!.end("<html><body>held</body></html>");
    expect((await first).ok).toBe(true);
    expect((await second).ok).toBe(true);
    expect(pool.pages()).toEqual({ capacity: 1, inUse: 0, waiting: 0 });
  }, 40_000);
});
