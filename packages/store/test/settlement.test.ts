/** Credits are reserved atomically and settled exactly once, on a real Redis. */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { newJobId, type JobParams } from "@serp/shared";
import { AccountStore, JobStore, hashKey, jobResponse, keySpace, recordFromFields, type Final } from "../src/index.js";

const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
const keys = keySpace(`t${randomBytes(5).toString("hex")}`);
const jobs = new JobStore(redis, keys, 600);
const accounts = new AccountStore(redis, keys);
const params: JobParams = { query: "q", country: "us", language: "en", page: 1 };

afterAll(async () => {
  const found = await redis.keys(`${keys.prefix}:*`);
  if (found.length) await redis.del(...found);
  redis.disconnect();
});

async function account(credits: number): Promise<string> {
  const a = await accounts.create("t");
  if (credits) await accounts.grant(a.id, credits, "test");
  return a.id;
}
function newJob(accountId: string, endpoint: "web-search" | "web-shopping-product" = "web-search") {
  return { id: newJobId(), accountId, endpoint, queue: "fast" as const, params, createdAt: new Date().toISOString() };
}
const done = (credits: number, status: Final["status"] = "completed"): Final => ({
  status, credits, latencyMs: 5, error: status === "failed" ? "upstream timed out" : null, result: null, completedAt: new Date().toISOString(),
});

