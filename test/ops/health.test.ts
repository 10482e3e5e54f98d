/**
 * Liveness and readiness of the API and of a real worker process, on a redis-server the test owns:
 * readiness fails with 503 `unavailable` + Retry-After while Redis is down, and recovers by itself.
 */
import { randomBytes } from "node:crypto";
import request from "supertest";
import { loadEnv } from "@serp/api/env";
import { startDraining } from "../../apps/api/src/ops/readiness.js";
import { createApiRuntime, type ApiRuntime } from "@serp/api/runtime";
import { startReplayServer, type ReplayServer } from "@serp/replay";
import { FIXTURES_DIR, fixturesAvailable, pollUntilFinal, silent } from "../support/stack.js";
import { freePort, spawnService, startOwnRedis, statusOf, waitFor, type OwnRedis, type ServiceProcess, START_BOUND_MS } from "./support.js";

describe("health and readiness", () => {
  let redis: OwnRedis;
  let api: ApiRuntime;
  let worker: ServiceProcess;
  let workerUrl: string;
  let replay: ReplayServer | undefined;

  beforeAll(async () => {
    redis = await startOwnRedis();
    const prefix = `t${randomBytes(5).toString("hex")}`;
    api = await createApiRuntime(loadEnv({ REDIS_URL: redis.url, SERP_PREFIX: prefix, LOG_LEVEL: "silent" }), silent);
    if (fixturesAvailable) replay = await startReplayServer({ dir: FIXTURES_DIR });
    const healthPort = await freePort();
    workerUrl = `http://127.0.0.1:${healthPort}`;
    worker = spawnService("worker", {
      REDIS_URL: redis.url, SERP_PREFIX: prefix, WORKER_QUEUES: "fast,regular", HEALTH_PORT: String(healthPort),
      UPSTREAM_BASE_URL: replay?.url ?? "http://127.0.0.1:9",
    });
    await worker.waitForLog("workers ready", (l) => l.msg === "workers ready", START_BOUND_MS);
  }, 120_000);

  afterAll(async () => {
    await worker?.kill();
    await api?.closers.closeAll(5_000);
    await redis?.destroy();
    await replay?.close();
  });

  test("API: /healthz and /readyz answer 200 while Redis is up", async () => {
    const live = await request(api.app).get("/healthz");
    expect(live.status).toBe(200);
    expect(live.body).toEqual({ status: "ok" });
    const ready = await request(api.app).get("/readyz");
    expect(ready.status).toBe(200);
    // No DATABASE_URL here: ready all the same, and the body says history cannot be read.
    expect(ready.body).toEqual({ status: "ready", history: "not configured", detail: expect.stringContaining("DATABASE_URL") });
    expect(ready.headers["cache-control"]).toBe("no-store");
  });

  test("worker: /healthz and /readyz answer 200 while Redis is up and its workers run", async () => {
    const live = await fetch(`${workerUrl}/healthz`);
    expect(live.status).toBe(200);
    expect(await live.json()).toEqual({ status: "ok" });
    const ready = await fetch(`${workerUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: "ready" });
    expect((await fetch(`${workerUrl}/nope`)).status).toBe(404);
  });

  test("readiness answers 503 unavailable with Retry-After while Redis is down, liveness stays 200, and both recover by themselves", async () => {
    await redis.stop();

    const apiDown = await waitFor("API /readyz 503", async () => {
      const res = await request(api.app).get("/readyz");
      return res.status === 503 ? res : undefined;
    });
    expect(apiDown.body.error).toMatchObject({ code: "unavailable", message: expect.any(String) });
    expect(Number(apiDown.headers["retry-after"])).toBeGreaterThan(0);
    expect((await request(api.app).get("/healthz")).status).toBe(200);

    const workerDown = await waitFor("worker /readyz 503", async () => {
      const res = await fetch(`${workerUrl}/readyz`);
      return res.status === 503 ? res : undefined;
    });
    expect(Number(workerDown.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(await workerDown.json()).toEqual({ error: { code: "unavailable", message: "Redis is unreachable" } });
    expect(await statusOf(`${workerUrl}/healthz`)).toBe(200);

    // A job submission fails fast meanwhile instead of hanging.
    const started = Date.now();
    expect((await request(api.app).post("/v1/jobs").set("Authorization", "Bearer sk_live_00000000000000000000000000000000").send({})).status).toBe(503);
    expect(Date.now() - started).toBeLessThan(3_000);

    await redis.start();
    await waitFor("API /readyz 200 again", async () => (await request(api.app).get("/readyz")).status === 200, 15_000, 200);
    await waitFor("worker /readyz 200 again", async () => (await statusOf(`${workerUrl}/readyz`)) === 200, 15_000, 200);

    // Ready means taking jobs again: one submitted now is worked by the same worker process.
    if (!replay) return;
    const acct = await api.accounts.create("after-outage");
    const { key } = await api.accounts.createKey(acct.id);
    await api.accounts.grant(acct.id, 2, "test");
    const auth = `Bearer ${key}`;
    const res = await request(api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: "coffee" }, queue: "fast" });
    expect(res.status).toBe(202);
    const final = await pollUntilFinal(() => request(api.app).get(`/v1/jobs/${res.body.job.id}`).set("Authorization", auth), 15_000);
    expect(final.body.job).toMatchObject({ status: "completed", credits: 1 });
  }, 45_000);

  test("API readiness answers 503 once the process is shutting down", async () => {
    startDraining(api.ctx);
    const res = await request(api.app).get("/readyz");
    expect(res.status).toBe(503);
    expect(res.body.error.code).toBe("unavailable");
    expect(res.headers["retry-after"]).toBeDefined();
    expect((await request(api.app).get("/healthz")).status).toBe(200);
  });

  test("an idle worker process stops cleanly on SIGTERM", async () => {
    worker.child.kill("SIGTERM");
    const { code } = await worker.exited;
    expect(code).toBe(0);
    expect(worker.logs.some((l) => l.msg === "stopped" && l.clean === true)).toBe(true);
  }, 20_000);
});
