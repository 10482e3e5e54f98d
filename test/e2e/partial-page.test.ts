/**
 * A results page understood only in part never completes a job. The replay upstream serves a
 * captured page cut in the middle of its results region to every rung: the job fails at 0 credits
 * with the customer's `partial` error, and the stored record tells operators what the parse saw.
 * The same page whole completes. Through the API, a queue, a real worker and the real parsers.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import request from "supertest";
import { COVERAGE_THRESHOLDS } from "@serp/upstream";
import { JOB_ERRORS } from "@serp/shared";
import { cutInRegion } from "../../packages/upstream/test/cut-region.js";
import { FIXTURES_DIR, fixturesAvailable, startStack, type Stack } from "../support/stack.js";

const d = fixturesAvailable ? describe : describe.skip;
const PAGE = "web/coffee-desktop-2023.html";

d("a results page cut in half", () => {
  let stack: Stack;
  let dir: string;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "serp-partial-"));
    const cut = join(dir, "coffee-cut-in-half.html");
    writeFileSync(cut, cutInRegion(readFileSync(join(FIXTURES_DIR, PAGE), "utf8"), ["rso"])!);
    stack = await startStack({
      workerQueues: ["live"],
      replay: { routes: [{ kind: "web", q: "cut in half", file: cut }, { kind: "web", q: "whole page", file: PAGE }] },
    });
  });
  afterAll(async () => {
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const live = (auth: string, query: string) =>
    request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query }, queue: "live" });
  const stored = (id: string) => stack.api.jobs.get(id);

  test("fails the job at 0 credits with the partial error, never completing with what it did read", async () => {
    const { auth, accountId } = await stack.account(5);
    const res = await live(auth, "cut in half");
    expect(res.status).toBe(200);
    expect(res.body.job).toMatchObject({ status: "failed", credits: 0, error: JOB_ERRORS.partial });
    expect(res.body.result).toBeNull();
    // The figure is for operators: not in the customer's job JSON (SPEC §2.3), on the stored record.
    expect(res.body.job).not.toHaveProperty("coverage");
    expect((await stored(res.body.job.id))!.coverage).toMatchObject({ ratio: 0, cut: true, layout: "full" });
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 5, reserved: 0 });
    // Every rung was asked and got the cut page.
    expect(stack.replay.requests().filter((r) => r.query.q === "cut in half").length).toBeGreaterThan(1);
  }, 30_000);

  test("the same page whole completes and is billed", async () => {
    const { auth } = await stack.account(5);
    const res = await live(auth, "whole page");
    expect(res.body.job).toMatchObject({ status: "completed", credits: 1, error: null });
    expect(res.body.result.organic_results.length).toBeGreaterThanOrEqual(8);
    const coverage = (await stored(res.body.job.id))!.coverage!;
    expect(coverage.cut).toBeUndefined();
    expect(coverage.ratio).toBeGreaterThanOrEqual(COVERAGE_THRESHOLDS["web-search"]);
  }, 30_000);
});
