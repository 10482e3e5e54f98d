/**
 * Benchmark 8: the result cache. Latency (p50, p99) of a /search.json search answered from the
 * cache vs the same search as a live miss (a query not seen before: the API's look-up, the queue, a
 * worker's claim, the fetch and parse, the fill), one request at a time, alternating, through real
 * API and worker processes as `npm start` runs them, the client on a kept-alive node:http
 * connection. Then Redis memory per cached search: `MEMORY USAGE` of the cache entries of every
 * captured web results page (filled through the service's own ResultCache) vs their result JSON.
 */
import { spawn, type ChildProcess } from "node:child_process";
import os from "node:os";
import { readdirSync, readFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { buildResult, type JobParams } from "@serp/shared";
import { ResultCache, keySpace } from "@serp/store";
import { parsePage } from "@serp/upstream";
import { freePort } from "../test/support/redis-server.js";
import { FIXTURES_DIR, REDIS_URL, startStack } from "../test/support/stack.js";
import { fmt, hostSteal, percentile, runIfMain, type Row } from "./lib.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const PAGE = "web/coffee-desktop-2023.html";

function service(app: "api" | "worker", env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", `apps/${app}/src/index.ts`], { cwd: root, stdio: "ignore", env: { ...process.env, REDIS_URL, ...env } });
}

export async function benchCache(n = 200): Promise<Row[]> {
  // Single-page mode: every query gets the same captured page, so a miss and a hit carry the same result.
  const stack = await startStack({ workerQueues: [], replay: { page: PAGE } });
  const { key } = await stack.account(1_000_000);
  const port = await freePort();
  const common = { SERP_PREFIX: stack.prefix, UPSTREAM_BASE_URL: stack.replay.url };
  const children = [
    service("api", { ...common, PORT: String(port), RATE_LIMIT_PER_MINUTE: "100000000", MAX_JOBS_IN_FLIGHT: "100000000" }),
    service("worker", { ...common, WORKER_QUEUES: "live", WORKER_CONCURRENCY: "4" }),
  ];
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  /** The floor of an authenticated request on this host: /account.json, one Redis read. */
  const floor = () =>
    new Promise<number>((done, fail) => {
      const t = performance.now();
      const req = request(`http://127.0.0.1:${port}/account.json?${new URLSearchParams({ api_key: key })}`, { agent }, (res) => {
        res.resume();
        res.on("end", () => (res.statusCode === 200 ? done(performance.now() - t) : fail(new Error(`account.json ${res.statusCode}`))));
        res.on("error", fail);
      });
      req.on("error", fail);
      req.end();
    });
  const get = (q: string) =>
    new Promise<{ ms: number; cached: boolean; bytes: number }>((done, fail) => {
      const t = performance.now();
      const req = request(`http://127.0.0.1:${port}/search.json?${new URLSearchParams({ q, api_key: key })}`, { agent }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => (text += chunk));
        res.on("end", () => {
          const ms = performance.now() - t;
          const body = JSON.parse(text) as { search_metadata?: { cached?: boolean }; organic_results?: unknown[] };
          if (res.statusCode !== 200 || !body.organic_results?.length) return fail(new Error(`search ended ${res.statusCode}: ${text.slice(0, 200)}`));
          done({ ms, cached: body.search_metadata?.cached === true, bytes: Buffer.byteLength(text) });
        });
        res.on("error", fail);
      });
      req.on("error", fail);
      req.end();
    });

  try {
    for (let ready = false; !ready; ) {
      ready = await fetch(`http://127.0.0.1:${port}/readyz`).then((r) => r.ok, () => false);
      if (!ready) await new Promise((r) => setTimeout(r, 100));
    }
    let miss = 0;
    const fresh = () => `coffee ${miss++}`;
    // Warm both paths (the first live request also waits for the worker to connect); fill the hit's entry.
    for (let i = 0; i < 30; i++) {
      await get(fresh());
      await get("coffee");
    }
    const steal = hostSteal();
    const hits: number[] = [];
    const misses: number[] = [];
    const floors: number[] = [];
    let bytes = 0;
    for (let i = 0; i < n; i++) {
      const m = await get(fresh());
      const h = await get("coffee");
      floors.push(await floor());
      if (m.cached || !h.cached) throw new Error(`expected a miss then a hit, got cached=${m.cached}, ${h.cached}`);
      misses.push(m.ms);
      hits.push(h.ms);
      bytes = h.bytes;
    }
    const stolen = steal();
    hits.sort((a, b) => a - b);
    misses.sort((a, b) => a - b);
    floors.sort((a, b) => a - b);
    const [h50, h99, m50, m99] = [percentile(hits, 50), percentile(hits, 99), percentile(misses, 50), percentile(misses, 99)];
    console.log(`cache: hit p50 ${fmt(h50, 2)} ms p99 ${fmt(h99, 2)} ms; live miss p50 ${fmt(m50, 2)} ms p99 ${fmt(m99, 2)} ms (n=${n}, ${fmt(bytes / 1024)} KiB answers)`);
    console.log(`  floor: GET /account.json (key, one Redis read) p50 ${fmt(percentile(floors, 50), 2)} ms p99 ${fmt(percentile(floors, 99), 2)} ms`);
    console.log(`  host: ${stolen === null ? "CPU steal not reported" : `CPU steal ${(stolen * 100).toFixed(0)}%`}, load average ${os.loadavg()[0]!.toFixed(1)} on ${os.cpus().length} CPUs`);

    // Memory: every captured web results page, as the cache keeps it.
    const cache = new ResultCache(stack.redis, keySpace(stack.prefix), { ttlSeconds: 3600 });
    const dir = join(FIXTURES_DIR, "web");
    let entries = 0;
    let entryBytes = 0;
    let jsonBytes = 0;
    for (const file of readdirSync(dir).filter((f) => f.endsWith(".html"))) {
      const { blocks } = parsePage("web-search", readFileSync(join(dir, file), "utf8"));
      const params: JobParams = { query: file.replace(/-(desktop|mobile).*$/, "").replaceAll("-", " "), country: "us", language: "en", page: 1, device: "desktop" };
      const result = buildResult("web-search", params, blocks);
      const cacheKey = cache.keyOf("web-search", params, "acct_bench");
      await cache.fill(cacheKey, `job_bench${String(entries).padStart(21, "0")}`, result, "https://www.google.com/search?q=x");
      entryBytes += Number(await stack.redis.memory("USAGE", `${stack.prefix}:cache:${cacheKey}`, "SAMPLES", 0));
      jsonBytes += Buffer.byteLength(JSON.stringify(result));
      entries++;
    }
    const perEntry = entryBytes / entries;
    const perJson = jsonBytes / entries;
    console.log(`cache memory: ${fmt(perEntry / 1024, 2)} KiB per cached search vs ${fmt(perJson / 1024, 2)} KiB of result JSON (${entries} captured web pages)`);
    return [
      {
        benchmark: "8. cache hit latency p50 (/search.json)",
        measured: `${fmt(h50, 2)} ms`,
        baseline: `${fmt(m50, 2)} ms (live miss)`,
        ratio: `x${fmt(m50 / h50, 1)} faster`,
        target: "<= 10 ms",
        met: h50 <= 10,
      },
      {
        benchmark: "8. cache hit latency p99 (/search.json)",
        measured: `${fmt(h99, 2)} ms`,
        baseline: `${fmt(m99, 2)} ms (live miss)`,
        ratio: `x${fmt(m99 / h99, 1)} faster`,
        target: "<= 25 ms",
        met: h99 <= 25,
      },
      {
        benchmark: "8. Redis memory per cached search",
        measured: `${fmt(perEntry / 1024, 2)} KiB`,
        baseline: `${fmt(perJson / 1024, 2)} KiB (result JSON)`,
        ratio: `x${fmt(perEntry / perJson, 2)}`,
        target: "report",
        met: null,
      },
    ];
  } finally {
    for (const c of children) c.kill("SIGTERM");
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once("exit", r)))));
    agent.destroy();
    await stack.close();
  }
}

await runIfMain(import.meta.url, () => benchCache());
