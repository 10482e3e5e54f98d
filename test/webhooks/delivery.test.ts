/**
 * Webhook delivery through the real API, Redis, BullMQ workers and the replay upstream, to a
 * receiver on loopback (private targets allowed here; see ssrf.test.ts for refusals). Every
 * delivery the receiver gets is verified with the standardwebhooks package, unchanged.
 */
import request from "supertest";
import { Webhook } from "standardwebhooks";
import { deliveriesResponse, webhookSecretResponse } from "../../apps/api/src/webhooks/schemas.js";
import { fixturesAvailable, pollUntilFinal, startStack, type Stack } from "../support/stack.js";
import { Receiver, type Received } from "./receiver.js";

const d = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) console.warn("webhooks: captured pages not found; set SERP_FIXTURES_DIR. Skipping.");

/** Whole-service tests wait on scrapes and retries; each wait inside is bounded on its own. */
const SLOW = 30_000;

/** Short enough for a test, long enough to see the order: 7 attempts over 4.2 s. */
const RETRY_DELAYS_MS = [200, 400, 600, 800, 1_000, 1_200];

interface DeliveriesBody {
  jobId: string;
  url: string | null;
  state: string;
  nextAttemptAt: string | null;
  attempts: { at: string; statusCode: number | null; error: string | null; durationMs: number }[];
}

