/** The failure table: each property the pipeline, the breakers and the metrics read from it. */
import { JOB_ERRORS } from "@serp/shared";
import { FAILURES, TELLING, breakerOutcomes, failureOfOutcome, outcomeOf } from "../src/failures.js";

test("a block, time-out or network failure speaks for a job first, a refusal last", () => {
  expect(TELLING).toEqual(["blocked", "timeout", "network", "partial", "unparseable", "upstream_error", "consent", "js_wall", "refused"]);
});

test("only blocks, time-outs, network and upstream faults send a job back for another attempt", () => {
  expect(TELLING.filter((k) => FAILURES[k].retryable)).toEqual(["blocked", "timeout", "network", "upstream_error"]);
  expect(FAILURES.timeout.text).toBe(JOB_ERRORS.upstreamTimeout);
});

test("walls share one outcome, and so do network and upstream faults; pages keep theirs", () => {
  expect(TELLING.map((k) => [k, outcomeOf(k)])).toEqual([
    ["blocked", "blocked"], ["timeout", "timeout"], ["network", "error"], ["partial", "partial"], ["unparseable", "unparseable"],
    ["upstream_error", "error"], ["consent", "wall"], ["js_wall", "wall"], ["refused", "refused"],
  ]);
  expect([outcomeOf("results"), outcomeOf("no_results")]).toEqual(["results", "no_results"]);
});

test("a skipped rung stands for the failure its resting breaker last saw (a JS wall for a wall, an upstream fault for an error)", () => {
  expect(failureOfOutcome("wall")).toBe("js_wall");
  expect(failureOfOutcome("error")).toBe("upstream_error");
  expect(failureOfOutcome("partial")).toBe("partial");
  expect(failureOfOutcome("results")).toBe("upstream_error");
});

test("the profile's breaker counts walls, refusals and partial pages; the profile-and-exit pair's blocks, time-outs and errors", () => {
  expect([...breakerOutcomes("recipe")].sort()).toEqual(["partial", "refused", "wall"]);
  expect([...breakerOutcomes("path")].sort()).toEqual(["blocked", "error", "timeout"]);
});
