/**
 * Benchmark 5: Redis memory per retained completed job. The job record against the size of its
 * result JSON; then everything the stack holds in Redis per job with pages kept (issue 27): every
 * key of the stack's prefix (`MEMORY USAGE`) over the jobs, with the page store (a folder) holding
 * the pages' and the results' bytes, against the same jobs with each result put back into its job
 * record (as results were kept before they moved beside the pages) and then each page's bytes put
 * back into its page record too (as every page was kept in Redis before the page store). Also
 * Redis's own `used_memory` grown per job over the same steps (the view from outside: allocator
 * overhead included; meaningful on a Redis of its own, as `npm run bench` gives it).
 */
import request from "supertest";
import type { Redis } from "ioredis";
import { openPageBlobs, rawPagesEnv } from "@serp/store";
import { startStack, type Stack } from "../test/support/stack.js";
import { fmt, runIfMain, type Row } from "./lib.js";

/** Target of issue 27: Redis per retained job, pages on, for the hot window. */
const TARGET_BYTES = 8 * 1024;

/** Bytes of every key of the stack's (its own and BullMQ's `{prefix}`), by what they hold. */
async function stackBytes(stack: Stack): Promise<{ total: number; jobs: number; pages: number; queues: number; other: number }> {
  const out = { total: 0, jobs: 0, pages: 0, queues: 0, other: 0 };
  for (const pattern of [`${stack.prefix}:*`, `{${stack.prefix}}:*`]) {
    let cursor = "0";
    do {
      const [next, keys] = await stack.redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
      cursor = next;
      for (const key of keys) {
        const bytes = Number(await stack.redis.memory("USAGE", key, "SAMPLES", 0));
        out.total += bytes;
        if (key.startsWith(`${stack.prefix}:job:`)) out.jobs += bytes;
        else if (key.startsWith(`${stack.prefix}:raw`)) out.pages += bytes;
        else if (key.startsWith(`{${stack.prefix}}`)) out.queues += bytes;
        else out.other += bytes;
      }
    } while (cursor !== "0");
  }
  return out;
}

async function usedMemory(redis: Redis): Promise<number> {
  return Number(/used_memory:(\d+)/.exec(await redis.info("memory"))![1]);
}

