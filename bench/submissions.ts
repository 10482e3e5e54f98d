/**
 * Benchmark 1: async submissions accepted per second (POST /v1/jobs on the fast queue, 202)
 * vs a bare Express endpoint doing one Redis write, both on loopback against the same Redis.
 */
import { createServer } from "node:http";
import express from "express";
import { Redis } from "ioredis";
import { startStack } from "../test/support/stack.js";
import { fmt, listen, load, runIfMain, type Row } from "./lib.js";

export async function benchSubmissions(durationS = 9): Promise<Row> {
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  // Baseline: the least an HTTP endpoint that stores a submission can do.
  const redis = new Redis(redisUrl);
  const bare = express();
  bare.use(express.json());
  let n = 0;
  bare.post("/baseline", async (req, res) => {
    await redis.set(`bench:baseline:${n++}`, JSON.stringify(req.body), "EX", 60);
    res.status(202).json({ ok: true });
  });
  const bareServer = createServer(bare);
  const bareUrl = await listen(bareServer);

  const stack = await startStack({
    workerQueues: [],
    env: { RATE_LIMIT_PER_MINUTE: "1000000000", MAX_JOBS_IN_FLIGHT: "1000000000", JOB_RETENTION_SECONDS: "120" },
  });
  const { key } = await stack.account(100_000_000);
  const apiServer = createServer(stack.api.app);
  const apiUrl = await listen(apiServer);

  const body = JSON.stringify({ endpoint: "web-search", params: { query: "coffee" }, queue: "fast" });
  const headers = { "content-type": "application/json", authorization: `Bearer ${key}` };
  // Warm both up, then alternate short rounds so both see the same machine load; report medians.
  const bareLoad = (duration: number) => load({ url: `${bareUrl}/baseline`, method: "POST", body, headers, duration });
  const apiLoad = (duration: number) => load({ url: `${apiUrl}/v1/jobs`, method: "POST", body, headers, duration });
  await bareLoad(1);
  await apiLoad(1);
  const rounds: { base: number; api: number }[] = [];
  let api = { rps: 0, p50: 0, p99: 0, non2xx: 0, errors: 0 };
  for (let i = 0; i < 3; i++) {
    const b = await bareLoad(durationS / 3);
    api = await apiLoad(durationS / 3);
    if (api.non2xx || api.errors) throw new Error(`submissions benchmark saw ${api.non2xx} non-2xx and ${api.errors} errors`);
    rounds.push({ base: b.rps, api: api.rps });
  }
  const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)]!;
  const base = { rps: median(rounds.map((r) => r.base)) };
  const ratio = median(rounds.map((r) => r.api / r.base));
  api.rps = median(rounds.map((r) => r.api));

  await new Promise((ok) => apiServer.close(ok));
  await new Promise((ok) => bareServer.close(ok));
  await stack.close();
  const keys = await redis.keys("bench:baseline:*");
  for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
  redis.disconnect();

  console.log(`submissions: api ${fmt(api.rps)} req/s (p50 ${api.p50} ms, p99 ${api.p99} ms, non-2xx ${api.non2xx}); baseline ${fmt(base.rps)} req/s`);
  return {
    benchmark: "1. async submissions accepted/s",
    measured: `${fmt(api.rps, 0)} req/s`,
    baseline: `${fmt(base.rps, 0)} req/s (bare Express + 1 Redis write)`,
    ratio: `${fmt(ratio * 100, 0)}%`,
    target: ">= 50% of baseline",
    met: ratio >= 0.5,
  };
}

await runIfMain(import.meta.url, () => benchSubmissions());
