/**
 * Benchmark 2: live job latency (p50, p99) through the API, a queue and a worker, vs fetching
 * and parsing the same page directly in one process (the work any design must do). The API and
 * the worker are real processes started as `npm start` starts them, with their default settings,
 * so each has its own event loop as deployed; the bench process is the client and the baseline.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createUpstream } from "@serp/upstream";
import { freePort } from "../test/support/redis-server.js";
import { REDIS_URL, startStack } from "../test/support/stack.js";
import { fmt, percentile, runIfMain, type Row } from "./lib.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const PAGE = "web/coffee-desktop-2023.html";

function service(app: "api" | "worker", env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", `apps/${app}/src/index.ts`], { cwd: root, stdio: "ignore", env: { ...process.env, REDIS_URL, ...env } });
}

export async function benchLiveLatency(n = 200): Promise<Row[]> {
  const stack = await startStack({ workerQueues: [], replay: { page: PAGE } });
  const { key } = await stack.account(1_000_000);
  const port = await freePort();
  const common = { SERP_PREFIX: stack.prefix, UPSTREAM_BASE_URL: stack.replay.url };
  const children = [
    service("api", { ...common, PORT: String(port), RATE_LIMIT_PER_MINUTE: "100000000", MAX_JOBS_IN_FLIGHT: "100000000" }),
    service("worker", { ...common, WORKER_QUEUES: "live", WORKER_CONCURRENCY: "4" }),
  ];
  const url = `http://127.0.0.1:${port}/v1/jobs`;
  const direct = createUpstream({ baseUrl: stack.replay.url, timeoutMs: 5_000 });
  const params = { query: "coffee", country: "us" as const, language: "en", page: 1, device: "desktop" as const };
  const body = JSON.stringify({ endpoint: "web-search", params: { query: "coffee" }, queue: "live" });

  const viaService = async () => {
    const t = performance.now();
    const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body });
    const json = (await res.json()) as { job: { status: string } };
    if (json.job?.status !== "completed") throw new Error(`live job ended ${JSON.stringify(json).slice(0, 200)}`);
    return performance.now() - t;
  };
  const viaDirect = async () => {
    const t = performance.now();
    await direct.scrape("web-search", params);
    return performance.now() - t;
  };
  try {
    for (let ready = false; !ready; ) {
      ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false);
      if (!ready) await new Promise((r) => setTimeout(r, 100));
    }
    // Warm both paths (the first live request also waits for the worker to connect).
    for (let i = 0; i < 30; i++) {
      await viaService();
      await viaDirect();
    }
    // One request at a time, alternating, so both see the same machine.
    const measured: number[] = [];
    const baseline: number[] = [];
    for (let i = 0; i < n; i++) {
      measured.push(await viaService());
      baseline.push(await viaDirect());
    }
    measured.sort((a, b) => a - b);
    baseline.sort((a, b) => a - b);
    const [s50, s99, b50, b99] = [percentile(measured, 50), percentile(measured, 99), percentile(baseline, 50), percentile(baseline, 99)];
    console.log(`live latency: service p50 ${fmt(s50)} ms p99 ${fmt(s99)} ms; direct p50 ${fmt(b50)} ms p99 ${fmt(b99)} ms (n=${n})`);
    return [
      { benchmark: "2. live latency p50", measured: `${fmt(s50)} ms`, baseline: `${fmt(b50)} ms (fetch+parse in one process)`, ratio: `+${fmt(s50 - b50)} ms`, target: "<= +5 ms", met: s50 - b50 <= 5 },
      { benchmark: "2. live latency p99", measured: `${fmt(s99)} ms`, baseline: `${fmt(b99)} ms (fetch+parse in one process)`, ratio: `+${fmt(s99 - b99)} ms`, target: "<= +25 ms", met: s99 - b99 <= 25 },
    ];
  } finally {
    for (const c of children) c.kill("SIGTERM");
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once("exit", r)))));
    await direct.close();
    await stack.close();
  }
}

await runIfMain(import.meta.url, () => benchLiveLatency());
