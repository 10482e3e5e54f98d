/**
 * The coverage figure (src/coverage.ts) on captured pages (that every results page clears its kind's
 * threshold is checked, and each page's figure printed, by the conformance run): a page whose
 * results are half in markup the parser does not know (a layout change) falls below it, or on web
 * halves its figure; captured pages of every kind and layout cut in the middle of their results
 * region read 0; and the figure is read from the parser's own tree, at a small part of a parse's cost.
 * The pages are parsed in a Node process of its own (coverage.work.ts, through ./in-node.ts); the
 * checks are here.
 */
import { COVERAGE_THRESHOLDS, understood } from "../src/coverage.js";
import { FIXTURES_DIR, fixturesAvailable } from "./fixtures-dir.js";
import { inNode } from "./in-node.js";
import type { CoverageWork } from "./coverage.work.js";

const describeIfFixtures = fixturesAvailable ? describe : describe.skip;

let work: CoverageWork;
if (fixturesAvailable) {
  beforeAll(async () => {
    work = await inNode<CoverageWork>(new URL("./coverage.work.ts", import.meta.url), "coverageWork", FIXTURES_DIR);
  }, 600_000);
}

describeIfFixtures("coverage of captured pages", () => {
  test("kinds whose pages are not lists of outbound results are not measured", () => {
    expect(work.notMeasured.autocomplete).toEqual({ links: 0, accounted: 0, ratio: 1, layout: "none" });
    expect(work.notMeasured.productLayout).toBe("none");
  });

  test("the layout is read from the page: full, mobile, basic, json", () => {
    expect(work.layouts.full).toBe("full");
    expect(work.layouts.mobile).toBe("mobile");
    expect(work.layouts.basic).toBe("basic");
    expect(work.layouts.json).toBe("json");
  });

  test("news, images and shopping: a page with half its items in unknown markup falls below the threshold", () => {
    // News, shopping and image cards are found by their shape too: half the cards made unreadable, not renamed (coverage.work.ts).
    expect(work.halfUnreadable).toHaveLength(5);
    for (const { fixture, endpoint, whole, cut } of work.halfUnreadable) {
      expect([fixture, whole.ratio >= COVERAGE_THRESHOLDS[endpoint]]).toEqual([fixture, true]);
      expect(cut.links).toBeGreaterThan(0);
      expect([fixture, cut.ratio < COVERAGE_THRESHOLDS[endpoint]]).toEqual([fixture, true]);
    }
  });

  test("web: results titled in a form the parser does not read halve the figure", () => {
    // Every other result title an `<h4>` instead of an `<h3>`: a heading, so still a result's title,
    // but not one the organic parser reads. The web threshold only catches a page the parsers barely
    // understand (see COVERAGE_THRESHOLDS); a drop like this shows in the histogram first.
    expect(work.retitled).toHaveLength(3);
    for (const { whole, changed } of work.retitled) {
      expect(whole.ratio).toBe(1);
      expect(changed.links).toBe(whole.links);
      expect(changed.ratio).toBeGreaterThan(0.3);
      expect(changed.ratio).toBeLessThan(0.7);
    }
  });

  test("captured results pages of every kind and layout, cut in the middle of their results region, read 0, marked cut", () => {
    const missed: string[] = [];
    for (const { fixture, parser, coverage: c } of work.cutPages) {
      if (!c) continue; // a parser that refuses the cut page outright: nothing is sold either
      if (!c.cut || c.ratio !== 0 || understood(parser, c)) missed.push(`${fixture}: ${JSON.stringify(c)}`);
    }
    expect(work.cutPages.length).toBeGreaterThanOrEqual(12);
    expect(missed).toEqual([]);
  });

  test("a progressive page with a chunk cut short is not parsed at all", () => {
    expect(work.progressiveCut).toMatch(/cut short/);
  });

  test("the figure is read from the tree the parser built, at a small part of a parse's cost", () => {
    const { treeBuilt, own, apart, parseMs, measureMs } = work.fromTree;
    expect(treeBuilt).toBe(true);
    // The same figure as from a tree parsed apart.
    expect(own).toEqual(apart);
    // A figure that parsed the page again would cost about a parse; read from the tree, a few percent.
    expect(measureMs).toBeLessThan(parseMs * 0.15);
  });

  test("a parser that builds no tree of its own (a caller's) still gets a figure", () => {
    const { half, coverage: c, links } = work.callersTree;
    expect(c.links).toBe(links);
    expect(c.accounted).toBe(half);
    expect(understood("web-search", c)).toBe(true);
  });
});
