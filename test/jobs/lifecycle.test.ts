/**
 * The job lifecycle on each queue through the real API, Redis, BullMQ workers and the replay
 * upstream: completion, polling, failures at 0 credits, the live deadline, expiry, 401/402/404.
 */
import { Worker } from "bullmq";
import { Redis } from "ioredis";
import request from "supertest";
import { JOB_ERRORS, newJobId } from "@serp/shared";
import { QUEUE_CATALOG, keySpace, paramsHashOf, scrapePayloadOf } from "@serp/store";
import { createUpstream, readUpstreamEnv } from "@serp/upstream";
import { createWorkerRuntime } from "@serp/worker/runtime";
import { REDIS_URL, fixturesAvailable, pollUntilFinal, silent, startStack, type Stack } from "../support/stack.js";

const d = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) console.warn("lifecycle: captured pages not found; set SERP_FIXTURES_DIR. Skipping.");

d("job lifecycle", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { LIVE_DEADLINE_MS: "8000" } });
  });
  afterAll(() => stack.close());
  afterEach(() => stack.replay.clearFaults());

  const api = () => request(stack.api.app);
  const search = { endpoint: "web-search", params: { query: "coffee" } };

  test("live: answers 200 with the completed job and its result, billed 1 credit", async () => {
    const { auth, accountId } = await stack.account(10);
    // The answer comes with the settlement, on this API's reply channel: the record is not read back.
    const jobs = stack.api.jobs;
    const read = jobs.get.bind(jobs);
    let reads = 0;
    jobs.get = (id: string) => (reads++, read(id));
    const res = await Promise.resolve(api().post("/v1/jobs").set("Authorization", auth).send({ ...search, queue: "live" })).finally(() => (jobs.get = read));
    expect(reads).toBe(0);
    expect(res.status).toBe(200);
    expect(res.body.job).toMatchObject({ status: "completed", queue: "live", credits: 1, error: null, attempts: 1 });
    expect(res.body.job.id).toMatch(/^job_[0-9A-Z]{26}$/);
    expect(res.body.job.latencyMs).toEqual(expect.any(Number));
    expect(Date.parse(res.body.job.completedAt)).toBeGreaterThanOrEqual(Date.parse(res.body.job.createdAt));
    expect(res.body.result.search_parameters).toEqual({ engine: "web_search", query: "coffee", country: "us", language: "en", page: 1, device: "desktop", layout: "full" });
    expect(res.body.result.layout).toBe("full");
    expect(res.body.result.organic_results.length).toBeGreaterThan(0);
    // The queue entry carried the endpoint and params, so the worker could fetch while marking the job started.
    expect((await stack.api.queues.live.getJob(res.body.job.id))?.data).toEqual({
      jobId: res.body.job.id, endpoint: "web-search", params: res.body.job.params, paramsHash: paramsHashOf(res.body.job.params), accountId,
    });
    const acct = await stack.api.accounts.get(accountId);
    expect(acct).toMatchObject({ balance: 9, reserved: 0 });
    expect(await stack.api.accounts.ledger(accountId)).toContainEqual(
      expect.objectContaining({ type: "charge", jobId: res.body.job.id, credits: 1, endpoint: "web-search" }),
    );
  });

  test.each(["fast", "regular"])("%s: answers 202, then polling returns the completed job with its result", async (queue) => {
    const { auth, accountId } = await stack.account(10);
    const res = await api().post("/v1/jobs").set("Authorization", auth).send({ ...search, queue });
    expect(res.status).toBe(202);
    expect(res.body.message).toEqual(expect.any(String));
    expect(res.body.job).toMatchObject({ status: "pending", queue, credits: 0 });
    const final = await pollUntilFinal(() => api().get(`/v1/jobs/${res.body.job.id}`).set("Authorization", auth));
    expect(final.body.job).toMatchObject({ status: "completed", credits: 1 });
    expect((final.body.result as { organic_results: unknown[] }).organic_results.length).toBeGreaterThan(0);
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 9, reserved: 0 });
  });

  test("a job whose upstream keeps failing ends failed at 0 credits with a clear error, refunded in the ledger", async () => {
    const { auth, accountId } = await stack.account(5);
    stack.replay.setFaults({ mode: "server-error" });
    const res = await api().post("/v1/jobs").set("Authorization", auth).send({ ...search, queue: "live" });
    expect(res.status).toBe(200);
    expect(res.body.job).toMatchObject({ status: "failed", credits: 0, error: expect.stringMatching(/upstream/) });
    expect(res.body.job.attempts).toBe(2);
    expect(res.body.result).toBeNull();
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 5, reserved: 0 });
    const ledger = await stack.api.accounts.ledger(accountId);
    expect(ledger.filter((e) => e.jobId === res.body.job.id)).toEqual([expect.objectContaining({ type: "refund", credits: 0 })]);
  });

  test("a blocked upstream fails the job as blocked, never completed with an empty result", async () => {
    const { auth } = await stack.account(5);
    stack.replay.setFaults({ mode: "captcha" });
    const res = await api().post("/v1/jobs").set("Authorization", auth).send({ ...search, queue: "live" });
    expect(res.body.job).toMatchObject({ status: "failed", credits: 0, error: "upstream blocked the request" });
  });

  test("GET answers 404 for an unknown id, a malformed id and another account's job", async () => {
    const a = await stack.account(5);
    const b = await stack.account(5);
    const res = await api().post("/v1/jobs").set("Authorization", a.auth).send(search);
    for (const [auth, id] of [
      [a.auth, "job_01JZZZZZZZZZZZZZZZZZZZZZZZ"],
      [a.auth, "not-a-job"],
      [b.auth, res.body.job.id],
    ]) {
      const r = await api().get(`/v1/jobs/${id}`).set("Authorization", auth!);
      expect(r.status).toBe(404);
      expect(r.body.error.code).toBe("not_found");
    }
    expect((await api().get(`/v1/jobs/${res.body.job.id}`).set("Authorization", a.auth)).status).toBe(200);
  });

  test.each([
    ["no Authorization header", undefined],
    ["a malformed header", "Token sk_live_abc"],
    ["an empty bearer", "Bearer "],
    ["an unknown key", "Bearer sk_live_00000000000000000000000000000000"],
    ["a key without the sk_ prefix", "Bearer pk_live_00000000000000000000000000000000"],
  ])("answers 401 for %s", async (_why, header) => {
    let r = api().post("/v1/jobs");
    if (header !== undefined) r = r.set("Authorization", header);
    const res = await r.send(search);
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("unauthorized");
    const get = api().get("/v1/jobs/job_01JZZZZZZZZZZZZZZZZZZZZZZZ");
    expect((await (header ? get.set("Authorization", header) : get)).status).toBe(401);
  });

  test("answers 401 for a revoked key", async () => {
    const { accountId, key, auth } = await stack.account(5);
    expect(await stack.api.accounts.revokeKey(accountId, key.slice(0, 12))).toBe(true);
    expect((await api().post("/v1/jobs").set("Authorization", auth).send(search)).status).toBe(401);
  });

  test("answers 402 below 1 available credit, counting credits held by pending jobs", async () => {
    const empty = await stack.account(0);
    const r0 = await api().post("/v1/jobs").set("Authorization", empty.auth).send(search);
    expect(r0.status).toBe(402);
    expect(r0.body.error.code).toBe("insufficient_credits");

    const one = await stack.account(1);
    await stack.worker!.workers.find((w) => w.name === "regular")!.pause();
    try {
      expect((await api().post("/v1/jobs").set("Authorization", one.auth).send({ ...search, queue: "regular" })).status).toBe(202);
      expect((await api().post("/v1/jobs").set("Authorization", one.auth).send({ ...search, queue: "regular" })).status).toBe(402);
    } finally {
      stack.worker!.workers.find((w) => w.name === "regular")!.resume();
    }
  });
});

