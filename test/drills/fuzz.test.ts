/**
 * Drill: at least 10,000 generated bodies and query strings (fast-check) against POST /v1/jobs,
 * GET /v1/jobs/{id} and /search.json: no 5xx, no crash, every error body well formed.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import fc from "fast-check";
import { ENDPOINTS } from "@serp/shared";
import { fixturesAvailable, startStack, type Stack } from "../support/stack.js";

const d = fixturesAvailable ? describe : describe.skip;
const PARAMS = ["query", "product_id", "country", "language", "page", "device", "location", "uule"];
const COMPAT = ["engine", "q", "gl", "hl", "device", "location", "uule", "start", "tbm", "num", "output", "source"];
/**
 * Requests in flight at once: each fast-check run is a batch of this many generated cases, sent
 * together and each checked, so the counts stay exact and a failure still prints fast-check's seed
 * and path (and shrinks the failing batch's cases).
 */
const IN_FLIGHT = 10;

/** A property over batches of IN_FLIGHT cases of `arb`, all sent at once; `runs` cases in all. */
function inBatches<T>(arb: fc.Arbitrary<T>, runs: number, check: (value: T) => Promise<void>) {
  const property = fc.asyncProperty(fc.array(arb, { minLength: IN_FLIGHT, maxLength: IN_FLIGHT }), async (batch) => {
    const failed = (await Promise.allSettled(batch.map(check))).find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
  });
  return fc.assert(property, { numRuns: Math.ceil(runs / IN_FLIGHT) });
}

d("drill: fuzzing the public surfaces", () => {
  let stack: Stack;
  let server: Server;
  let base: string;
  let key: string;
  beforeAll(async () => {
    // One fixed page answers every upstream request, so valid generated jobs complete quickly: a small
    // captured page that parses to a full result (71 KB, against 808 KB for web/coffee-desktop-2023.html,
    // whose parse on this process's event loop was most of the drill's time).
    stack = await startStack({
      workerQueues: ["live"],
      concurrency: 16,
      replay: { page: "web-nojs/coffee-nojs-2023.html" },
      env: { RATE_LIMIT_PER_MINUTE: "100000000", MAX_JOBS_IN_FLIGHT: "100000000", LIVE_DEADLINE_MS: "10000" },
    });
    key = (await stack.account(10_000_000)).key;
    server = createServer(stack.api.app);
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((ok) => server.close(ok));
    await stack.close();
  });

  function checkJobsError(status: number, body: unknown): void {
    expect(status).toBeLessThan(500);
    if (status >= 400) {
      const e = (body as { error?: { message?: unknown; code?: unknown } }).error;
      expect(typeof e?.message).toBe("string");
      expect(typeof e?.code).toBe("string");
    }
  }

  const anyValue = fc.oneof(fc.string(), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.array(fc.string(), { maxLength: 3 }), fc.object({ maxDepth: 1 }));
  const bodyArb = fc.oneof(
    { weight: 4, arbitrary: fc.record({
      endpoint: fc.oneof(fc.constantFrom(...ENDPOINTS), fc.string()),
      params: fc.oneof(fc.dictionary(fc.oneof(fc.constantFrom(...PARAMS), fc.string({ maxLength: 8 })), anyValue, { maxKeys: 5 }), anyValue),
      queue: fc.oneof(fc.constantFrom("fast", "regular", "live"), fc.string()),
      postbackUrl: fc.oneof(fc.webUrl(), fc.string()),
    }, { requiredKeys: [] }).map((b) => JSON.stringify(b)) },
    { weight: 1, arbitrary: fc.json() },
    { weight: 1, arbitrary: fc.string() },
    { weight: 1, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v).slice(0, -1)) },
  );

  test("POST /v1/jobs: 5,000 generated bodies", async () => {
    await inBatches(bodyArb, 5_000, async (body) => {
      // Live jobs on the fuzzed queue would each wait for a worker; the shape is what is fuzzed.
      const res = await fetch(`${base}/v1/jobs`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${key}` },
        body: body.replace(/"live"/g, '"fast"'),
      });
      checkJobsError(res.status, await res.json());
    });
  }, 240_000);

  test("GET /v1/jobs/{id}: 2,000 generated ids", async () => {
    await inBatches(fc.oneof(fc.string({ minLength: 1 }), fc.stringMatching(/^job_[0-9A-Z]{26}$/)), 2_000, async (id) => {
      const res = await fetch(`${base}/v1/jobs/${encodeURIComponent(id)}`, { headers: { authorization: `Bearer ${key}` } });
      checkJobsError(res.status, await res.json());
      expect([404, 400]).toContain(res.status);
    });
  }, 120_000);

  test("GET /search.json: 3,000 generated query strings", async () => {
    const qs = fc.dictionary(fc.oneof(fc.constantFrom(...COMPAT), fc.string({ maxLength: 6 })), fc.oneof(fc.string({ maxLength: 30 }), fc.integer().map(String)), { maxKeys: 6 });
    await inBatches(qs, 3_000, async (params) => {
      const res = await fetch(`${base}/search.json?${new URLSearchParams({ ...params, api_key: key })}`);
      const body = (await res.json()) as { error?: unknown };
      // 502 is this endpoint's documented answer to an upstream failure; nothing else may be 5xx.
      expect(res.status === 502 || res.status < 500).toBe(true);
      if (res.status >= 400) expect(typeof body.error).toBe("string");
    });
  }, 240_000);
});
