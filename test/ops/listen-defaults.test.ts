/**
 * Safe defaults (issue 27): the API and a worker's health port listen on 127.0.0.1 unless HOST says
 * otherwise, and log the address they really listen on; METRICS_TOKEN closes /metrics (401 without
 * it, on the API and on the worker); METRICS_PORT moves the API's /metrics to a port of its own.
 * Real API and worker processes, started as `npm start` starts them, on the test run's Redis.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readEnvFile } from "../../scripts/env-file.mjs";
import { REDIS_URL } from "../support/stack.js";
import { freePort, spawnService, type ServiceProcess, START_BOUND_MS } from "./support.js";

const TOKEN = "metrics-token-0123456789abcdef";
const prefix = `t${Date.now().toString(36)}`;
const started: ServiceProcess[] = [];
afterAll(async () => {
  for (const p of started) await p.kill();
});

function start(app: "api" | "worker", env: Record<string, string>): ServiceProcess {
  const p = spawnService(app, { REDIS_URL, SERP_PREFIX: prefix, ...env });
  started.push(p);
  return p;
}

const get = (url: string, token?: string) => fetch(url, token ? { headers: { authorization: `Bearer ${token}` } } : {});

test("the API without HOST: on 127.0.0.1, said as it is; /metrics needs METRICS_TOKEN", async () => {
  const port = await freePort();
  const api = start("api", { PORT: String(port), METRICS_TOKEN: TOKEN });
  const line = await api.waitForLog("API listening", (l) => String(l.msg).startsWith("API listening"), START_BOUND_MS);
  expect(line).toMatchObject({ address: "127.0.0.1", port, msg: `API listening on http://127.0.0.1:${port}` });

  const base = `http://127.0.0.1:${port}`;
  const open = await get(`${base}/metrics`);
  expect(open.status).toBe(401);
  expect(open.headers.get("www-authenticate")).toMatch(/^Basic realm="serp metrics"/);
  expect((await get(`${base}/metrics`, "metrics-token-0123456789abcdeX")).status).toBe(401);
  const basic = await fetch(`${base}/metrics`, { headers: { authorization: `Basic ${Buffer.from(`prometheus:${TOKEN}`).toString("base64")}` } });
  expect(basic.status).toBe(200);
  const scraped = await get(`${base}/metrics`, TOKEN);
  expect(scraped.status).toBe(200);
  expect(await scraped.text()).toMatch(/^# HELP /m);
  // Only /metrics is closed: the probes stay open for orchestrators.
  expect((await get(`${base}/healthz`)).status).toBe(200);
}, 120_000);

test("HOST=0.0.0.0 is said as 0.0.0.0, with a warning for an open /metrics; METRICS_PORT serves it apart", async () => {
  const [port, metricsPort] = [await freePort(), await freePort()];
  const api = start("api", { PORT: String(port), HOST: "0.0.0.0", METRICS_PORT: String(metricsPort) });
  const line = await api.waitForLog("API listening", (l) => String(l.msg).startsWith("API listening"), START_BOUND_MS);
  expect(line).toMatchObject({ address: "0.0.0.0", port, msg: `API listening on http://0.0.0.0:${port}` });
  await api.waitForLog("metrics listening", (l) => String(l.msg).startsWith("metrics on"), 10_000);
  // /metrics moved away: the API's port no longer has it, so no open-metrics warning either.
  expect(api.logs.some((l) => String(l.msg).startsWith("GET /metrics is open"))).toBe(false);
  expect((await get(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
  const scraped = await get(`http://127.0.0.1:${metricsPort}/metrics`);
  expect(scraped.status).toBe(200);
  expect(await scraped.text()).toMatch(/serp_http_requests_total|# HELP /);
  expect((await get(`http://127.0.0.1:${metricsPort}/v1/jobs`)).status).toBe(404);

  const other = await freePort();
  const openApi = start("api", { PORT: String(other), HOST: "0.0.0.0" });
  await openApi.waitForLog("open /metrics warning", (l) => String(l.msg).startsWith("GET /metrics is open"), START_BOUND_MS);
}, 180_000);

test("a worker's health port: on 127.0.0.1 without HOST, said as it is; /metrics needs METRICS_TOKEN", async () => {
  const port = await freePort();
  const worker = start("worker", { HEALTH_PORT: String(port), WORKER_QUEUES: "fast", METRICS_TOKEN: TOKEN, UPSTREAM_BASE_URL: "http://127.0.0.1:9" });
  const line = await worker.waitForLog("health server", (l) => String(l.msg).startsWith("health server listening"), START_BOUND_MS);
  expect(line).toMatchObject({ address: "127.0.0.1", port, msg: `health server listening on http://127.0.0.1:${port}` });
  const base = `http://127.0.0.1:${port}`;
  expect((await get(`${base}/metrics`)).status).toBe(401);
  expect((await get(`${base}/metrics`, TOKEN)).status).toBe(200);
  expect((await get(`${base}/healthz`)).status).toBe(200);
}, 120_000);

describe("npm start's .env (scripts/env-file.mjs)", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "serp-dotenv-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test("sets what the environment lacks; the environment wins over .env", async () => {
    writeFileSync(join(dir, ".env"), ["# a comment", "PORT=4000", "HOST=0.0.0.0", 'API_KEY="sk_live_from_dotenv_123"', "EMPTY=", ""].join("\n"));
    const env: Record<string, string | undefined> = { PORT: "5000" };
    expect(await readEnvFile(dir, env)).toEqual({ path: join(dir, ".env"), applied: ["HOST", "API_KEY", "EMPTY"], overridden: ["PORT"] });
    expect(env).toEqual({ PORT: "5000", HOST: "0.0.0.0", API_KEY: "sk_live_from_dotenv_123", EMPTY: "" });
  });

  test("no .env: nothing read, nothing said", async () => {
    const env: Record<string, string | undefined> = {};
    expect(await readEnvFile(dir, env)).toBeUndefined();
    expect(env).toEqual({});
  });
});
