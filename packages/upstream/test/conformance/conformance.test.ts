/**
 * Runs every captured page under the fixtures folder through its kind's parser and checks it
 * against expectations checked in beside this file (expectations/*.json), written by reading the
 * pages themselves. See expectations/README.md for the format.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import type { Endpoint } from "@serp/shared";
import { classify, type PageClass } from "../../src/classify.js";
import { COVERAGE_THRESHOLDS, parsePage, understood, type Coverage } from "../../src/coverage.js";
import { FIXTURES_DIR, fixturesAvailable } from "../fixtures-dir.js";

interface BlockExpectation {
  count?: number;
  minCount?: number;
  present?: boolean;
  first?: Record<string, unknown>[];
  match?: Record<string, unknown>;
  all?: { title: string; link: string }[];
  minRecall?: number;
}
interface PageExpectation {
  fixture: string;
  parser?: Endpoint;
  classify?: PageClass;
  blocks?: Record<string, BlockExpectation>;
  note?: string;
}

const here = dirname(fileURLToPath(import.meta.url));
const expectationDir = join(here, "expectations");
const files = readdirSync(expectationDir).filter((f) => f.endsWith(".json")).sort();
const expectations = files.flatMap((file) =>
  (JSON.parse(readFileSync(join(expectationDir, file), "utf8")) as PageExpectation[]).map((e) => ({ file, ...e })),
);

function at(value: unknown, path: string): unknown {
  return path.split(".").reduce<unknown>((v, key) => (v as Record<string, unknown> | undefined)?.[key], value);
}

const norm = (s: string) => s.replace(/\s+/g, " ").trim();
function sameLink(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return a === b;
  }
}

/** Each page parsed once per parser, as a worker parses it: its blocks and its coverage figure. */
const cache = new Map<string, { blocks: unknown; coverage: Coverage }>();
function parsedPage(fixture: string, parser: Endpoint): { blocks: unknown; coverage: Coverage } {
  const key = `${parser}:${fixture}`;
  if (!cache.has(key)) cache.set(key, parsePage(parser, readFileSync(join(FIXTURES_DIR, fixture), "utf8")));
  return cache.get(key)!;
}
function parsed(fixture: string, parser: Endpoint): unknown {
  return parsedPage(fixture, parser).blocks;
}

/** The coverage figure of every page parsed in this run, printed once at the end. */
function coverageTable(): string {
  const rows = [...cache.entries()].map(([key, { coverage: c }]) => {
    const [parser, fixture] = [key.slice(0, key.indexOf(":")), key.slice(key.indexOf(":") + 1)] as [Endpoint, string];
    const mark = c.layout === "none" ? "not measured" : understood(parser, c) ? "ok" : c.cut ? "CUT" : "BELOW";
    return `${fixture.padEnd(76)} ${parser.padEnd(26)} ${c.layout.padEnd(7)} ${`${c.accounted}/${c.links}`.padStart(7)}  ${c.ratio.toFixed(2)}  ≥ ${String(COVERAGE_THRESHOLDS[parser]).padEnd(4)} ${mark}`;
  });
  return `coverage of ${rows.length} parsed pages (layout, accounted/links, ratio, kind's threshold):\n${rows.sort().join("\n")}`;
}

function walkFixtures(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? walkFixtures(join(dir, d.name)) : [relative(FIXTURES_DIR, join(dir, d.name))],
  );
}

const describeIfFixtures = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) {
  console.warn(`conformance: captured pages not found at ${FIXTURES_DIR}; set SERP_FIXTURES_DIR. Skipping.`);
}

describeIfFixtures("conformance on captured upstream pages", () => {
  test("every captured page is named by an expectation", () => {
    const named = new Set(expectations.map((e) => e.fixture));
    const pages = walkFixtures(FIXTURES_DIR).filter((f) => !f.endsWith(".md"));
    expect(pages.filter((p) => !named.has(p))).toEqual([]);
  });

  afterAll(() => {
    if (cache.size > 0) console.log(coverageTable());
  });

  test("every captured results page clears its kind's coverage threshold (src/coverage.ts)", () => {
    const below = expectations
      .filter((e) => e.parser && e.classify === "results")
      .map((e) => ({ e, c: parsedPage(e.fixture, e.parser!).coverage }))
      .filter(({ e, c }) => !understood(e.parser!, c))
      .map(({ e, c }) => `${e.fixture} (${e.parser}): ${c.accounted}/${c.links} = ${c.ratio.toFixed(2)}${c.cut ? ", cut" : ""}`);
    expect(below).toEqual([]);
  });

  for (const e of expectations) {
    const name = `${e.file}: ${e.fixture}${e.parser ? ` (${e.parser})` : ""}`;
    if (e.classify) {
      test(`${name} is classified ${e.classify}`, () => {
        const body = readFileSync(join(FIXTURES_DIR, e.fixture), "utf8");
        const endpoint = e.parser ?? "web-search";
        expect(classify({ statusCode: 200, headers: {}, body, url: "https://www.google.com/search" }, endpoint)).toBe(
          e.classify,
        );
      });
    }
    for (const [path, want] of Object.entries(e.blocks ?? {})) {
      if (!e.parser) throw new Error(`${name}: blocks need a parser`);
      const parser = e.parser;
      test(`${name} → ${path}`, () => {
        const got = at(parsed(e.fixture, parser), path);
        if (want.present === false) {
          expect(Array.isArray(got) ? got.length : got).toBeFalsy();
          return;
        }
        if (want.present) expect(got).toBeTruthy();
        if (want.match) expect(got).toMatchObject(want.match);
        const items = Array.isArray(got) ? (got as Record<string, unknown>[]) : undefined;
        if (want.count !== undefined) expect(items?.length).toBe(want.count);
        if (want.minCount !== undefined) expect(items?.length ?? 0).toBeGreaterThanOrEqual(want.minCount);
        if (want.first) expect(items?.slice(0, want.first.length)).toMatchObject(want.first);
        if (want.all) {
          const found = want.all.filter((truth) =>
            items?.some(
              (it) =>
                typeof it.title === "string" &&
                typeof it.link === "string" &&
                norm(it.title) === norm(truth.title) &&
                sameLink(it.link, truth.link),
            ),
          );
          const missed = want.all.filter((t) => !found.includes(t));
          const recall = want.all.length ? found.length / want.all.length : 1;
          if (recall < (want.minRecall ?? 0.9)) {
            throw new Error(`recall ${found.length}/${want.all.length}; missed: ${JSON.stringify(missed, null, 1)}`);
          }
        }
      });
    }
  }
});
