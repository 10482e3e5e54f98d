/**
 * GET /v1/account: the caller's credits, usage by endpoint, limits with their source and keys,
 * after real jobs through the API, workers and the replay upstream.
 */
import request from "supertest";
import { accountView } from "../../apps/api/src/openapi/schemas.js";
import { fixturesAvailable, startStack, type Stack } from "../support/stack.js";

const d = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) console.warn("account: captured pages not found; set SERP_FIXTURES_DIR. Skipping.");

d("GET /v1/account", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { LIVE_DEADLINE_MS: "8000" } });
  });
  afterAll(() => stack.close());
  afterEach(() => stack.replay.clearFaults());

  const api = () => request(stack.api.app);
  const live = (auth: string, endpoint: string, params: object) =>
    api().post("/v1/jobs").set("Authorization", auth).send({ endpoint, params, queue: "live" });

  test("shows balance, reserved, available, usage by endpoint, default limits and the keys' public ids after some jobs", async () => {
    const { auth, accountId, key } = await stack.account(10);
    expect((await live(auth, "web-search", { query: "coffee" })).body.job.status).toBe("completed");
    expect((await live(auth, "web-news", { query: "schloss johannisberg" })).body.job.status).toBe("completed");
    stack.replay.setFaults({ mode: "server-error" });
    expect((await live(auth, "web-search", { query: "coffee" })).body.job.status).toBe("failed");
    stack.replay.clearFaults();

    const res = await api().get("/v1/account").set("Authorization", auth);
    expect(res.status).toBe(200);
    expect(accountView.safeParse(res.body).success).toBe(true);
    expect(res.body).toEqual({
      id: accountId,
      name: "test",
      createdAt: expect.any(String),
      balance: 8,
      reserved: 0,
      available: 8,
      usage: {
        "web-search": { completed: 1, failed: 1, credits: 1 },
        "web-news": { completed: 1, failed: 0, credits: 1 },
      },
      limits: {
        rate: { limit: 600, windowSeconds: 60, source: "default" },
        concurrency: { limit: 100, inFlight: 0, source: "default" },
      },
      keys: [{ id: key.slice(0, 12), label: "default", createdAt: expect.any(String), revokedAt: null }],
    });
    // The key itself is shown once, when made; never again.
    expect(res.text).not.toContain(key);
  }, 30_000);

  test("counts credits held by jobs in flight as reserved, not available", async () => {
    const { auth, accountId } = await stack.account(5);
    await stack.worker!.workers.find((w) => w.name === "regular")!.pause();
    try {
      const sub = await api().post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: "coffee" }, queue: "regular" });
      expect(sub.status).toBe(202);
      const res = await api().get("/v1/account").set("Authorization", auth);
      expect(res.body).toMatchObject({ id: accountId, balance: 5, reserved: 1, available: 4, limits: { concurrency: { inFlight: 1 } } });
    } finally {
      stack.worker!.workers.find((w) => w.name === "regular")!.resume();
    }
  });

  test("shows overrides with source override, and 0 as no limit (null)", async () => {
    const { auth, accountId } = await stack.account(1);
    await stack.api.accounts.setLimits(accountId, { rateLimit: 30, rateWindowSeconds: 10, maxInFlight: 0 });
    const res = await api().get("/v1/account").set("Authorization", auth);
    expect(res.body.limits).toEqual({
      rate: { limit: 30, windowSeconds: 10, source: "override" },
      concurrency: { limit: null, inFlight: 0, source: "override" },
    });
  });

  test("lists every key of the account, revoked ones with their revocation time, and only this account's", async () => {
    const { auth, accountId, key } = await stack.account(1);
    const other = await stack.account(1);
    const extra = await stack.api.accounts.createKey(accountId, "ci");
    await stack.api.accounts.revokeKey(accountId, extra.info.id);
    const res = await api().get("/v1/account").set("Authorization", auth);
    expect(res.body.keys).toHaveLength(2);
    expect(res.body.keys).toEqual(
      expect.arrayContaining([
        { id: key.slice(0, 12), label: "default", createdAt: expect.any(String), revokedAt: null },
        { id: extra.info.id, label: "ci", createdAt: expect.any(String), revokedAt: expect.any(String) },
      ]),
    );
    expect(res.text).not.toContain(extra.key);
    expect(res.text).not.toContain(other.key.slice(0, 12));
  });

  test("answers 401 without a valid key, and is not rate-limited", async () => {
    expect((await api().get("/v1/account")).status).toBe(401);
    const { auth, accountId } = await stack.account(1);
    await stack.api.accounts.setLimits(accountId, { rateLimit: 1, rateWindowSeconds: 60 });
    for (let i = 0; i < 3; i++) {
      const res = await api().get("/v1/account").set("Authorization", auth);
      expect(res.status).toBe(200);
      expect(res.headers.ratelimit).toBeUndefined();
    }
  });
});
