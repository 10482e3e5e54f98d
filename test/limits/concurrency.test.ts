/**
 * Per-account concurrency: jobs pending or processing at once. The check is atomic in the submit
 * script; these tests prove the number it gets (default, override, none) and the 429 it answers.
 */
import request from "supertest";
import { createUpstream, readUpstreamEnv } from "@serp/upstream";
import { createWorkerRuntime } from "@serp/worker/runtime";
import { pollUntilFinal, silent, startStack, type Stack } from "../support/stack.js";

const job = { endpoint: "web-news", params: { query: "schloss johannisberg" }, queue: "fast" };

describe("jobs in flight", () => {
  let stack: Stack;
  beforeAll(async () => {
    // No worker: submitted jobs stay pending until a test starts one.
    stack = await startStack({ workerQueues: [], env: { MAX_JOBS_IN_FLIGHT: "1" } });
  });
  afterAll(() => stack.close());

  const submit = (auth: string, body: object = job) => request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send(body);

  test("the third submission over an override of 2 gets 429 concurrency_limited, and succeeds once a worker drains the first two", async () => {
    const { auth, accountId } = await stack.account(10);
    await stack.api.accounts.setLimits(accountId, { maxInFlight: 2 });
    const first = await submit(auth);
    const second = await submit(auth);
    expect([first.status, second.status]).toEqual([202, 202]);
    expect(first.headers.ratelimit).toMatch(/"concurrency";r=1$/);
    expect(second.headers.ratelimit).toMatch(/"concurrency";r=0$/);

    const refused = await submit(auth);
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: "concurrency_limited", message: expect.stringMatching(/pending or processing/) });
    expect(refused.headers["retry-after"]).toBe("1");
    expect(refused.headers["ratelimit-policy"]).toMatch(/"concurrency";q=2;qu="concurrent-requests"$/);
    expect(refused.headers.ratelimit).toMatch(/"concurrency";r=0$/);
    // Refused: nothing reserved, nothing stored.
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ reserved: 2 });

    const upstream = createUpstream(readUpstreamEnv({ UPSTREAM_BASE_URL: stack.replay.url, UPSTREAM_TIMEOUT_MS: 5_000, PARSE_THREADS: 0 }));
    const worker = await createWorkerRuntime(
      stack.workerEnv({ WORKER_QUEUES: "fast", WORKER_CONCURRENCY: "2", JOB_RETENTION_SECONDS: "3600" }),
      { scraper: upstream, logger: silent },
    );
    try {
      for (const res of [first, second]) {
        await pollUntilFinal(() => request(stack.api.app).get(`/v1/jobs/${res.body.job.id}`).set("Authorization", auth));
      }
      expect(await stack.api.accounts.get(accountId)).toMatchObject({ reserved: 0 });
      const accepted = await submit(auth);
      expect(accepted.status).toBe(202);
      await pollUntilFinal(() => request(stack.api.app).get(`/v1/jobs/${accepted.body.job.id}`).set("Authorization", auth));
    } finally {
      await worker.closers.closeAll(10_000);
      await upstream.close();
    }
  }, 30_000);

  test("without an override the environment's MAX_JOBS_IN_FLIGHT applies", async () => {
    const { auth } = await stack.account(10);
    expect((await submit(auth)).status).toBe(202);
    const refused = await submit(auth);
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe("concurrency_limited");
    expect(refused.headers["ratelimit-policy"]).toMatch(/"concurrency";q=1;qu="concurrent-requests"$/);
  });

  test("an override of 0 lifts the limit", async () => {
    const { auth, accountId } = await stack.account(10);
    await stack.api.accounts.setLimits(accountId, { maxInFlight: 0 });
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await submit(auth)).status);
    expect(statuses).toEqual([202, 202, 202, 202]);
  });

  test("live jobs count too, and the limit is per account", async () => {
    const a = await stack.account(10);
    const b = await stack.account(10);
    expect((await submit(a.auth, { ...job, queue: "regular" })).status).toBe(202);
    // A live job of the same account would be refused before it waits on the (absent) worker.
    const live = await submit(a.auth, { ...job, queue: "live" });
    expect(live.status).toBe(429);
    expect((await submit(b.auth, { ...job, queue: "regular" })).status).toBe(202);
  });
});
