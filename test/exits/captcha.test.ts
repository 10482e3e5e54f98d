/**
 * The opt-in CAPTCHA rung, end to end through the API and a real worker: one static exit whose
 * per-address budget is one search, so the second search meets the replay's /sorry/ page.
 * - Off (the default): the fake solver receives nothing; the /sorry/ page is a block and the job
 *   fails, free.
 * - On: the page is solved through the same exit (the solver is told the exit), the form posted,
 *   the exemption cookie kept with the session; the job completes, billed once, and its record
 *   keeps the solve and its cost.
 */
import request from "supertest";
import { CaptchaSolver } from "@serp/upstream";
import { fixturesAvailable, startStack, type Stack } from "../support/stack.js";
import { startExitFleet, type ExitFleet } from "../support/exits.js";
import { startFakeSolver, type FakeSolver } from "../support/captcha-solver.js";

const d = fixturesAvailable ? describe : describe.skip;
const BUDGET = { searches: 1, windowMs: 60_000, flagMs: 60_000 };

d("the CAPTCHA rung", () => {
  let fleet: ExitFleet;
  let solver: FakeSolver;
  const stacks: Stack[] = [];

  beforeAll(async () => {
    fleet = await startExitFleet({ staticExits: [{ country: "us", auth: true }] });
    solver = await startFakeSolver({ clientKey: "solver-key-1", cost: 0.002 });
  });
  afterAll(async () => {
    for (const s of stacks) await s.close();
    await solver?.close();
    await fleet?.close();
  });

  const stackWith = async (captcha?: CaptchaSolver) => {
    const stack = await startStack({
      workerQueues: ["live"],
      replay: { fallback: true, exits: { ...fleet.exits, budget: BUDGET } },
      upstream: () => ({ UPSTREAM_PROXIES: [fleet.static[0]!.url] }),
      upstreamDeps: captcha ? { captcha } : {},
    });
    stacks.push(stack);
    return stack;
  };
  const live = (stack: Stack, auth: string, query: string) =>
    request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query, country: "us" }, queue: "live" });

  test("off by default: the solver receives nothing, the /sorry/ page is a block and the job is free", async () => {
    const stack = await stackWith();
    const { auth } = await stack.account(100);
    expect((await live(stack, auth, "coffee one")).body.job).toMatchObject({ status: "completed", credits: 1 });
    const second = await live(stack, auth, "coffee two");
    expect(second.body.job).toMatchObject({ status: "failed", credits: 0 });
    expect(stack.replay.exitStats().totals.sorried).toBeGreaterThanOrEqual(1);
    expect(solver.calls().createTask).toBe(0);
  });

  test("on: a blocked exit is solved through itself, the job completes, billed once, and the record keeps the cost", async () => {
    const captcha = new CaptchaSolver({ url: solver.url, key: "solver-key-1", pollMs: 50, maxPerHour: 10 });
    const stack = await stackWith(captcha);
    const { auth } = await stack.account(100);
    expect((await live(stack, auth, "coffee one")).body.job.status).toBe("completed");
    const second = await live(stack, auth, "coffee two");
    expect(second.body.job).toMatchObject({ status: "completed", credits: 1 });
    expect(solver.calls().createTask).toBe(1);
    const [task] = solver.tasks();
    // The solver works through the page's own exit.
    expect(task).toMatchObject({ type: "RecaptchaV2Task" });
    expect(JSON.stringify(task)).toContain(`${new URL(fleet.static[0]!.url).port}`);
    const totals = stack.replay.exitStats().totals;
    expect(totals).toMatchObject({ exemptionsEarned: 1, tokensRefused: 0, foreignCookies: 0 });
    const record = await stack.redis.hgetall(`${stack.prefix}:job:${second.body.job.id}`);
    expect(JSON.parse(record.exit!)).toMatchObject({ pool: "default", captcha: { solves: 1, cost: 0.002 } });
    expect(second.body.job).not.toHaveProperty("exit");
    // The exemption stays with the session: the next search passes the flag without a second solve.
    expect((await live(stack, auth, "coffee three")).body.job).toMatchObject({ status: "completed", credits: 1 });
    expect(solver.calls().createTask).toBe(1);
    expect(stack.replay.exitStats().addresses[0]!.exemptedSearches).toBeGreaterThanOrEqual(2);
  });
});
