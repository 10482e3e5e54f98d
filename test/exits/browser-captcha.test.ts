/**
 * The CAPTCHA rung on the browser rung: under the 2026-11 guard (the JavaScript challenge) and a
 * per-address budget of one search, the second search's /sorry/ page is solved through the
 * session's exit, and the exemption cookie is set on that session's browser context: the job
 * completes, billed once, and no cookie is presented from another exit.
 */
import { existsSync } from "node:fs";
import request from "supertest";
import { BROWSER_DEFAULTS, CaptchaSolver } from "@serp/upstream";
import { caFileOf, fixturesAvailable, startStack, type Stack } from "../support/stack.js";
import { browserOnlyTable, startExitFleet, type ExitFleet } from "../support/exits.js";
import { startFakeSolver, type FakeSolver } from "../support/captcha-solver.js";

const CHROMIUM = process.env.BROWSER_EXECUTABLE_PATH ?? BROWSER_DEFAULTS.executablePath;
const d = fixturesAvailable && existsSync(CHROMIUM) ? describe : describe.skip;

const BROWSER_ONLY = browserOnlyTable();

d("the CAPTCHA rung on the browser rung", () => {
  let fleet: ExitFleet;
  let solver: FakeSolver;
  let stack: Stack;

  beforeAll(async () => {
    fleet = await startExitFleet({ staticExits: [{ country: "us", auth: true }] });
    solver = await startFakeSolver({ clientKey: "solver-key-2", cost: 0.003 });
    stack = await startStack({
      replay: { https: true, guard: "2026-11", fallback: true, exits: { ...fleet.exits, budget: { searches: 1, windowMs: 60_000, flagMs: 60_000 } } },
      upstreamTimeoutMs: 20_000,
      upstream: (replay) => ({ UPSTREAM_CA_FILE: caFileOf(replay), UPSTREAM_PROXIES: [fleet.static[0]!.url], BROWSER_CONCURRENCY: 1 }),
      upstreamDeps: { profiles: BROWSER_ONLY, captcha: new CaptchaSolver({ url: solver.url, key: "solver-key-2", pollMs: 50 }) },
      workerQueues: ["live"],
    });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    await solver?.close();
    await fleet?.close();
  });

  test("a /sorry/ page met by the browser is solved through its exit; the exemption lives in that session's context", async () => {
    const { auth } = await stack.account(100);
    const live = (query: string) => request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query, country: "us" }, queue: "live" });
    expect((await live("coffee one")).body.job).toMatchObject({ status: "completed", credits: 1 });
    const second = await live("coffee two");
    expect(second.body.job).toMatchObject({ status: "completed", credits: 1 });
    expect(solver.calls().createTask).toBe(1);
    const totals = stack.replay.exitStats().totals;
    expect(totals).toMatchObject({ exemptionsEarned: 1, tokensRefused: 0, foreignCookies: 0 });
    expect(stack.replay.exitStats().addresses[0]!.exemptedSearches).toBeGreaterThanOrEqual(1);
  }, 90_000);
});
