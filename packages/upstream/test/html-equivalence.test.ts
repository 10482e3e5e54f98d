/**
 * The HTML layer's speed-ups give css-select's own answers on every captured page: the comparison
 * (html-equivalence.ts, which says how) runs in a Node process of its own, where it takes a fifth
 * of the time it takes inside Jest's module sandbox; here its report is checked.
 */
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { differences, type Report } from "./html-equivalence.js";
import { FIXTURES_DIR, fixturesAvailable } from "./fixtures-dir.js";

test("the comparison sees an answer that differs", () => {
  const html = "<p class=a>x</p><p class=b>y</p>";
  expect(differences(html, [".a", "p"], [".a", "p"])).toEqual([]);
  expect(differences(html, [".a", "p"], [".b", "p"])).toHaveLength(4);
});

const describeIfFixtures = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) console.warn(`html-equivalence: captured pages not found at ${FIXTURES_DIR}; set SERP_FIXTURES_DIR. Skipping.`);

describeIfFixtures("the HTML layer on the captured pages", () => {
  let report: Report;

  beforeAll(() => {
    const here = dirname(fileURLToPath(import.meta.url));
    const run = spawnSync(process.execPath, ["--import", "tsx", join(here, "html-equivalence.ts")], {
      encoding: "utf8",
      maxBuffer: 64 * 1024 * 1024,
      env: { ...process.env, SERP_FIXTURES_DIR: FIXTURES_DIR },
    });
    if (run.status !== 0) throw new Error(`the comparison failed (exit ${run.status}): ${run.stderr}`);
    report = JSON.parse(run.stdout) as Report;
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
