/**
 * Drill: a worker process killed with SIGKILL in the middle of a batch. Every job still ends
 * completed or failed, each completed job is billed exactly once, and the ledger matches.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import request from "supertest";
import { childEnv, fixturesAvailable, startStack, type Stack } from "../support/stack.js";

const d = fixturesAvailable ? describe : describe.skip;
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

function startWorker(stack: Stack): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", "apps/worker/src/index.ts"], {
    cwd: root,
    stdio: "ignore",
    env: childEnv(stack, {
      WORKER_QUEUES: "fast",
      WORKER_CONCURRENCY: "4",
      WORKER_LOCK_MS: "3000",
      UPSTREAM_BASE_URL: stack.replay.url,
      LOG_LEVEL: "silent",
    }),
  });
}

d("drill: worker killed mid-batch", () => {
  let stack: Stack;
  const children: ChildProcess[] = [];
  beforeAll(async () => {
    stack = await startStack({ workerQueues: [], replay: { faults: { latencyMs: 300 } } });
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill("SIGKILL");
    await stack.close();
  });

  test("every job ends final and each completed job is billed exactly once", async () => {
    const { auth, accountId } = await stack.account(100);
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: "coffee" } });
      ids.push(res.body.job.id);
    }
    // A slow upstream while the first worker runs: the batch takes it about 10 s, a window a poll on
    // a busy machine cannot miss (at 300 ms it was 3 s, and one busy run saw every job done first).
    stack.replay.setFaults({ latencyMs: 1_000 });
    const first = startWorker(stack);
    children.push(first);
    // Kill it once some jobs are done and others are in flight (statuses only: no result is read).
    const killBy = Date.now() + 60_000;
    for (;;) {
      const statuses = await Promise.all(ids.map(async (id) => (await stack.api.jobs.get(id, { result: false }))!.job.status));
      const completed = statuses.filter((s) => s === "completed").length;
      if (completed >= 4 && statuses.includes("processing")) break;
      if (completed === ids.length) throw new Error("every job was done before the kill: the drill killed nothing");
      if (Date.now() > killBy) throw new Error("the first worker never got going");
      await new Promise((r) => setTimeout(r, 50));
    }
    first.kill("SIGKILL");
    await new Promise((r) => first.once("exit", r));
    stack.replay.setFaults({ latencyMs: 300 });
    children.push(startWorker(stack));

    const by = Date.now() + 90_000;
    let records = await Promise.all(ids.map((id) => stack.api.jobs.get(id)));
    while (!records.every((r) => r && ["completed", "failed"].includes(r.job.status)) && Date.now() < by) {
      await new Promise((r) => setTimeout(r, 300));
      records = await Promise.all(ids.map((id) => stack.api.jobs.get(id)));
    }
    expect(records.map((r) => r?.job.status).filter((s) => s !== "completed" && s !== "failed")).toEqual([]);
    const ledger = await stack.api.accounts.ledger(accountId, 1000);
    for (const r of records) {
      const entries = ledger.filter((e) => e.jobId === r!.job.id);
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ type: r!.job.status === "completed" ? "charge" : "refund", credits: r!.job.credits });
    }
    const charged = ledger.filter((e) => e.type !== "grant").reduce((s, e) => s + e.credits, 0);
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 100 - charged, reserved: 0 });
    expect(records.filter((r) => r!.job.status === "completed").length).toBeGreaterThan(30);
  }, 150_000);
});