test("concurrent submissions never reserve more credits than the balance", async () => {
  const id = await account(25);
  const outcomes = await Promise.all(Array.from({ length: 200 }, () => jobs.create(newJob(id), 1)));
  const created = outcomes.filter((o) => o.outcome === "created");
  // Each accepted submission saw the jobs in flight once it was through: 1, 2 … 25, each once.
  expect(created.map((o) => o.inFlight).sort((a, b) => a - b)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
  const refused = outcomes.filter((o) => o.outcome === "insufficient_credits");
  expect(refused).toHaveLength(175);
  expect(new Set(refused.map((o) => o.inFlight))).toEqual(new Set([25]));
  expect(await accounts.get(id)).toMatchObject({ balance: 25, reserved: 25 });
});

test("a job is settled exactly once however many finalizers race", async () => {
  const id = await account(10);
  const job = newJob(id);
  await jobs.create(job, 1);
  const results = await Promise.all([
    jobs.finalize(job.id, id, done(1)),
    jobs.finalize(job.id, id, done(1)),
    jobs.finalize(job.id, id, done(0, "failed")),
    jobs.finalize(job.id, id, done(1)),
  ]);
  expect(results.filter(Boolean)).toHaveLength(1);
  const ledger = (await accounts.ledger(id)).filter((e) => e.jobId === job.id);
  expect(ledger).toHaveLength(1);
  const acct = await accounts.get(id);
  expect(acct!.reserved).toBe(0);
  expect(acct!.balance).toBe(10 - ledger[0]!.credits);
});

test("starting a job marks it processing for that attempt and returns its record in one call", async () => {
  const id = await account(1);
  const job = newJob(id);
  await jobs.create(job, 1);
  const begun = await jobs.start(job.id, 1);
  expect(begun).toMatchObject({ started: true, record: { accountId: id, job: { id: job.id, status: "processing", attempts: 1, params } } });
  expect((await jobs.get(job.id))!.job).toMatchObject({ status: "processing", attempts: 1 });
  // A second attempt after a crash takes it again and counts the attempt.
  expect(await jobs.start(job.id, 2)).toMatchObject({ started: true, record: { job: { attempts: 2 } } });
  expect(await jobs.start(newJobId(), 1)).toBeNull();
});

test("a final job is never changed again (a late worker after a live timeout)", async () => {
  const id = await account(3);
  const job = newJob(id);
  await jobs.create(job, 1);
  expect(await jobs.finalize(job.id, id, { ...done(0, "failed"), error: "timed out" })).toBe(true);
  expect(await jobs.start(job.id, 2)).toMatchObject({ started: false, record: { job: { status: "failed" } } });
  expect(await jobs.finalize(job.id, id, done(1))).toBe(false);
  const rec = await jobs.get(job.id);
  expect(rec!.job).toMatchObject({ status: "failed", error: "timed out", credits: 0 });
  expect(await accounts.get(id)).toMatchObject({ balance: 3, reserved: 0 });
});

test("failed jobs cost 0 and are written to the ledger as refunds", async () => {
  const id = await account(2);
  const job = newJob(id);
  await jobs.create(job, 1);
  await jobs.finalize(job.id, id, done(0, "failed"));
  expect(await accounts.ledger(id)).toEqual([
    expect.objectContaining({ type: "grant", credits: 2 }),
    expect.objectContaining({ type: "refund", jobId: job.id, credits: 0 }),
  ]);
  expect(await accounts.usage(id)).toEqual({ "web-search": { completed: 0, failed: 1, credits: 0 } });
});

test("a charge above the reservation is capped so other pending jobs keep their credit", async () => {
  const id = await account(3);
  const a = newJob(id, "web-shopping-product");
  const b = newJob(id);
  await jobs.create(a, 1);
  await jobs.create(b, 1);
  // a's sellers would cost 5; only 2 are free (3 minus b's reservation).
  await jobs.finalize(a.id, id, done(5));
  expect(await accounts.get(id)).toMatchObject({ balance: 1, reserved: 1 });
  expect((await accounts.ledger(id)).find((e) => e.jobId === a.id)).toMatchObject({ credits: 2, uncharged: 3 });
  await jobs.finalize(b.id, id, done(1));
  expect(await accounts.get(id)).toMatchObject({ balance: 0, reserved: 0 });
});

test("the balance equals the grants minus the ledger's charges", async () => {
  const id = await account(50);
  await accounts.grant(id, 7, "extra");
  const created = [];
  for (let i = 0; i < 12; i++) {
    const j = newJob(id, i % 3 ? "web-search" : "web-shopping-product");
    await jobs.create(j, 1);
    created.push(j);
  }
  for (const [i, j] of created.entries()) await jobs.finalize(j.id, id, i % 4 === 0 ? done(0, "failed") : done(i % 3 ? 1 : 3));
  const ledger = await accounts.ledger(id, 1000);
  const granted = ledger.filter((e) => e.type === "grant").reduce((s, e) => s + e.credits, 0);
  const charged = ledger.filter((e) => e.type !== "grant").reduce((s, e) => s + e.credits, 0);
  expect((await accounts.get(id))!.balance).toBe(granted - charged);
});

test("keys are stored hashed, authenticate until revoked, and unknown keys fail", async () => {
  const id = await account(0);
  const { key, info } = await accounts.createKey(id, "ci");
  expect(key).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);
  expect(await redis.keys(`${keys.prefix}:key:*${key}*`)).toEqual([]);
  expect(await accounts.authenticate(key)).toBe(id);
  expect(await accounts.authenticate(`${key}x`)).toBeNull();
  expect(await accounts.revokeKey(id, info.id)).toBe(true);
  expect(await accounts.authenticate(key)).toBeNull();
});

