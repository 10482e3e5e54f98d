/**
 * Idempotency-Key on POST /v1/jobs, Stripe-style: the same key with the same body answers with the
 * first job (no second job, no second charge); another body is a 422; keys are per account.
 */
import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import request from "supertest";
import { startStack, type Stack } from "../support/stack.js";

const fast = { endpoint: "web-search", params: { query: "coffee" }, queue: "fast" };
const live = { endpoint: "web-search", params: { query: "coffee" }, queue: "live" };

describe("Idempotency-Key", () => {
  let stack: Stack;
  let server: Server;
  beforeAll(async () => {
    stack = await startStack({ workerQueues: ["live"] }); // fast jobs stay pending: nothing races the assertions
    server = stack.api.app.listen(0, "127.0.0.1");
    await new Promise((r) => server.once("listening", r));
  });
  afterAll(async () => {
    await new Promise((r) => server.close(r));
    await stack.close();
  });

  const submit = (auth: string, body: object, key?: string) => {
    const req = request(stack.api.app).post("/v1/jobs").set("Authorization", auth);
    return (key === undefined ? req : req.set("Idempotency-Key", key)).send(body);
  };

  test("the same key and body answer with the first job: one job, one reservation", async () => {
    const { auth, accountId } = await stack.account(10);
    const first = await submit(auth, fast, "order-1");
    expect(first.status).toBe(202);
    expect(first.headers["idempotent-replayed"]).toBeUndefined();
    // Key order in the body does not matter, only its content.
    const again = await submit(auth, { queue: "fast", params: { query: "coffee" }, endpoint: "web-search" }, "order-1");
    expect(again.status).toBe(202);
    expect(again.headers["idempotent-replayed"]).toBe("true");
    expect(again.body.job.id).toBe(first.body.job.id);
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ reserved: 1 });
    expect(await stack.api.queues.fast.getJobCounts("prioritized", "waiting")).toMatchObject({ prioritized: 1 });
  });

  test("concurrent submissions with one key make one job", async () => {
    const { auth, accountId } = await stack.account(10);
    const answers = await Promise.all(Array.from({ length: 6 }, () => submit(auth, fast, "burst")));
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(202));
    expect(new Set(answers.map((a) => a.body.job.id)).size).toBe(1);
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ reserved: 1 });
  });

  test("the same key with another body is refused with 422; another account's same key is its own", async () => {
    const a = await stack.account(10);
    const b = await stack.account(10);
    const first = await submit(a.auth, fast, "shared-key");
    const other = await submit(a.auth, { ...fast, params: { query: "tea" } }, "shared-key");
    expect(other.status).toBe(422);
    expect(other.body.error).toMatchObject({ code: "idempotency_key_reused", message: expect.stringMatching(/different request body/) });
    const theirs = await submit(b.auth, fast, "shared-key");
    expect(theirs.status).toBe(202);
    expect(theirs.body.job.id).not.toBe(first.body.job.id);
  });

  test("a submission refused for credits does not keep its key: the retry after a top-up creates the job", async () => {
    const { auth, accountId } = await stack.account(0);
    expect((await submit(auth, fast, "after-topup")).status).toBe(402);
    await stack.api.accounts.grant(accountId, 5, "test");
    const retry = await submit(auth, fast, "after-topup");
    expect(retry.status).toBe(202);
    expect(retry.headers["idempotent-replayed"]).toBeUndefined();
  });

  test("a malformed key is a 400 naming the header", async () => {
    const { auth } = await stack.account(10);
    for (const key of ["has space", "x".repeat(256), "é"]) {
      const res = await submit(auth, fast, key);
      expect(res.status).toBe(400);
      expect(res.body.error.details).toEqual([expect.objectContaining({ field: "Idempotency-Key" })]);
    }
  });

  test("a live answer lost to a dropped connection: the retry gets the same completed job, charged once", async () => {
    const { auth, accountId } = await stack.account(10);
    stack.replay.setFaults({ latencyMs: 800 });
    try {
      const { port } = server.address() as AddressInfo;
      const body = JSON.stringify(live);
      // The client gives up after 200 ms: the connection drops while the job runs.
      await new Promise<void>((resolve) => {
        const req = httpRequest(
          { host: "127.0.0.1", port, path: "/v1/jobs", method: "POST", headers: { Authorization: auth, "Content-Type": "application/json", "Idempotency-Key": "live-1" } },
          () => resolve(),
        );
        req.on("error", () => resolve());
        req.end(body);
        setTimeout(() => req.destroy(), 200);
      });
      const retry = await submit(auth, live, "live-1");
      expect(retry.status).toBe(200);
      expect(retry.headers["idempotent-replayed"]).toBe("true");
      expect(retry.body.job.status).toBe("completed");
      expect(retry.body.result.organic_results.length).toBeGreaterThan(0);
      // One job, one charge.
      const charges = (await stack.api.accounts.ledger(accountId)).filter((e: { type: string }) => e.type === "charge");
      expect(charges).toEqual([expect.objectContaining({ jobId: retry.body.job.id, credits: 1 })]);
      expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 9, reserved: 0 });
    } finally {
      stack.replay.clearFaults();
    }
  }, 20_000);
});
