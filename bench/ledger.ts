/**
 * Benchmark: the ledger's drain lag under the submissions benchmark's load (POST /v1/jobs on the
 * fast queue, 32 connections), with workers serving the fast queue so every job settles, appending
 * its charge to the Redis stream, and the worker's drainer copying the stream into PostgreSQL. The
 * lag (age of the oldest entry not yet in PostgreSQL, as /metrics exports it) is sampled every 50 ms
 * while the load runs and as long again after it (the workers are still settling the backlog); also
 * each entry's delay from settlement to commit.
 * Needs DATABASE_URL (`npm run bench` starts a private PostgreSQL).
 */
import { createServer } from "node:http";
import { createMetrics } from "@serp/metrics";
import { LedgerDrainer, createPgPool, keySpace } from "@serp/store";
import { startStack } from "../test/support/stack.js";
import { fmt, listen, load, percentile, runIfMain, type Row } from "./lib.js";

export async function benchLedger(durationS = 9): Promise<Row> {
  if (!process.env.DATABASE_URL) throw new Error("bench/ledger.ts needs DATABASE_URL (npm run bench starts a private PostgreSQL)");
  const metrics = createMetrics("worker");
  const stack = await startStack({
    workerQueues: ["fast"],
    concurrency: 16,
    // As deployed (PARSE_THREADS=1): parsing beside the event loop the drainer shares.
    parseThreads: 1,
    workerMetrics: metrics,
    env: { RATE_LIMIT_PER_MINUTE: "1000000000", MAX_JOBS_IN_FLIGHT: "1000000000", JOB_RETENTION_SECONDS: "120" },
  });
  const { key, accountId } = await stack.account(100_000_000);
  const apiServer = createServer(stack.api.app);
  const apiUrl = await listen(apiServer);
  const keys = keySpace(stack.prefix);
  const pool = createPgPool(stack.databaseUrl!, "bench-ledger", () => undefined);
  // Reads the stream's state only; the stack's worker does the draining.
  const probe = new LedgerDrainer(stack.redis, keys, pool);

  const lags: number[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      lags.push((await probe.state()).lagSeconds);
      await new Promise((r) => setTimeout(r, 50));
    }
  })();
  const body = JSON.stringify({ endpoint: "web-search", params: { query: "coffee" }, queue: "fast" });
  const headers = { "content-type": "application/json", authorization: `Bearer ${key}` };
  const api = await load({ url: `${apiUrl}/v1/jobs`, method: "POST", body, headers, duration: durationS });
  if (api.non2xx || api.errors) throw new Error(`ledger benchmark saw ${api.non2xx} non-2xx and ${api.errors} errors`);
  // The workers settle far fewer jobs a second than the API accepts: they keep settling (and the
  // drainer draining) for a while after the load; sampled for as long again, then the rest is dropped.
  await new Promise((r) => setTimeout(r, durationS * 1_000));
  sampling = false;
  await sampler;
  await stack.api.queues.fast.pause();
  const drained = Number((await pool.query<{ n: string }>("SELECT count(*) AS n FROM ledger WHERE account_id = $1 AND type <> 'grant'", [accountId])).rows[0]!.n);
  const hist = (await metrics.ledgerDrainDelay.get()).values;
  const count = hist.find((v) => v.metricName?.endsWith("_count"))?.value ?? 0;
  // The smallest bucket holding 99% of the entries' delays.
  const p99Bucket = hist
    .filter((v) => v.metricName?.endsWith("_bucket") && v.value >= 0.99 * count)
    .map((v) => Number(v.labels.le))
    .sort((a, b) => a - b)[0];

  await pool.end();
  await new Promise((ok) => apiServer.close(ok));
  await stack.close();

  const sorted = [...lags].sort((a, b) => a - b);
  const p50 = percentile(sorted, 50);
  const p99 = percentile(sorted, 99);
  console.log(
    `ledger: ${fmt(api.rps, 0)} submissions/s for ${durationS} s, ${drained} charges and refunds drained; ` +
      `drain lag p50 ${fmt(p50, 2)} s, p99 ${fmt(p99, 2)} s, max ${fmt(sorted.at(-1) ?? NaN, 2)} s over ${lags.length} samples; 99% of entries committed within ${p99Bucket} s`,
  );
  return {
    benchmark: "11. ledger drain lag p99 under the submissions load",
    measured: `${fmt(p99, 2)} s (p50 ${fmt(p50, 2)} s; 99% of entries ≤ ${p99Bucket} s)`,
    baseline: `${drained} entries, ${fmt(api.rps, 0)} submissions/s`,
    ratio: "-",
    target: "<= 1 s",
    met: p99 <= 1,
  };
}

await runIfMain(import.meta.url, () => benchLedger());
