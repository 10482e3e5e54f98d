/**
 * The sweeper (apps/worker/src/sweeper.ts) on a real Redis with real BullMQ workers: a job stored
 * but never put on its queue (a ghost) is settled as failed at 0 credits once past the grace, its
 * reservation released, its refund in the ledger, its webhook sent, counted in /metrics; a job on
 * its queue, or still young, is left alone; one sweep at a time.
 */
import { createMetrics } from "@serp/metrics";
import { JOB_ERRORS, newJobId, withDefaults, type QueueName } from "@serp/shared";
import { startStack, type Stack } from "../support/stack.js";
import { Receiver } from "../webhooks/receiver.js";

const params = withDefaults({ endpoint: "web-search", params: { query: "coffee" }, queue: "fast" } as never);
const GRACE_MS = 60_000;

describe("sweeper of jobs never queued", () => {
  let stack: Stack;
  let receiver: Receiver;
  const metrics = createMetrics("worker");
  beforeAll(async () => {
    receiver = await Receiver.start();
    stack = await startStack({
      env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: "true" },
      // Regular jobs stay queued: the "on its queue" case is never run meanwhile.
      workerQueues: ["fast"],
      webhooks: { allowPrivateTargets: true, timeoutMs: 2_000 },
      workerMetrics: metrics,
      // Swept only when the test says so.
      sweep: { graceMs: GRACE_MS, intervalMs: 3_600_000 },
    });
  }, 30_000);
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
  }, 30_000);

  const sweeper = () => stack.worker!.sweeper!;
  const unlock = () => stack.redis.del(`${stack.prefix}:jobs:sweeper`);
  /** A job stored as the API stores it (record, reservation), `ageMs` ago, and not enqueued. */
  const stored = async (accountId: string, queue: QueueName, ageMs: number, postbackUrl?: string) => {
    const id = newJobId();
    const createdAt = new Date(Date.now() - ageMs).toISOString();
    const { outcome } = await stack.api.jobs.create({ id, accountId, endpoint: "web-search", queue, params, createdAt, postbackUrl }, 1);
    expect(outcome).toBe("created");
    return id;
  };

  test("a ghost past the grace is settled failed at 0 credits, refunded in the ledger, its webhook sent; queued and young jobs are left", async () => {
    const { accountId } = await stack.account(10);
    const fastGhost = await stored(accountId, "fast", GRACE_MS + 5_000, receiver.url("/ghost"));
    const liveGhost = await stored(accountId, "live", GRACE_MS + 5_000);
    const queuedOld = await stored(accountId, "regular", GRACE_MS + 5_000);
    await stack.api.queues.regular.add("web-search", { jobId: queuedOld, accountId }, { jobId: queuedOld });
    const young = await stored(accountId, "fast", 1_000);
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 10, reserved: 4 });

    await unlock();
    expect(await sweeper().sweepOnce()).toBe(2);

    for (const id of [fastGhost, liveGhost]) {
      expect((await stack.api.jobs.get(id))?.job).toMatchObject({ status: "failed", credits: 0, error: JOB_ERRORS.internal });
    }
    for (const id of [queuedOld, young]) expect(await stack.api.jobs.status(id)).toBe("pending");
    // The two ghosts' reservations (and in-flight slots) are back; nothing is charged.
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 10, reserved: 2 });
    const ledger = await stack.api.accounts.ledger(accountId, 100);
    for (const id of [fastGhost, liveGhost]) {
      expect(ledger.filter((e) => e.jobId === id)).toEqual([expect.objectContaining({ type: "refund", credits: 0 })]);
    }
    // Its webhook goes out as any failed job's does.
    const until = Date.now() + 15_000;
    while (!receiver.at("/ghost").length && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    const [delivery] = receiver.at("/ghost");
    expect(JSON.parse(delivery!.body)).toMatchObject({ event: "job.failed", job: { id: fastGhost, status: "failed", credits: 0 } });
    const swept = await metrics.jobsSwept.get();
    expect(Object.fromEntries(swept.values.map((v) => [v.labels.queue, v.value]))).toEqual({ fast: 1, live: 1 });
    // As the workers' /metrics serves it.
    expect(await metrics.registry.metrics()).toMatch(/^serp_jobs_swept_total\{queue="fast",app="worker"\} 1$/m);

    // Settled once: a second pass finds nothing; the queued job has left the list, the young one stays.
    await unlock();
    expect(await sweeper().sweepOnce()).toBe(0);
    expect(await stack.redis.zrange(`${stack.prefix}:jobs:unqueued`, 0, -1)).toEqual([young]);
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 10, reserved: 2 });
  }, 30_000);

  test("one sweep at a time: while one holds the lock, another does not sweep", async () => {
    await unlock();
    const passes = await Promise.all([sweeper().sweepOnce(), sweeper().sweepOnce()]);
    expect(passes.filter((p) => p === null)).toHaveLength(1);
  });

  test("a ghost settled meanwhile by another way is not counted twice", async () => {
    const { accountId } = await stack.account(10);
    const ghost = await stored(accountId, "fast", GRACE_MS + 5_000);
    await stack.api.jobs.finalize(ghost, accountId, { status: "failed", credits: 0, latencyMs: null, error: "timed out", result: null, completedAt: new Date().toISOString() });
    const before = (await metrics.jobsSwept.get()).values.reduce((s, v) => s + v.value, 0);
    await unlock();
    expect(await sweeper().sweepOnce()).toBe(0);
    expect((await stack.api.jobs.get(ghost))?.job).toMatchObject({ status: "failed", error: "timed out" });
    expect((await metrics.jobsSwept.get()).values.reduce((s, v) => s + v.value, 0)).toBe(before);
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 10, reserved: 0 });
  });
});
