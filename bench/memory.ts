/** Benchmark 5: Redis memory per retained completed job vs the size of its result JSON. */
import request from "supertest";
import { startStack } from "../test/support/stack.js";
import { fmt, runIfMain, type Row } from "./lib.js";

export async function benchMemory(n = 100): Promise<Row> {
  const stack = await startStack({
    workerQueues: ["live"],
    concurrency: 8,
    replay: { page: "web/coffee-desktop-2023.html" },
    env: { RATE_LIMIT_PER_MINUTE: "100000000", MAX_JOBS_IN_FLIGHT: "100000000" },
  });
  const { auth } = await stack.account(n + 10);
  const ids: string[] = [];
  let resultBytes = 0;
  for (let i = 0; i < n; i++) {
    const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: "coffee" }, queue: "live" });
    ids.push(res.body.job.id);
    resultBytes += Buffer.byteLength(JSON.stringify(res.body.result));
  }
  let recordBytes = 0;
  for (const id of ids) recordBytes += Number(await stack.redis.memory("USAGE", `${stack.prefix}:job:${id}`, "SAMPLES", 0));
  await stack.close();
  const perJob = recordBytes / n;
  const perResult = resultBytes / n;
  console.log(`memory: ${fmt(perJob / 1024)} KiB per retained job vs ${fmt(perResult / 1024)} KiB of result JSON`);
  return {
    benchmark: "5. Redis memory per retained job",
    measured: `${fmt(perJob / 1024)} KiB`,
    baseline: `${fmt(perResult / 1024)} KiB (result JSON)`,
    ratio: `x${fmt(perJob / perResult, 2)}`,
    target: "report",
    met: null,
  };
}

await runIfMain(import.meta.url, () => benchMemory());
