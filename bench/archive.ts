/**
 * Benchmark 10: the job archive. Completed web-search jobs are archived in PostgreSQL with their
 * ledger entries; past the hot window (JOB_HOT_SECONDS; here its end is brought forward with a
 * PEXPIRE, as if the hour had passed) only the archive holds them. Reports:
 * - Redis memory per job after the hot window (target: nothing left of the result), vs while hot;
 * - PostgreSQL bytes per archived record (TOAST-compressed JSONB) vs its result JSON;
 * - GET /v1/jobs/{id} p50/p99 for an archived job vs a hot one, over real HTTP on loopback
 *   (target: archived ≤ 5 ms p50).
 * Needs DATABASE_URL (npm run bench starts a private PostgreSQL when it is unset).
 */
import { Agent, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import request from "supertest";
import { pollUntilFinal, startStack } from "../test/support/stack.js";
import { fmt, percentile, runIfMain, type Row } from "./lib.js";

export async function benchArchive(n = 50, reads = 400): Promise<Row[]> {
  if (!process.env.DATABASE_URL) throw new Error("bench/archive.ts needs DATABASE_URL (npm run bench starts a private PostgreSQL)");
  const stack = await startStack({
    workerQueues: ["fast"],
    concurrency: 8,
    replay: { page: "web/coffee-desktop-2023.html" },
    env: { RATE_LIMIT_PER_MINUTE: "100000000", MAX_JOBS_IN_FLIGHT: "100000000" },
  });
  const server = stack.api.app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  const db = stack.api.pg!; // the API's own pool on the stack's schema
  try {
    const { auth } = await stack.account(n + 10);
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: "coffee" }, queue: "fast" });
      ids.push(res.body.job.id);
    }
    let resultBytes = 0;
    for (const id of ids) {
      const done = await pollUntilFinal(() => request(stack.api.app).get(`/v1/jobs/${id}`).set("Authorization", auth), 60_000);
      resultBytes += Buffer.byteLength(JSON.stringify(done.body.result));
    }
    // Every job archived (the drainer runs within a second of each settlement).
    for (let i = 0; i < 200; i++) {
      const { rows } = await db.query<{ n: string }>("SELECT count(*) AS n FROM job_archive WHERE id = ANY($1)", [ids]);
      if (Number(rows[0]!.n) === n) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const { rows: sizes } = await db.query<{ bytes: string; json: string }>(
      "SELECT sum(pg_column_size(record)) AS bytes, sum(length(record::text)) AS json FROM job_archive WHERE id = ANY($1)",
      [ids],
    );
    const pgBytes = Number(sizes[0]!.bytes) / n;
    const recordJson = Number(sizes[0]!.json) / n;

    const jobKey = (id: string) => `${stack.prefix}:job:${id}`;
    let hotBytes = 0;
    for (const id of ids) hotBytes += Number(await stack.redis.memory("USAGE", jobKey(id), "SAMPLES", 0));

    const { port } = server.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const get = (id: string) =>
      new Promise<number>((done, fail) => {
        const t = performance.now();
        const req = httpRequest({ host: "127.0.0.1", port, path: `/v1/jobs/${id}`, agent, headers: { authorization: auth } }, (res) => {
          res.resume();
          res.on("end", () => (res.statusCode === 200 ? done(performance.now() - t) : fail(new Error(`GET answered ${res.statusCode}`))));
        });
        req.on("error", fail);
        req.end();
      });
    const timeReads = async () => {
      for (let i = 0; i < 50; i++) await get(ids[i % n]!); // warm
      const ms: number[] = [];
      for (let i = 0; i < reads; i++) ms.push(await get(ids[i % n]!));
      return ms.sort((a, b) => a - b);
    };
    const hot = await timeReads();

    // The hot window ends (as JOB_HOT_SECONDS after completion would end it).
    for (const id of ids) await stack.redis.pexpire(jobKey(id), 1);
    await new Promise((r) => setTimeout(r, 50));
    let coldBytes = 0;
    // EXISTS first: MEMORY USAGE alone still sizes a key whose time is up until Redis reclaims it.
    for (const id of ids) if (await stack.redis.exists(jobKey(id))) coldBytes += Number(await stack.redis.memory("USAGE", jobKey(id), "SAMPLES", 0));
    const cold = await timeReads();
    agent.destroy();

    const [h50, h99, c50, c99] = [percentile(hot, 50), percentile(hot, 99), percentile(cold, 50), percentile(cold, 99)];
    const perResult = resultBytes / n;
    console.log(`archive: Redis per job hot ${fmt(hotBytes / n / 1024)} KiB, after the hot window ${fmt(coldBytes / n)} bytes`);
    console.log(`archive: PostgreSQL ${fmt(pgBytes / 1024)} KiB per record (its JSON ${fmt(recordJson / 1024)} KiB; result JSON ${fmt(perResult / 1024)} KiB)`);
    console.log(`archive: GET p50/p99 hot ${fmt(h50, 2)}/${fmt(h99, 2)} ms, archived ${fmt(c50, 2)}/${fmt(c99, 2)} ms (n=${reads})`);
    return [
      {
        benchmark: "10. Redis memory per job after the hot window",
        measured: `${fmt(coldBytes / n)} bytes`,
        baseline: `${fmt(hotBytes / n / 1024)} KiB while hot`,
        ratio: coldBytes === 0 ? "none left" : `x${fmt(coldBytes / hotBytes, 3)}`,
        target: "none of the result",
        met: coldBytes === 0,
      },
      {
        benchmark: "10. PostgreSQL bytes per archived job",
        measured: `${fmt(pgBytes / 1024)} KiB (compressed JSONB)`,
        baseline: `${fmt(perResult / 1024)} KiB (result JSON)`,
        ratio: `x${fmt(pgBytes / perResult, 2)}`,
        target: "report",
        met: null,
      },
      {
        benchmark: "10. GET /v1/jobs/{id} archived vs hot",
        measured: `p50 ${fmt(c50, 2)} ms, p99 ${fmt(c99, 2)} ms`,
        baseline: `p50 ${fmt(h50, 2)} ms, p99 ${fmt(h99, 2)} ms (hot, in Redis)`,
        ratio: `+${fmt(c50 - h50, 2)} ms p50`,
        target: "archived <= 5 ms p50",
        met: c50 <= 5,
      },
    ];
  } finally {
    await new Promise((r) => server.close(r));
    await stack.close();
  }
}

await runIfMain(import.meta.url, () => benchArchive());