describe("a process that trusts valid keys for a while", () => {
  const subscriber = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  const cached = new AccountStore(redis, keys, 60_000);
  beforeAll(() => cached.followChanges(subscriber));
  afterAll(() => subscriber.disconnect());

  test("stops accepting a key as soon as another process revokes it", async () => {
    const id = await account(0);
    const { key, info } = await accounts.createKey(id, "ci");
    expect(await cached.authenticate(key)).toBe(id);
    expect(await accounts.revokeKey(id, info.id)).toBe(true);
    // The announcement travels by pub/sub: waited for, bounded far below the 60 s trust period.
    const until = Date.now() + 20_000;
    let accepted = await cached.authenticate(key);
    while (accepted !== null && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 5));
      accepted = await cached.authenticate(key);
    }
    expect(accepted).toBeNull();
  });

  test("stops accepting a key it revoked itself at once", async () => {
    const id = await account(0);
    const { key, info } = await cached.createKey(id, "ci");
    expect(await cached.authenticate(key)).toBe(id);
    expect(await cached.revokeKey(id, info.id)).toBe(true);
    expect(await cached.authenticate(key)).toBeNull();
  });

  test("sees limits another process changes as soon as the change is announced", async () => {
    const id = await account(0);
    expect(await cached.limits(id)).toEqual({});
    expect(await accounts.setLimits(id, { maxInFlight: 3, rateLimit: 10 })).toBe(true);
    const until = Date.now() + 20_000;
    let seen = await cached.limits(id);
    while (seen?.maxInFlight === undefined && Date.now() < until) {
      await new Promise((r) => setTimeout(r, 5));
      seen = await cached.limits(id);
    }
    expect(seen).toEqual({ maxInFlight: 3, rateLimit: 10 });
    // Its own change is seen at once, with no wait for the announcement.
    expect(await cached.setLimits(id, { maxInFlight: null })).toBe(true);
    expect(await cached.limits(id)).toEqual({ rateLimit: 10 });
    expect(await cached.limits("acct_no_such_account")).toBeNull();
  });

  test("asks Redis again once the trust period is over, even if no revocation was announced", async () => {
    const briefly = new AccountStore(redis, keys, 200);
    const id = await account(0);
    const { key } = await accounts.createKey(id, "ci");
    expect(await briefly.authenticate(key)).toBe(id);
    await redis.del(keys.apiKey(hashKey(key)));
    expect(await briefly.authenticate(key)).toBe(id);
    await new Promise((r) => setTimeout(r, 250));
    expect(await briefly.authenticate(key)).toBeNull();

    // Likewise an account's limits, changed behind its back.
    expect(await briefly.limits(id)).toEqual({});
    await redis.hset(keys.account(id), "limitMaxInFlight", "7");
    expect(await briefly.limits(id)).toEqual({});
    await new Promise((r) => setTimeout(r, 250));
    expect(await briefly.limits(id)).toEqual({ maxInFlight: 7 });
  });
});

test("a job with a reply channel has its settled record published there, once; a job without one does not", async () => {
  const subscriber = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  const replyTo = keys.replyChannel("test-instance");
  const messages: string[] = [];
  subscriber.on("message", (ch: string, m: string) => ch === replyTo && messages.push(m));
  await subscriber.subscribe(replyTo);
  try {
    const id = await account(5);
    const live = { ...newJob(id), queue: "live" as const, replyTo };
    const other = newJob(id);
    await jobs.create(live, 1);
    await jobs.create(other, 1);
    const result = { search_metadata: { status: "Success" }, organic_results: [{ position: 1, title: 'A "quoted" title / ünïcode', link: "https://example.com/" }] };
    await jobs.finalize(other.id, id, { ...done(1), result: result as unknown as Final["result"] });
    const coverage = { ratio: 0.9, links: 10, accounted: 9, layout: "full" as const };
    await jobs.finalize(live.id, id, { ...done(1), result: result as unknown as Final["result"], upstreamUrl: "https://upstream.example/search?q=q", coverage });
    // A second settlement changes nothing and publishes nothing.
    await jobs.finalize(live.id, id, done(1, "failed"));
    const until = Date.now() + 20_000;
    while (messages.length < 1 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 50));
    expect(messages).toHaveLength(1);
    const published = recordFromFields(JSON.parse(messages[0]!) as string[]);
    expect(published).toEqual(await jobs.get(live.id));
    expect(published).toMatchObject({ job: { id: live.id, status: "completed", credits: 1 }, result, upstreamUrl: "https://upstream.example/search?q=q", coverage });
    // The coverage figure is for operators: the job as its owner reads it does not carry it.
    expect(JSON.stringify(jobResponse(published))).not.toContain("coverage");
    expect((await jobs.get(other.id))!.coverage).toBeUndefined();
  } finally {
    subscriber.disconnect();
  }
});