d("live deadline", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { LIVE_DEADLINE_MS: "600" }, workerQueues: ["live"] });
  });
  afterAll(() => stack.close());

  test("past the deadline the job fails with 'timed out' at 0 credits, and the late result is discarded", async () => {
    const { auth, accountId } = await stack.account(3);
    stack.replay.setFaults({ latencyMs: 1_500 });
    const res = await request(stack.api.app)
      .post("/v1/jobs")
      .set("Authorization", auth)
      .send({ endpoint: "web-search", params: { query: "coffee" }, queue: "live" });
    expect(res.status).toBe(200);
    expect(res.body.job).toMatchObject({ status: "failed", error: "timed out", credits: 0 });
    // Let the worker finish its late attempt, then check nothing changed and nothing was billed.
    await new Promise((r) => setTimeout(r, 2_500));
    const later = await request(stack.api.app).get(`/v1/jobs/${res.body.job.id}`).set("Authorization", auth);
    expect(later.body.job).toMatchObject({ status: "failed", error: "timed out", credits: 0 });
    expect(later.body.result).toBeNull();
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 3, reserved: 0 });
    expect((await stack.api.accounts.ledger(accountId)).filter((e) => e.jobId === res.body.job.id)).toHaveLength(1);
  });
});

d("live jobs fetched while they are marked started", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ workerQueues: [] });
  });
  afterAll(() => stack.close());

  test("a live job found final when a worker takes it has its early fetch dropped: nothing parsed, stored or billed", async () => {
    const { accountId } = await stack.account(3);
    const id = newJobId();
    const params = { query: "coffee", country: "us", language: "en", page: 1, device: "desktop" } as const;
    const created = await stack.api.jobs.create({ id, accountId, endpoint: "web-search", queue: "live", params, createdAt: new Date().toISOString() }, 1);
    expect(created.outcome).toBe("created");
    // Settled before any worker saw it, as when the live deadline passed first.
    await stack.api.jobs.finalize(id, accountId, { status: "failed", credits: 0, latencyMs: null, error: "timed out", result: null, completedAt: new Date().toISOString() });
    stack.replay.setFaults({ latencyMs: 300 });
    await stack.api.queues.live.add("web-search", scrapePayloadOf({ id, endpoint: "web-search", queue: "live", params }, accountId), { ...QUEUE_CATALOG.live.jobOptions, jobId: id });

    const upstream = createUpstream(readUpstreamEnv({ UPSTREAM_BASE_URL: stack.replay.url, UPSTREAM_TIMEOUT_MS: 5_000, PARSE_THREADS: 0 }));
    const worker = await createWorkerRuntime(
      stack.workerEnv({ WORKER_QUEUES: "live", WORKER_CONCURRENCY: "1", JOB_RETENTION_SECONDS: "600" }),
      { scraper: upstream, logger: silent },
    );
    try {
      const until = Date.now() + 30_000;
      while ((await stack.api.queues.live.getJobState(id)) !== "completed" && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(await stack.api.queues.live.getJobState(id)).toBe("completed");
      // The fetch begun with the job's params was dropped, its answer unread, once the record said
      // the job was over.
      expect(upstream.parses()).toEqual({ inline: 0, threads: 0 });
      expect((await stack.api.jobs.get(id))!.job).toMatchObject({ status: "failed", error: "timed out", credits: 0 });
      expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 3, reserved: 0 });
      expect((await stack.api.accounts.ledger(accountId)).filter((e) => e.jobId === id)).toHaveLength(1);
    } finally {
      await worker.closers.closeAll(10_000);
      await upstream.close();
      stack.replay.clearFaults();
    }
  });

  test("a fast job's queue entry carries its id and owner (its params are read from the record)", async () => {
    const { auth } = await stack.account(3);
    const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: "tea" }, queue: "fast" });
    expect(res.status).toBe(202);
    // …and its owner, for the workers' fair share (docs/FAIRNESS.md).
    expect((await stack.api.queues.fast.getJob(res.body.job.id))!.data).toEqual({ jobId: res.body.job.id, accountId: expect.stringMatching(/^acct_/) });
  });

  test("entries an older version queued, without an endpoint or params hash (the endpoint in the BullMQ name), still run to completion, read from the record", async () => {
    const { accountId } = await stack.account(3);
    const params = { query: "coffee", country: "us", language: "en", page: 1, device: "desktop" } as const;
    const ids = { live: newJobId(), fast: newJobId() };
    for (const queue of ["live", "fast"] as const) {
      const id = ids[queue];
      expect((await stack.api.jobs.create({ id, accountId, endpoint: "web-search", queue, params, createdAt: new Date().toISOString() }, 1)).outcome).toBe("created");
      // As the older API wrote them: a live entry carried its params alone, a fast one its id and owner.
      const old = queue === "live" ? { jobId: id, params, accountId } : { jobId: id, accountId };
      await stack.api.queues[queue].add("web-search", old, { ...QUEUE_CATALOG[queue].jobOptions, jobId: id });
    }
    const worker = await createWorkerRuntime(
      stack.workerEnv({ WORKER_QUEUES: "live,fast", WORKER_CONCURRENCY: "1", JOB_RETENTION_SECONDS: "600" }),
      { scraper: stack.upstream, logger: silent, webhooks: false },
    );
    try {
      for (const id of Object.values(ids)) {
        const final = await pollUntilFinal(async () => ({ status: 200, body: { job: (await stack.api.jobs.get(id))!.job } }));
        expect(final.body.job).toMatchObject({ status: "completed", credits: 1, error: null });
        expect((await stack.api.jobs.get(id))!.result).toMatchObject({ organic_results: expect.any(Array) });
      }
      expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 1, reserved: 0 });
    } finally {
      await worker.closers.closeAll(10_000);
    }
  });
});

