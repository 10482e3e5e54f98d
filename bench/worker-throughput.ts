/**
 * Benchmark 3: worker throughput with the replay upstream answering after a fixed delay L at
 * worker concurrency C, vs the limit C/L; then with two worker processes (limit 2C/L).
 * Workers run as real processes (`apps/worker/src/index.ts`), as in production.
 */
import { spawn, type ChildProcess } from "node:child_process";
import os from "node:os";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { Queue } from "bullmq";
import { RESERVED_CREDITS, newJobId } from "@serp/shared";
import { QUEUE_CATALOG } from "@serp/store";
import { childEnv, startStack, type Stack } from "../test/support/stack.js";
import { cpuSeconds, fmt, runIfMain, type Row } from "./lib.js";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
// A small real page, so parsing stays far below the delay and the queue path is what is measured.
const PAGE = "web-nojs/fatmira-brecani-basic-2022-wayback.html";

function worker(stack: Stack, concurrency: number): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", "apps/worker/src/index.ts"], {
    cwd: root,
    stdio: "ignore",
    env: childEnv(stack, { WORKER_QUEUES: "regular", WORKER_CONCURRENCY: String(concurrency), UPSTREAM_BASE_URL: stack.replay.url, LOG_LEVEL: "silent" }),
  });
}

interface Throughput {
  /** Jobs over the time from the first enqueue to the last settlement. */
  whole: number;
  /** Jobs per second between the 10th and the 90th percentile of settlement times: the sustained rate, without the start (every slot's first fetch leaves at once) and the tail (fewer jobs than slots). */
  sustained: number;
  /** Cores the worker processes kept busy, and the bench process (client, replay upstream), over the run. */
  cores: { workers: number; bench: number };
}

async function run(stack: Stack, processes: number, concurrency: number, jobs: number): Promise<Throughput> {
  const { accountId } = await stack.account(jobs + 10);
  const queue = new Queue("regular", { connection: stack.redis, prefix: `{${stack.prefix}}` });
  const children = Array.from({ length: processes }, () => worker(stack, concurrency));
  // Let the processes connect before the clock starts.
  await new Promise((r) => setTimeout(r, 4_000));
  const ids: string[] = [];
  for (let i = 0; i < jobs; i++) {
    const id = newJobId();
    ids.push(id);
    await stack.api.jobs.create(
      { id, accountId, endpoint: "web-search", queue: "regular", params: { query: "fatmira", country: "us", language: "en", page: 1, device: "desktop" }, createdAt: new Date().toISOString() },
      RESERVED_CREDITS,
    );
  }
  const started = performance.now();
  const workerCpu = () => children.reduce((sum, c) => sum + cpuSeconds(c.pid), 0);
  const [workers0, bench0] = [workerCpu(), process.cpuUsage()];
  await queue.addBulk(ids.map((jobId) => ({ name: "web-search", data: { jobId }, opts: { ...QUEUE_CATALOG.regular.jobOptions, jobId } })));
  for (;;) {
    const acct = await stack.api.accounts.get(accountId);
    if (acct!.reserved === 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const seconds = (performance.now() - started) / 1000;
  const benchUsage = process.cpuUsage(bench0);
  const cores = { workers: (workerCpu() - workers0) / seconds, bench: (benchUsage.user + benchUsage.system) / 1e6 / seconds };
  for (const c of children) c.kill("SIGTERM");
  await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once("exit", r)))));
  await queue.close();
  const records = await Promise.all(ids.map((id) => stack.api.jobs.get(id)));
  const failed = records.filter((r) => r?.job.status !== "completed").length;
  if (failed) throw new Error(`${failed} throughput jobs did not complete`);
  const settled = records.map((r) => Date.parse(r!.job.completedAt!)).sort((a, b) => a - b);
  const [lo, hi] = [Math.floor(jobs * 0.1), Math.floor(jobs * 0.9)];
  return { whole: jobs / seconds, sustained: (hi - lo) / ((settled[hi]! - settled[lo]!) / 1000), cores };
}

export async function benchWorkerThroughput(latencyMs = 200, concurrency = 10, jobs = 500): Promise<Row[]> {
  const stack = await startStack({ workerQueues: [], replay: { page: PAGE, faults: { latencyMs } } });
  const limit = concurrency / (latencyMs / 1000);
  const one = await run(stack, 1, concurrency, jobs);
  const two = await run(stack, 2, concurrency, jobs * 2);
  await stack.close();
  const pct = (rate: number, max: number) => `${fmt((rate / max) * 100, 0)}%`;
  console.log(
    `worker throughput: 1 process ${fmt(one.sustained)} jobs/s sustained, ${fmt(one.whole)} over the whole run (limit ${fmt(limit)}); ` +
      `2 processes ${fmt(two.sustained)} sustained, ${fmt(two.whole)} whole (limit ${fmt(2 * limit)})`,
  );
  const busy = (t: Throughput) => `workers ${fmt(t.cores.workers, 2)}, bench ${fmt(t.cores.bench, 2)}`;
  console.log(`  cores busy (of ${os.cpus().length}): 1 process: ${busy(one)}; 2 processes: ${busy(two)}`);
  return [
    {
      benchmark: `3. worker throughput, 1 process, C=${concurrency}, L=${latencyMs} ms, ${jobs} jobs`,
      measured: `${fmt(one.sustained)} jobs/s sustained (${fmt(one.whole)} whole run)`,
      baseline: `${fmt(limit)} jobs/s (C/L)`,
      ratio: `${pct(one.sustained, limit)} (${pct(one.whole, limit)})`,
      target: ">= 90% of C/L",
      met: one.sustained >= 0.9 * limit,
    },
    {
      benchmark: `3. worker throughput, 2 processes, ${2 * jobs} jobs`,
      measured: `${fmt(two.sustained)} jobs/s sustained (${fmt(two.whole)} whole run)`,
      baseline: `${fmt(2 * limit)} jobs/s (2C/L); 1 process ${fmt(one.sustained)}`,
      ratio: `${pct(two.sustained, 2 * limit)} (${pct(two.whole, 2 * limit)}), x${fmt(two.sustained / one.sustained, 2)}`,
      target: ">= 90% of 2C/L, grows with processes",
      met: two.sustained >= 0.9 * 2 * limit && two.sustained > one.sustained,
    },
    {
      benchmark: "3. cores busy while it ran",
      measured: `1 process: ${busy(one)}`,
      baseline: `2 processes: ${busy(two)}`,
      ratio: `of ${os.cpus().length} cores`,
      target: "report",
      met: null,
    },
  ];
}

await runIfMain(import.meta.url, () => benchWorkerThroughput());