export async function benchMemory(n = 100): Promise<Row[]> {
  const stack = await startStack({
    workerQueues: ["live"],
    concurrency: 8,
    replay: { page: "web/coffee-desktop-2023.html" },
    // Pages kept (the default hour) in the stack's own folder.
    env: { RATE_LIMIT_PER_MINUTE: "100000000", MAX_JOBS_IN_FLIGHT: "100000000", RAW_HTML_RETENTION_SECONDS: "3600" },
  });
  try {
    const { auth } = await stack.account(n + 10);
    const ids: string[] = [];
    let resultBytes = 0;
    const start = await usedMemory(stack.redis);
    const empty = await stackBytes(stack);
    for (let i = 0; i < n; i++) {
      const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: "coffee" }, queue: "live" });
      ids.push(res.body.job.id);
      resultBytes += Buffer.byteLength(JSON.stringify(res.body.result));
    }
    // Every page kept (the worker keeps it just after the job settles).
    const pages = stack.worker!.rawPages;
    for (const id of ids) for (let i = 0; i < 200 && !(await stack.redis.exists(`${stack.prefix}:raw:${id}`)); i++) await new Promise((r) => setTimeout(r, 10));
    let recordBytes = 0;
    for (const id of ids) recordBytes += Number(await stack.redis.memory("USAGE", `${stack.prefix}:job:${id}`, "SAMPLES", 0));
    const after = await stackBytes(stack);
    const afterUsed = (await usedMemory(stack.redis)) - start;
    // What the results take in the store instead (brotli), read as a second process would.
    let storedResultBytes = 0;
    const resultBlobs = openPageBlobs(rawPagesEnv.parse({ RAW_PAGES_DIR: stack.rawPagesDir }), "results");
    for (const id of ids) storedResultBytes += (await resultBlobs.get((await stack.redis.hget(`${stack.prefix}:job:${id}`, "resultLoc"))!))!.length;
    resultBlobs.close();
    // The same jobs as results were kept before they moved beside the pages: each in its job record.
    const jobs = stack.api.jobs;
    for (const id of ids) {
      const { result } = (await jobs.get(id))!;
      await stack.redis.multi().hset(`${stack.prefix}:job:${id}`, "result", JSON.stringify(result)).hdel(`${stack.prefix}:job:${id}`, "resultLoc").exec();
    }
    const resultsIn = await stackBytes(stack);
    // And as pages were kept before the page store: the bytes in each page's record.
    for (const id of ids) await stack.redis.hset(`${stack.prefix}:raw:${id}`, "data", (await pages.compressed(id))!.data);
    const before = await stackBytes(stack);
    const beforeUsed = (await usedMemory(stack.redis)) - start;

    const perJob = recordBytes / n;
    const perResult = resultBytes / n;
    const per = (b: { total: number }) => (b.total - empty.total) / n;
    const [afterJob, beforeJob] = [per(after), per(before)];
    const kib = (bytes: number) => `${fmt(bytes / 1024, 2)} KiB`;
    console.log(`memory: ${fmt(perJob / 1024)} KiB per retained job record vs ${fmt(perResult / 1024)} KiB of result JSON`);
    console.log(
      `memory with pages kept, ${n} jobs: ${kib(afterJob)} per job in Redis with pages and results in the page store ` +
        `(job record ${kib(after.jobs / n)}, page record ${kib(after.pages / n)}, BullMQ ${kib((after.queues - empty.queues) / n)}, other ${kib((after.other - empty.other) / n)}) ` +
        `vs ${kib(per(resultsIn))} with the results in their job records (job record ${kib(resultsIn.jobs / n)}) ` +
        `vs ${kib(beforeJob)} with the pages in Redis too (page record ${kib(before.pages / n)}): x${fmt(afterJob / beforeJob, 3)}; ` +
        `used_memory grew ${kib(afterUsed / n)} per job vs ${kib(beforeUsed / n)}; ` +
        `each result takes ${kib(storedResultBytes / n)} in the result store (brotli of ${kib(perResult)} of JSON)`,
    );
    return [
      {
        benchmark: "5. Redis memory per retained job",
        measured: `${fmt(perJob / 1024)} KiB`,
        baseline: `${fmt(perResult / 1024)} KiB (result JSON)`,
        ratio: `x${fmt(perJob / perResult, 2)}`,
        target: "report",
        met: null,
      },
      {
        benchmark: "5. Redis per retained job, pages kept (all keys)",
        measured: `${kib(afterJob)} (page store: a folder)`,
        baseline: `${kib(beforeJob)} (pages and results in Redis, as before)`,
        ratio: `x${fmt(afterJob / beforeJob, 3)}`,
        target: `<= ${kib(TARGET_BYTES)}`,
        met: afterJob <= TARGET_BYTES,
      },
      {
        benchmark: "5. Redis per retained job: the page's share",
        measured: `${kib(after.pages / n)} (where it is)`,
        baseline: `${kib(before.pages / n)} (the page in Redis, as before)`,
        ratio: `x${fmt(after.pages / before.pages, 4)}`,
        target: "report",
        met: null,
      },
      {
        benchmark: "5. Redis per retained job: the result's share",
        measured: `${kib(after.jobs / n)} (the job record, its result in the page store)`,
        baseline: `${kib(resultsIn.jobs / n)} (the result in the job record, as before)`,
        ratio: `x${fmt(after.jobs / resultsIn.jobs, 3)}`,
        target: "report",
        met: null,
      },
      {
        benchmark: "5. Redis used_memory grown per job, pages kept",
        measured: kib(afterUsed / n),
        baseline: `${kib(beforeUsed / n)} (pages and results in Redis, as before)`,
        ratio: `x${fmt(afterUsed / beforeUsed, 3)}`,
        target: "report",
        met: null,
      },
    ];
  } finally {
    await stack.close();
  }
}

await runIfMain(import.meta.url, () => benchMemory());
