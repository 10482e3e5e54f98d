/**
 * Prometheus metrics after real jobs: the API's /metrics (HTTP metrics, queue depths read from BullMQ
 * at scrape time) and a real worker process's /metrics on its health port (job outcomes, latency,
 * upstream outcomes, credits charged, webhook deliveries).
 */
import request from "supertest";
import { fixturesAvailable, pollUntilFinal, REDIS_URL, startStack, type Stack } from "../support/stack.js";
import { freePort, sample, spawnService, type ServiceProcess, START_BOUND_MS } from "./support.js";

const d = fixturesAvailable ? describe : describe.skip;

d("metrics", () => {
  let stack: Stack;
  let worker: ServiceProcess;
  let workerUrl: string;

  beforeAll(async () => {
    // No in-process worker: the jobs are worked by the real worker process below.
    stack = await startStack({ workerQueues: [], env: { RATE_LIMIT_PER_MINUTE: "0", MAX_JOBS_IN_FLIGHT: "0" } });
    const port = await freePort();
    workerUrl = `http://127.0.0.1:${port}`;
    worker = spawnService("worker", {
      ...stack.settings, WORKER_QUEUES: "live,fast,regular", HEALTH_PORT: String(port), UPSTREAM_BASE_URL: stack.replay.url, UPSTREAM_STATUS_INTERVAL_MS: "100",
    });
    await worker.waitForLog("workers ready", (l) => l.msg === "workers ready", START_BOUND_MS);
  }, 120_000);

  afterAll(async () => {
    await worker?.kill();
    await stack?.close();
  });

  test("after jobs run, the worker exports job outcomes, latency, upstream outcomes and credits; webhook deliveries are declared", async () => {
    const { auth } = await stack.account(10);
    const live = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: "coffee" }, queue: "live" });
    expect(live.body.job).toMatchObject({ status: "completed" });
    const fast = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-news", params: { query: "coffee" }, queue: "fast" });
    await pollUntilFinal(() => request(stack.api.app).get(`/v1/jobs/${fast.body.job.id}`).set("Authorization", auth));

    // Breaker gauges are refreshed with the published status (every 100 ms here).
    await new Promise((r) => setTimeout(r, 300));
    const res = await fetch(`${workerUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
    const text = await res.text();
    const liveSearch = { endpoint: "web-search", queue: "live", status: "completed", app: "worker" };
    expect(sample(text, "serp_jobs_total", liveSearch)).toBe(1);
    expect(sample(text, "serp_job_latency_seconds_count", liveSearch)).toBe(1);
    expect(sample(text, "serp_jobs_total", { endpoint: "web-news", queue: "fast", status: "completed" })).toBe(1);
    expect(sample(text, "serp_upstream_responses_total", { endpoint: "web-search", outcome: "results" })).toBeGreaterThanOrEqual(1);
    // Per profile and proxy, in the breakers' words; each breaker's state as a gauge.
    expect(sample(text, "serp_upstream_tries_total", { profile: "desktop", proxy: "direct", outcome: "results" })).toBeGreaterThanOrEqual(1);
    expect(sample(text, "serp_upstream_breaker_state", { profile: "desktop", proxy: "direct" })).toBe(0);
    expect(sample(text, "serp_credits_charged_total", { endpoint: "web-search" })).toBe(1);
    // Each parsed page's coverage, by endpoint and layout: the captured pages are understood in full.
    expect(sample(text, "serp_parse_coverage_ratio_count", { endpoint: "web-search", layout: "full" })).toBeGreaterThanOrEqual(1);
    expect(sample(text, "serp_parse_coverage_ratio_bucket", { endpoint: "web-search", layout: "full", le: "0.9" })).toBe(0);
    expect(sample(text, "serp_parse_coverage_ratio_count", { endpoint: "web-news", layout: "basic" })).toBeGreaterThanOrEqual(1);
    expect(text).toContain("# TYPE serp_webhook_deliveries_total counter");
    expect(text).toContain("process_cpu_seconds_total");
  }, 120_000);

  test("the API exports queue depths per queue and state, read from BullMQ at scrape time, and its HTTP metrics", async () => {
    const { auth } = await stack.account(5);
    const live = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: "tea" }, queue: "live" });
    expect(live.status).toBe(200);
    // With `regular` paused, a job submitted there stays queued: the depth read at scrape time shows it.
    await stack.api.queues.regular.pause();
    try {
      await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: "tea" }, queue: "regular" });
      const res = await request(stack.api.app).get("/metrics");
      expect(res.status).toBe(200);
      expect(res.headers["content-type"]).toMatch(/^text\/plain/);
      for (const queue of ["live", "fast", "regular"]) {
        for (const state of ["waiting", "prioritized", "delayed", "active", "completed", "failed"]) {
          expect(sample(res.text, "serp_queue_jobs", { queue, state, app: "api" })).toEqual(expect.any(Number));
        }
      }
      // Every job carries its account's fair-share priority (docs/FAIRNESS.md): BullMQ counts it as prioritized.
      expect(sample(res.text, "serp_queue_jobs", { queue: "regular", state: "prioritized" })).toBe(1);
      expect(sample(res.text, "serp_queue_jobs", { queue: "live", state: "completed" })).toBeGreaterThanOrEqual(1);
      expect(sample(res.text, "serp_http_requests_total", { route: "/v1/jobs", method: "POST", status: "202" })).toBeGreaterThanOrEqual(1);
      for (const name of ["serp_jobs_total", "serp_job_latency_seconds", "serp_upstream_responses_total", "serp_credits_charged_total", "serp_webhook_deliveries_total"]) {
        expect(res.text).toContain(`# TYPE ${name} `);
      }
    } finally {
      await stack.api.queues.regular.resume();
    }
  }, 20_000);
});