d("a job BullMQ gives up on", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ workerQueues: [] });
  });
  afterAll(() => stack.close());

  test("after its worker died holding it once too often, it ends failed at 0 credits and the reservation is released", async () => {
    const { auth, accountId } = await stack.account(3);
    const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: "coffee" }, queue: "fast" });
    expect(res.status).toBe(202);
    const id = res.body.job.id as string;
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 3, reserved: 1 });

    // A worker takes the job and dies with it: its lock is left to expire, nothing settles it.
    const connection = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
    let doomed!: Worker;
    await new Promise<void>((taken) => {
      const hold = (): Promise<void> => (taken(), new Promise<void>(() => undefined));
      doomed = new Worker("fast", hold, { connection, prefix: keySpace(stack.prefix).bullPrefix, lockDuration: 300, skipStalledCheck: true });
    });
    await doomed.close(true);
    expect(await stack.api.queues.fast.getJobState(id)).toBe("active");

    // The next worker's stalled-job check finds it; allowed no stall, BullMQ fails it there.
    const upstream = createUpstream(readUpstreamEnv({ UPSTREAM_BASE_URL: stack.replay.url, UPSTREAM_TIMEOUT_MS: 5_000, PARSE_THREADS: 0 }));
    const worker = await createWorkerRuntime(
      // A lock shorter than WORKER_LOCK_MS allows, so the stalled job is retaken at once.
      { ...stack.workerEnv({ WORKER_QUEUES: "fast", WORKER_CONCURRENCY: "1", JOB_RETENTION_SECONDS: "600" }), WORKER_LOCK_MS: 300 },
      { scraper: upstream, logger: silent, maxStalledCount: 0, webhooks: false },
    );
    try {
      const final = await pollUntilFinal(() => request(stack.api.app).get(`/v1/jobs/${id}`).set("Authorization", auth));
      expect(await stack.api.queues.fast.getJobState(id)).toBe("failed");
      expect(final.body.job).toMatchObject({ status: "failed", credits: 0, error: JOB_ERRORS.internal });
      expect(final.body.result).toBeNull();
      expect(upstream.parses()).toEqual({ inline: 0, threads: 0 });
      expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 3, reserved: 0 });
    } finally {
      await worker.closers.closeAll(10_000);
      await upstream.close();
      connection.disconnect();
    }
  });
});

d("retention", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { JOB_RETENTION_SECONDS: "1" }, workerQueues: [] });
  });
  afterAll(() => stack.close());

  test("a job expires after the retention time and then answers 404", async () => {
    const { auth } = await stack.account(3);
    const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-news", params: { query: "x" } });
    expect((await request(stack.api.app).get(`/v1/jobs/${res.body.job.id}`).set("Authorization", auth)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 2_200));
    expect((await request(stack.api.app).get(`/v1/jobs/${res.body.job.id}`).set("Authorization", auth)).status).toBe(404);
  });
});
