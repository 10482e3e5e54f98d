/** Typed queues and named-argument scripts, on a real Redis. */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { z } from "zod";
import { Closers, newJobId } from "@serp/shared";
import { QUEUE_CATALOG, WEBHOOK_QUEUE, defineQueue, keySpace, openScrapeQueues, paramsHashOf, scrapePayloadOf, scrapePayloadSchema, type QueueHost } from "../src/index.js";
import { script } from "../src/lua/script.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const redis = new Redis(REDIS_URL);
const keys = keySpace(`t${randomBytes(5).toString("hex")}`);
const closers = new Closers();
const host: QueueHost = { redisUrl: REDIS_URL, prefix: keys.bullPrefix, closers };

afterAll(async () => {
  await closers.closeAll(10_000);
  const found = await redis.keys(`*${keys.prefix}*`);
  if (found.length) await redis.del(...found);
  redis.disconnect();
});

describe("defineQueue", () => {
  test("enqueue checks the payload with the queue's schema and adds it under its id, with the catalog's options", async () => {
    const { fast } = openScrapeQueues(host, redis);
    const jobId = newJobId();
    await fast.enqueue({ jobId, accountId: "acct_1" }, { name: "web-search", priority: 3 });
    // BullMQ's keys, as deployed Redis holds them: `{prefix}:fast:<job id>`.
    const h = await redis.hgetall(`${keys.bullPrefix}:fast:${jobId}`);
    expect(h.name).toBe("web-search");
    expect(JSON.parse(h.data!)).toEqual({ jobId, accountId: "acct_1" });
    expect(JSON.parse(h.opts!)).toMatchObject({ attempts: 4, backoff: { type: "exponential", delay: 1_000 }, priority: 3 });
    await expect(fast.enqueue({ jobId: "job_nope" })).rejects.toThrow();
    await expect(fast.enqueue({ jobId, extra: 1 } as never)).rejects.toThrow();
  });

  test("a webhook delivery is named deliver, under wh_<job id>, once however often it is enqueued", async () => {
    const queue = WEBHOOK_QUEUE.open(host, redis);
    const jobId = newJobId();
    await queue.enqueue({ jobId }, { attempts: 3 });
    await queue.enqueue({ jobId }, { attempts: 3 });
    expect(await queue.queue.getJobCounts("waiting")).toMatchObject({ waiting: 1 });
    const job = await queue.queue.getJob(`wh_${jobId}`);
    expect(job).toMatchObject({ name: "deliver", data: { jobId }, opts: { attempts: 3, backoff: { type: "webhook" } } });
  });

  test("work hands each job to the processor parsed with its own queue's schema", async () => {
    const counted = defineQueue({
      name: "counted",
      payload: z.strictObject({ n: z.coerce.number() }),
      jobOptions: { attempts: 1 },
      jobId: (p) => `n${p.n}`,
    });
    const seen: unknown[] = [];
    const failed: string[] = [];
    const worker = counted.work(host, async (_job, payload) => void seen.push(payload), { concurrency: 1 });
    worker.on("failed", (job) => failed.push(String(job?.id)));
    const producer = counted.open(host, redis);
    await producer.enqueue({ n: "7" });
    // Data that does not fit the schema (written around enqueue) fails the job before the processor sees it.
    await producer.queue.add("raw", { n: "x" }, { jobId: "bad" });
    const until = Date.now() + 10_000;
    while ((seen.length < 1 || failed.length < 1) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(seen).toEqual([{ n: 7 }]);
    expect(failed).toEqual(["bad"]);
  });

  test("a live job's entry carries its endpoint, params and their hash, whatever order the params were written in", () => {
    const jobId = newJobId();
    const params = { query: "coffee", country: "us", language: "en", page: 1, device: "desktop" } as const;
    const payload = scrapePayloadOf({ id: jobId, endpoint: "web-search", queue: "live", params }, "acct_1");
    expect(payload).toEqual({ jobId, endpoint: "web-search", params, paramsHash: expect.stringMatching(/^[0-9a-f]{64}$/), accountId: "acct_1" });
    expect(paramsHashOf({ device: "desktop", page: 1, language: "en", country: "us", query: "coffee" })).toBe(payload.paramsHash);
    expect(paramsHashOf({ ...params, query: "tea" })).not.toBe(payload.paramsHash);
    expect(scrapePayloadSchema.parse(payload)).toEqual(payload);
    expect(scrapePayloadOf({ id: jobId, endpoint: "web-search", queue: "fast", params }, "acct_1", true)).toEqual({ jobId, accountId: "acct_1", useCache: true });
  });

  test("entries an older version queued (no endpoint, no hash) still parse; a hash that is not its params' is refused", () => {
    const jobId = newJobId();
    const params = { query: "coffee", country: "us", language: "en" } as const;
    expect(scrapePayloadSchema.parse({ jobId, params, accountId: "acct_1" })).toEqual({ jobId, params, accountId: "acct_1" });
    expect(scrapePayloadSchema.parse({ jobId })).toEqual({ jobId });
    expect(scrapePayloadSchema.safeParse({ jobId, endpoint: "web-search", params, paramsHash: paramsHashOf({ ...params, query: "tea" }) }).success).toBe(false);
    expect(scrapePayloadSchema.safeParse({ jobId, endpoint: "web-search", paramsHash: paramsHashOf(params) }).success).toBe(false);
    expect(scrapePayloadSchema.safeParse({ jobId, endpoint: "no-such-endpoint", params }).success).toBe(false);
  });

  test("the scrape queues keep their names and retry options", () => {
    expect(Object.values(QUEUE_CATALOG).map((q) => [q.name, q.jobOptions.attempts])).toEqual([["live", 2], ["fast", 4], ["regular", 5]]);
  });
});

describe("script", () => {
  const echo = script({ name: "TestEcho", keys: ["a", "b"], args: ["x", "y"], rest: "more" }, "return { a, b, x, y, #more, more[1] or '' }");

  test("passes keys and args by name, in the declared order, then the rest", async () => {
    expect(await echo.run(redis, { a: `${keys.prefix}:a`, b: `${keys.prefix}:b`, x: 1, y: "two" }, ["r1", "r2"])).toEqual([
      `${keys.prefix}:a`, `${keys.prefix}:b`, "1", "two", 2, "r1",
    ]);
    expect(await echo.run(redis, { a: `${keys.prefix}:a`, b: `${keys.prefix}:b`, x: 1, y: "" })).toEqual([`${keys.prefix}:a`, `${keys.prefix}:b`, "1", "", 0, ""]);
  });

  test("refuses further arguments a script does not take", async () => {
    const plain = script({ name: "TestPlain", keys: ["a"], args: [] }, "return 1");
    await expect(plain.run(redis, { a: "k" }, ["extra"])).rejects.toThrow(/no further arguments/);
  });
});
