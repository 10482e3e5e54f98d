/**
 * The HTML layer's speed-ups give css-select's own answers on every captured page: the comparison
 * (html-equivalence.ts, which says how) runs in a Node process of its own (in-node.ts), where it
 * takes a fifth of the time it takes inside Jest's module sandbox; here its report is checked.
 */
import { differences, type Report } from "./html-equivalence.js";
import { FIXTURES_DIR, fixturesAvailable } from "./fixtures-dir.js";
import { inNode } from "./in-node.js";

test("the comparison sees an answer that differs", () => {
  const html = "<p class=a>x</p><p class=b>y</p>";
  expect(differences(html, [".a", "p"], [".a", "p"])).toEqual([]);
  expect(differences(html, [".a", "p"], [".b", "p"])).toHaveLength(4);
});

const describeIfFixtures = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) console.warn(`html-equivalence: captured pages not found at ${FIXTURES_DIR}; set SERP_FIXTURES_DIR. Skipping.`);

describeIfFixtures("the HTML layer on the captured pages", () => {
  let report: Report;

  beforeAll(async () => {
    report = await inNode<Report>(new URL("./html-equivalence.ts", import.meta.url), "compareAll", FIXTURES_DIR);
  }, 600_000);

  test("every captured page was compared, on the parsers' selectors", () => {
    expect(Object.keys(report.pages).length).toBeGreaterThan(50);
    // Selectors of every parser: organic results, ads, the knowledge panel, news, images, shopping…
    expect(report.selectors).toBeGreaterThan(100);
  });

  test("css-select's answers on every page", () => {
    const differing = Object.entries(report.pages).filter(([, found]) => found.length > 0);
    expect(Object.fromEntries(differing)).toEqual({});
  });
});
