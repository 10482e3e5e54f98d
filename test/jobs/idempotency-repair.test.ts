/**
 * The idempotency claim and the job it names cannot part (packages/store/src/lua/jobs.ts): written
 * in one script, a claim never names a job that was not made; a retry of a job stored but never
 * queued (Redis went away between the two) enqueues it; a key whose job is gone is free again; a
 * creation run twice (a command resent after a dropped connection) reserves once.
 */
import request from "supertest";
import { newJobId, withDefaults } from "@serp/shared";
import { IdempotencyKeys, keySpace } from "@serp/store";
import { pollUntilFinal, startStack, type Stack } from "../support/stack.js";

const fast = { endpoint: "web-search", params: { query: "coffee" }, queue: "fast" } as const;

describe("Idempotency-Key: claim and job together", () => {
  let stack: Stack;
  let idem: IdempotencyKeys;
  beforeAll(async () => {
    stack = await startStack({ workerQueues: ["fast"] });
    idem = new IdempotencyKeys(keySpace(stack.prefix));
  }, 30_000);
  afterAll(async () => stack?.close(), 30_000);

  const submit = (auth: string, body: object, key: string) => request(stack.api.app).post("/v1/jobs").set("Authorization", auth).set("Idempotency-Key", key).send(body);
  /** What SUBMIT leaves when Redis goes away before the enqueue: the record, its claim, its reservation; no queue entry. */
  const storedNotQueued = async (accountId: string, key: string) => {
    const id = newJobId();
    const job = { id, accountId, endpoint: fast.endpoint, queue: fast.queue, params: withDefaults(fast as never), createdAt: new Date().toISOString() };
    expect((await stack.api.jobs.create(job, 1, 0, idem.claim(accountId, key, fast))).outcome).toBe("created");
    return id;
  };

  test("a retry of a job stored but never queued enqueues it: it runs once and is charged once", async () => {
    const { auth, accountId } = await stack.account(10);
    const id = await storedNotQueued(accountId, "lost-enqueue");
    expect(await stack.api.queues.fast.getJob(id)).toBeUndefined();

    const retry = await submit(auth, fast, "lost-enqueue");
    expect(retry.status).toBe(202);
    expect(retry.headers["idempotent-replayed"]).toBe("true");
    expect(retry.body.job.id).toBe(id);
    const final = await pollUntilFinal(() => request(stack.api.app).get(`/v1/jobs/${id}`).set("Authorization", auth));
    expect(final.body.job.status).toBe("completed");
    const entries = (await stack.api.accounts.ledger(accountId)).filter((e) => e.jobId === id);
    expect(entries).toEqual([expect.objectContaining({ type: "charge", credits: 1 })]);
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 9, reserved: 0 });
    // Enqueued and settled: nothing left for the sweeper.
    expect(await stack.redis.zscore(`${stack.prefix}:jobs:unqueued`, id)).toBeNull();
  }, 30_000);

  test("a key whose job is gone is free again: the retry makes a new job, and the next retry replays that one", async () => {
    const { auth, accountId } = await stack.account(10);
    const gone = await storedNotQueued(accountId, "expired-job");
    await stack.redis.del(`${stack.prefix}:job:${gone}`);
    const retry = await submit(auth, fast, "expired-job");
    expect(retry.status).toBe(202);
    expect(retry.headers["idempotent-replayed"]).toBeUndefined();
    expect(retry.body.job.id).not.toBe(gone);
    const again = await submit(auth, fast, "expired-job");
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.body.job.id).toBe(retry.body.job.id);
    // The gone job's body is no longer what the key is held to: the key now names the new job, with this body.
    expect((await submit(auth, { ...fast, params: { query: "tea" } }, "expired-job")).status).toBe(422);
  }, 30_000);

  test("a refused submission leaves no claim and no job: the key stays free", async () => {
    const { accountId } = await stack.account(0);
    const claim = idem.claim(accountId, "refused", fast);
    const id = newJobId();
    const job = { id, accountId, endpoint: fast.endpoint, queue: fast.queue, params: withDefaults(fast as never), createdAt: new Date().toISOString() };
    expect((await stack.api.jobs.create(job, 1, 0, claim)).outcome).toBe("insufficient_credits");
    expect(await stack.redis.exists(claim.key, `${stack.prefix}:job:${id}`)).toBe(0);
    expect(await stack.redis.zscore(`${stack.prefix}:jobs:unqueued`, id)).toBeNull();
  });

  test("a creation run twice for one job (resent after a dropped connection) reserves once, with or without a key", async () => {
    const { accountId } = await stack.account(10);
    for (const claim of [undefined, idem.claim(accountId, "resent", fast)]) {
      const job = { id: newJobId(), accountId, endpoint: fast.endpoint, queue: fast.queue, params: withDefaults(fast as never), createdAt: new Date().toISOString() };
      const first = await stack.api.jobs.create(job, 1, 0, claim);
      const second = await stack.api.jobs.create(job, 1, 0, claim);
      expect([first.outcome, second.outcome]).toEqual(["created", "created"]);
      expect(second.inFlight).toBe(first.inFlight);
    }
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 10, reserved: 2 });
  });

  test("the claim names the job in the same step: another job with the key is a replay of the first, another body a reuse", async () => {
    const { accountId } = await stack.account(10);
    const first = await storedNotQueued(accountId, "held");
    const job = { id: newJobId(), accountId, endpoint: fast.endpoint, queue: fast.queue, params: withDefaults(fast as never), createdAt: new Date().toISOString() };
    expect(await stack.api.jobs.create(job, 1, 0, idem.claim(accountId, "held", fast))).toMatchObject({ outcome: "replay", replayOf: first });
    expect(await stack.api.jobs.create(job, 1, 0, idem.claim(accountId, "held", { ...fast, queue: "regular" }))).toMatchObject({ outcome: "key_reused" });
    expect(await stack.redis.exists(`${stack.prefix}:job:${job.id}`)).toBe(0);
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ reserved: 1 });
  });
});
