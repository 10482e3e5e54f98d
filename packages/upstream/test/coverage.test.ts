/**
 * The coverage figure (src/coverage.ts) on every captured page: printed as a table, every results page
 * with an expectation clears its kind's threshold, and a page whose results are half in markup the
 * parser does not know (a layout change) falls below it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Endpoint } from "@serp/shared";
import { COVERAGE_THRESHOLDS, coverage } from "../src/coverage.js";
import { PARSERS } from "../src/parsers/index.js";
import { FIXTURES_DIR, fixturesAvailable } from "./fixtures-dir.js";

const here = dirname(fileURLToPath(import.meta.url));
const expectationDir = join(here, "conformance/expectations");
interface PageExpectation {
  fixture: string;
  parser?: Endpoint;
  classify?: string;
}
const expectations = readdirSync(expectationDir)
  .filter((f) => f.endsWith(".json"))
  .flatMap((f) => JSON.parse(readFileSync(join(expectationDir, f), "utf8")) as PageExpectation[]);

const describeIfFixtures = fixturesAvailable ? describe : describe.skip;
const read = (fixture: string) => readFileSync(join(FIXTURES_DIR, fixture), "utf8");

function measure(endpoint: Endpoint, body: string) {
  return coverage(endpoint, body, PARSERS[endpoint](body) as never);
}

/**
 * The page with every other result item's markup replaced by markup no parser knows: the links stay
 * on the page, the parser finds half of them. `item` matches the opening tag of an item's marker.
 */
function halfUnknown(body: string, item: RegExp, rename: (tag: string) => string): string {
  let i = 0;
  return body.replace(item, (tag) => (i++ % 2 === 1 ? rename(tag) : tag));
}

describeIfFixtures("coverage of captured pages", () => {
  // Results pages, each with the parser its expectation names (a page may be read by more than one).
  const pages = expectations.filter(
    (e) => e.parser && (e.classify === "results" || e.classify === undefined) && e.parser !== "web-local",
  );

  test("every captured results page clears its kind's threshold", () => {
    const rows: string[] = [];
    const below: string[] = [];
    const seen = new Set<string>();
    for (const e of pages) {
      const key = `${e.parser}:${e.fixture}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const c = measure(e.parser!, read(e.fixture));
      const threshold = COVERAGE_THRESHOLDS[e.parser!];
      rows.push(`${e.fixture.padEnd(72)} ${e.parser!.padEnd(26)} ${`${c.accounted}/${c.links}`.padStart(7)}  ${c.ratio.toFixed(2)}  (≥ ${threshold})`);
      if (e.classify === "results" && c.ratio < threshold) below.push(`${e.fixture}: ${c.ratio.toFixed(2)}`);
    }
    console.log(`coverage (accounted/links, ratio, threshold):\n${rows.join("\n")}`);
    expect(below).toEqual([]);
  });

  test("pages outside every parser's list (not HTML, or not outbound results) read 1", () => {
    expect(coverage("web-autocomplete", "<toplevel/>", { suggestions: [] }).ratio).toBe(1);
    expect(coverage("web-shopping-product", "<html></html>", { sellers: [] }).ratio).toBe(1);
  });

  test("a page whose results region is cut in half falls below the threshold", () => {
    // News 2025 cards and the 2021 image grid: every other card's class renamed, so the parser
    // finds half the results while their links stay in the region.
    const cases: { fixture: string; endpoint: Endpoint; item: RegExp; rename: (t: string) => string }[] = [
      {
        fixture: "news/schloss-johannisberg-news-2025.html",
        endpoint: "web-news",
        item: /<div [^>]*class="?SoaBEf\b/g, // saved by SingleFile: attributes unquoted
        rename: (t) => t.replace("SoaBEf", "XxXxX"),
      },
      {
        fixture: "news/win10-iso-news-2019-wayback.html",
        endpoint: "web-news",
        item: /<div class="dbsr[^"]*"/g,
        rename: (t) => t.replace("dbsr", "xxxx"),
      },
      {
        fixture: "images/hatsune-miku-images-ja-2025.html",
        endpoint: "web-images",
        item: /data-attrid="images universal"/g,
        rename: () => 'data-attrid="unknown"',
      },
    ];
    for (const { fixture, endpoint, item, rename } of cases) {
      const body = read(fixture);
      const whole = measure(endpoint, body);
      const cut = measure(endpoint, halfUnknown(body, item, rename));
      expect(whole.ratio).toBeGreaterThanOrEqual(COVERAGE_THRESHOLDS[endpoint]);
      expect(cut.links).toBeGreaterThan(0);
      expect(cut.ratio).toBeLessThan(COVERAGE_THRESHOLDS[endpoint]);
    }
  });

  test("a progressive page with a chunk cut short is not understood at all", () => {
    const body = read("upstream-json/kommod-milan-tch-json-ru-2024.txt");
    const cut = body.slice(0, Math.floor(body.length * 0.6));
    expect(() => PARSERS["web-search"](cut)).toThrow(/cut short/);
    expect(coverage("web-search", cut, { organic_results: [] }).ratio).toBe(0);
  });

  test("every page's figure is found in one parse and one walk (well under a parse's cost)", () => {
    const body = read("web/coffee-desktop-2023.html");
    const blocks = PARSERS["web-search"](body);
    coverage("web-search", body, blocks);
    const start = performance.now();
    for (let i = 0; i < 3; i++) coverage("web-search", body, blocks);
    expect((performance.now() - start) / 3).toBeLessThan(2000);
  });
});
