/**
 * Drill: upstream faults from the replay server. A job whose upstream keeps failing ends failed
 * at 0 credits with the matching customer error; one that fails once succeeds on the next
 * profile; none is ever completed with an empty result.
 */
import request from "supertest";
import type { FaultMode } from "@serp/replay";
import { fixturesAvailable, startStack, type Stack } from "../support/stack.js";

const d = fixturesAvailable ? describe : describe.skip;

const PERSISTENT: [FaultMode, RegExp][] = [
  ["hang", /^upstream timed out$/],
  ["server-error", /^upstream returned an error$/],
  ["rate-limit", /^upstream blocked the request$/],
  ["captcha", /^upstream blocked the request$/],
  ["sorry-redirect", /^upstream blocked the request$/],
  ["js-wall", /JavaScript/],
  ["consent-redirect", /consent/],
  // A reset connection never answers: a network failure (or a time-out, when the reset comes late).
  ["reset", /^(could not reach the upstream \(network error\)|upstream timed out)$/],
];

d("drill: upstream faults", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ workerQueues: ["live"], upstreamTimeoutMs: 400, env: { LIVE_DEADLINE_MS: "20000" } });
  });
  afterAll(() => stack.close());
  afterEach(() => stack.replay.clearFaults());

  const live = async (auth: string) =>
    request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: "coffee" }, queue: "live" });

  test.each(PERSISTENT)("a persistent %s fails the job at 0 credits", async (mode, error) => {
    const { auth, accountId } = await stack.account(5);
    stack.replay.setFaults({ mode });
    const res = await live(auth);
    expect(res.status).toBe(200);
    expect(res.body.job.status).toBe("failed");
    expect(res.body.job.error).toMatch(error);
    expect(res.body.job.credits).toBe(0);
    expect(res.body.result).toBeNull();
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 5, reserved: 0 });
  }, 30_000);

  test.each(["hang", "server-error", "rate-limit", "captcha", "js-wall", "truncate"] as FaultMode[])(
    "a single %s is retried with the next profile and the job completes with results",
    async (mode) => {
      const { auth } = await stack.account(5);
      stack.replay.setFaults({ mode, times: 1 });
      const res = await live(auth);
      expect(res.body.job.status).toBe("completed");
      expect(res.body.result.organic_results.length).toBeGreaterThan(0);
      expect(res.body.job.credits).toBe(1);
    },
    30_000,
  );

  test("truncated pages never complete with an empty result", async () => {
    const { auth } = await stack.account(5);
    stack.replay.setFaults({ mode: "truncate" });
    const res = await live(auth);
    if (res.body.job.status === "completed") expect(res.body.result.organic_results.length).toBeGreaterThan(0);
    else expect(res.body.job).toMatchObject({ status: "failed", credits: 0 });
  }, 30_000);
});