d("webhook delivery", () => {
  let stack: Stack;
  let receiver: Receiver;
  let seq = 0;
  beforeAll(async () => {
    stack = await startStack({
      // The API's submit-time check (once wired) must let loopback through as the workers do.
      env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "true" },
      workerQueues: ["fast", "regular"],
      webhooks: { allowPrivateTargets: true, retryDelaysMs: RETRY_DELAYS_MS, timeoutMs: 2_000 },
    });
    receiver = await Receiver.start();
  }, SLOW);
  afterAll(async () => {
    await receiver.close();
    await stack.close();
  }, SLOW);
  afterEach(() => stack.replay.clearFaults());

  const api = () => request(stack.api.app);
  const path = (name: string) => `/${name}/${++seq}`;
  const secretOf = async (auth: string) => (await api().get("/v1/webhooks/secret").set("Authorization", auth)).body.secret as string;
  const submit = async (auth: string, postbackUrl: string, queue = "fast", params: object = { query: "coffee" }) => {
    const res = await api().post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params, queue, postbackUrl });
    expect(res.status).toBe(202);
    return res.body.job.id as string;
  };
  const deliveries = (auth: string, jobId: string) => api().get(`/v1/jobs/${jobId}/deliveries`).set("Authorization", auth);
  const waitForDeliveries = async (auth: string, jobId: string, done: (b: DeliveriesBody) => boolean, timeoutMs = 15_000) => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const res = await deliveries(auth, jobId);
      if (res.status === 200 && done(res.body)) return res.body as DeliveriesBody;
      if (Date.now() > until) throw new Error(`deliveries not as expected after ${timeoutMs} ms: ${JSON.stringify(res.body)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  /** Verifies the delivery exactly as a receiver would; throws when the signature does not hold. */
  const verify = (secret: string, r: Received) => new Webhook(secret).verify(r.body, r.headers) as Record<string, unknown>;

  test.each(["fast", "regular"])("%s: a completed job is delivered as job.completed, signed, with the payload GET /v1/jobs/{id} returns", async (queue) => {
    const { auth } = await stack.account(5);
    const secret = await secretOf(auth);
    const p = path("ok");
    const jobId = await submit(auth, receiver.url(p), queue);
    const [got] = await receiver.waitFor(p);
    const payload = verify(secret, got!);
    expect(got!.headers["content-type"]).toBe("application/json");
    expect(got!.headers["webhook-id"]).toBe(`wh_${jobId}`);
    expect(got!.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(Math.abs(Number(got!.headers["webhook-timestamp"]) - Date.now() / 1000)).toBeLessThan(30);

    const final = await pollUntilFinal(() => api().get(`/v1/jobs/${jobId}`).set("Authorization", auth));
    const { event, ...rest } = payload;
    expect(event).toBe("job.completed");
    expect(rest).toEqual(final.body);
    expect(final.body.job).toMatchObject({ status: "completed", queue, postbackUrl: receiver.url(p) });
    expect((final.body.result as { organic_results: unknown[] }).organic_results.length).toBeGreaterThan(0);

    const log = await waitForDeliveries(auth, jobId, (b) => b.state === "delivered");
    expect(log).toMatchObject({ jobId, url: receiver.url(p), nextAttemptAt: null });
    expect(log.attempts).toEqual([{ at: expect.any(String), statusCode: 204, error: null, durationMs: expect.any(Number) }]);
  }, SLOW);

  test("a failed job is delivered as job.failed with a null result", async () => {
    const { auth } = await stack.account(5);
    const secret = await secretOf(auth);
    stack.replay.setFaults({ mode: "js-wall" });
    const p = path("failed");
    const jobId = await submit(auth, receiver.url(p));
    const [got] = await receiver.waitFor(p);
    const { event, ...rest } = verify(secret, got!);
    expect(event).toBe("job.failed");
    const final = await api().get(`/v1/jobs/${jobId}`).set("Authorization", auth);
    expect(final.body.job).toMatchObject({ status: "failed", credits: 0, error: expect.any(String) });
    expect(rest).toEqual(final.body);
    expect(rest.result).toBeNull();
  }, SLOW);

  test("a receiver that is down, then failing, then back still gets the delivery; every attempt is recorded for the owner only", async () => {
    const owner = await stack.account(5);
    const other = await stack.account(5);
    const secret = await secretOf(owner.auth);
    const flaky = await Receiver.start();
    const p = path("flaky");
    flaky.on(p, (n) => (n === 0 ? { status: 500 } : { status: 200 }));
    await flaky.close(); // connection refused until it comes back
    try {
      const jobId = await submit(owner.auth, flaky.url(p));
      const down = await waitForDeliveries(owner.auth, jobId, (b) => b.attempts.length >= 2);
      expect(down.state).toBe("pending");
      expect(Date.parse(down.nextAttemptAt!)).toBeGreaterThan(Date.parse(down.attempts[1]!.at));
      await flaky.listen();

      const log = await waitForDeliveries(owner.auth, jobId, (b) => b.state === "delivered");
      const n = log.attempts.length;
      expect(n).toBeGreaterThanOrEqual(4);
      for (const a of log.attempts.slice(0, n - 2)) {
        expect(a).toMatchObject({ statusCode: null, error: expect.stringMatching(/connection refused/) });
      }
      expect(log.attempts[n - 2]).toMatchObject({ statusCode: 500, error: "the receiver answered 500" });
      expect(log.attempts[n - 1]).toMatchObject({ statusCode: 200, error: null });
      expect(deliveriesResponse.parse(log)).toEqual(log);
      expect(deliveriesResponse.parse(down)).toEqual(down);
      // The attempts follow the schedule: each later than the one before by at least its delay.
      for (let i = 1; i < n; i++) {
        expect(Date.parse(log.attempts[i]!.at) - Date.parse(log.attempts[i - 1]!.at)).toBeGreaterThanOrEqual(RETRY_DELAYS_MS[i - 1]! - 50);
      }

      // Both requests that arrived verify, and carry the same webhook-id (the receiver's dedupe key).
      const got = flaky.at(p);
      expect(got).toHaveLength(2);
      for (const r of got) verify(secret, r);
      expect(new Set(got.map((r) => r.headers["webhook-id"]))).toEqual(new Set([`wh_${jobId}`]));

      expect((await deliveries(other.auth, jobId)).status).toBe(404);
      expect((await deliveries(other.auth, jobId)).body.error.code).toBe("not_found");
      expect((await deliveries(owner.auth, "job_01JZZZZZZZZZZZZZZZZZZZZZZZ")).status).toBe(404);
      expect((await deliveries(owner.auth, "not-a-job")).status).toBe(404);
      expect((await request(stack.api.app).get(`/v1/jobs/${jobId}/deliveries`)).status).toBe(401);
    } finally {
      await flaky.close();
    }
  }, SLOW);

  test("a 410 stops the retries after one attempt", async () => {
    const { auth } = await stack.account(5);
    const p = path("gone");
    receiver.on(p, () => ({ status: 410 }));
    const jobId = await submit(auth, receiver.url(p));
    const log = await waitForDeliveries(auth, jobId, (b) => b.state !== "pending");
    expect(log.state).toBe("gone");
    // Longer than the first three retry delays: nothing more comes.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(receiver.at(p)).toHaveLength(1);
    const later = (await deliveries(auth, jobId)).body as DeliveriesBody;
    expect(later).toMatchObject({ state: "gone", nextAttemptAt: null });
    expect(later.attempts).toEqual([expect.objectContaining({ statusCode: 410, error: expect.stringMatching(/410/) })]);
  }, SLOW);

  test("a redirect counts as a failed attempt and is never followed", async () => {
    const { auth } = await stack.account(5);
    const p = path("redirect");
    const target = path("redirect-target");
    receiver.on(p, (n) => (n === 0 ? { status: 302, headers: { location: receiver.url(target) } } : { status: 200 }));
    const jobId = await submit(auth, receiver.url(p));
    const log = await waitForDeliveries(auth, jobId, (b) => b.state === "delivered");
    expect(log.attempts.map((a) => a.statusCode)).toEqual([302, 200]);
    expect(log.attempts[0]!.error).toMatch(/redirects are not followed/);
    expect(receiver.at(target)).toHaveLength(0);
  }, SLOW);

  test("a receiver's Retry-After is honoured when it asks for longer than the schedule", async () => {
    const { auth } = await stack.account(5);
    const p = path("retry-after");
    receiver.on(p, (n) => (n === 0 ? { status: 503, headers: { "retry-after": "1" } } : { status: 200 }));
    await submit(auth, receiver.url(p));
    const [first, second] = await receiver.waitFor(p, 2);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(950);
  }, SLOW);

  test("after the secret is rotated, deliveries verify with the new secret only", async () => {
    const { auth } = await stack.account(5);
    const old = await secretOf(auth);
    expect(await secretOf(auth)).toBe(old);
    const rotated = await api().post("/v1/webhooks/secret/rotate").set("Authorization", auth);
    expect(rotated.status).toBe(200);
    const fresh = rotated.body.secret as string;
    expect(fresh).not.toBe(old);
    expect(await secretOf(auth)).toBe(fresh);

    const p = path("rotated");
    await submit(auth, receiver.url(p));
    const [got] = await receiver.waitFor(p);
    expect(verify(fresh, got!).event).toBe("job.completed");
    expect(() => verify(old, got!)).toThrow(/signature/i);
  }, SLOW);

  test("secrets are Standard Webhooks secrets, one per account, made on first use", async () => {
    const a = await stack.account(1);
    const b = await stack.account(1);
    const sa = await secretOf(a.auth);
    const sb = await secretOf(b.auth);
    expect(webhookSecretResponse.parse({ secret: sa })).toEqual({ secret: sa });
    for (const s of [sa, sb]) {
      expect(s).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
      const bytes = Buffer.from(s.slice("whsec_".length), "base64").length;
      expect(bytes).toBeGreaterThanOrEqual(24);
      expect(bytes).toBeLessThanOrEqual(64);
    }
    expect(sa).not.toBe(sb);
    expect((await request(stack.api.app).get("/v1/webhooks/secret")).status).toBe(401);
  }, SLOW);

  test("repeated onFinal calls never send a delivery twice", async () => {
    const { auth } = await stack.account(5);
    const p = path("once");
    const jobId = await submit(auth, receiver.url(p));
    await receiver.waitFor(p);
    await waitForDeliveries(auth, jobId, (b) => b.state === "delivered");
    await Promise.all([1, 2, 3].map(() => stack.worker!.webhooks!.enqueue(jobId)));
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.at(p)).toHaveLength(1);
  }, SLOW);

  test("live jobs never deliver webhooks: postbackUrl is refused on live, and the enqueuer skips live jobs", async () => {
    const { auth, accountId } = await stack.account(5);
    const p = path("live");
    const res = await api()
      .post("/v1/jobs")
      .set("Authorization", auth)
      .send({ endpoint: "web-search", params: { query: "coffee" }, queue: "live", postbackUrl: receiver.url(p) });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toContainEqual(expect.objectContaining({ field: "postbackUrl" }));

    // Even a live record that somehow carries a postbackUrl is never enqueued.
    const jobId = "job_01JZZZZZZZZZZZZZZZZZZZZZZ0";
    await stack.api.jobs.create(
      { id: jobId, accountId, endpoint: "web-search", queue: "live", params: { query: "coffee" } as never, postbackUrl: receiver.url(p), createdAt: new Date().toISOString() },
      1,
    );
    await stack.api.jobs.finalize(jobId, accountId, { status: "failed", credits: 0, latencyMs: null, error: "x", result: null, completedAt: new Date().toISOString() });
    await stack.worker!.webhooks!.enqueue(jobId);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.at(p)).toHaveLength(0);
    expect((await deliveries(auth, jobId)).body).toMatchObject({ state: "none", attempts: [] });
  }, SLOW);
});
