/**
 * Runs every captured page under the fixtures folder through its kind's parser and checks it
 * against expectations checked in beside this file (expectations/*.json), written by reading the
 * pages themselves. See expectations/README.md for the format.
 *
 * The coverage thresholds (src/coverage.ts) are held to every results page as captured and to two
 * copies of it a redesign could leave (every class renamed at random; every class dropped): none is
 * refused where its parser finds results. Two broken copies must still be refused: the results
 * region replaced by markup no parser knows (its links kept), and the page cut inside that region.
 * The margin of each (figure minus threshold) is printed as a table at the end of the run.
 */
import { readdirSync } from "node:fs";
import { join, relative } from "node:path";
import type { Endpoint } from "@serp/shared";
import { COVERAGE_THRESHOLDS, understood, type Coverage } from "../../src/coverage.js";
import { FIXTURES_DIR, fixturesAvailable } from "../fixtures-dir.js";
import { inNode } from "../in-node.js";
import { expectations, measured, parsedKey, type Judged, type Variant, type Work } from "./conformance.work.js";

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

/** What conformance.work.ts found, parsing in a Node process of its own (filled before the tests). */
let work: Work;
function parsedPage(fixture: string, parser: Endpoint): { blocks: unknown; coverage: Coverage } {
  return work.parsed[parsedKey(parser, fixture)]!;
}
function parsed(fixture: string, parser: Endpoint): unknown {
  return parsedPage(fixture, parser).blocks;
}

/** The coverage figure of every page parsed in this run, printed once at the end. */
function coverageTable(): string {
  const rows = Object.entries(work.parsed).map(([key, { coverage: c }]) => {
    const [parser, fixture] = [key.slice(0, key.indexOf(":")), key.slice(key.indexOf(":") + 1)] as [Endpoint, string];
    const mark = c.layout === "none" ? "not measured" : understood(parser, c) ? "ok" : c.cut ? "CUT" : "BELOW";
    const margin = c.layout === "none" ? "" : signed(c.ratio - COVERAGE_THRESHOLDS[parser]);
    return `${fixture.padEnd(76)} ${parser.padEnd(26)} ${c.layout.padEnd(7)} ${`${c.accounted}/${c.links}`.padStart(7)}  ${c.ratio.toFixed(2)}  ≥ ${String(COVERAGE_THRESHOLDS[parser]).padEnd(4)} ${margin.padStart(6)} ${mark}`;
  });
  return `coverage of ${rows.length} parsed pages (layout, accounted/links, ratio, kind's threshold, margin):\n${rows.sort().join("\n")}`;
}

const signed = (n: number) => `${n >= 0 ? "+" : ""}${n.toFixed(2)}`;

const VARIANTS: readonly Variant[] = ["renamed", "dropped", "unknown", "cut"];
/** Per results page, each copy's judgement (filled by the margins test, printed after the run). */
const margins = new Map<string, { parser: Endpoint; whole: Coverage; copies: Partial<Record<Variant, Judged>> }>();
/** Whether a copy's page would be sold: its parser found something and the coverage check let it through. */
const sold = (parser: Endpoint, j: Judged | undefined) => !!j && j.found && !!j.coverage && understood(parser, j.coverage);

function marginTable(): string {
  const cell = (parser: Endpoint, j: Judged | undefined) => {
    if (!j) return "—".padStart(14);
    if (!j.coverage) return "parser threw".padStart(14);
    const c = j.coverage;
    const text = c.cut ? "cut 0" : `${c.ratio.toFixed(2)} ${signed(c.ratio - COVERAGE_THRESHOLDS[parser])}`;
    return `${text}${j.found ? (understood(parser, c) ? " ✓" : " ✗") : " ∅"}`.padStart(14);
  };
  const rows = [...margins.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([fixture, { parser, whole, copies }]) =>
    [fixture.padEnd(70), parser.padEnd(20), String(COVERAGE_THRESHOLDS[parser]).padEnd(4), cell(parser, { coverage: whole, found: true }), ...VARIANTS.map((v) => cell(parser, copies[v]))].join(" "),
  );
  const head = ["page".padEnd(70), "kind".padEnd(20), "thr.", ..."captured renamed dropped unknown cut".split(" ").map((h) => h.padStart(14))].join(" ");
  return (
    `coverage margins (figure and figure − threshold; ✓ sold, ✗ refused by the coverage check, ∅ the parser found nothing):\n` +
    `${head}\n${rows.join("\n")}`
  );
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
  beforeAll(async () => {
    work = await inNode<Work>(new URL("./conformance.work.ts", import.meta.url), "conformanceWork", FIXTURES_DIR);
  }, 600_000);

  test("every captured page is named by an expectation", () => {
    const named = new Set(expectations.map((e) => e.fixture));
    const pages = walkFixtures(FIXTURES_DIR).filter((f) => !f.endsWith(".md"));
    expect(pages.filter((p) => !named.has(p))).toEqual([]);
  });

  afterAll(() => {
    if (work && Object.keys(work.parsed).length > 0) console.log(coverageTable());
    if (margins.size > 0) console.log(marginTable());
  });

  test("coverage thresholds: no captured results page, renamed or stripped of its classes, is refused; one whose results region is unknown markup, or cut inside it, is", () => {
    const refused: string[] = [];
    const sold_: string[] = [];
    for (const e of expectations) {
      if (!measured(e)) continue;
      const copies = work.copies[e.fixture]!;
      margins.set(e.fixture, { parser: e.parser, whole: parsedPage(e.fixture, e.parser).coverage, copies });
      for (const v of ["renamed", "dropped"] as const) {
        const j = copies[v]!;
        // Where the parser finds results on the copy, the coverage check must not refuse them.
        if (j.found && j.coverage && !understood(e.parser, j.coverage)) refused.push(`${e.fixture} ${v}: ${j.coverage.accounted}/${j.coverage.links} = ${j.coverage.ratio.toFixed(2)}`);
      }
      for (const v of ["unknown", "cut"] as const) if (sold(e.parser, copies[v])) sold_.push(`${e.fixture} ${v}: ${JSON.stringify(copies[v]!.coverage)}`);
    }
    expect(refused).toEqual([]);
    expect(sold_).toEqual([]);
    // Every kind measured had pages of each broken kind to refuse.
    const parsers = (v: Variant) => new Set([...margins.values()].filter((m) => m.copies[v]).map((m) => m.parser));
    for (const v of ["unknown", "cut"] as const) expect([...parsers(v)].sort()).toEqual(["web-images", "web-news", "web-search", "web-shopping-search"]);
  }, 120_000);

  test("every captured results page clears its kind's coverage threshold (src/coverage.ts)", () => {
    const below = expectations
      .filter((e) => e.parser && e.classify === "results")
      .map((e) => ({ e, c: parsedPage(e.fixture, e.parser!).coverage }))
      .filter(({ e, c }) => !understood(e.parser!, c))
      .map(({ e, c }) => `${e.fixture} (${e.parser}): ${c.accounted}/${c.links} = ${c.ratio.toFixed(2)}${c.cut ? ", cut" : ""}`);
    expect(below).toEqual([]);
  });

  for (const [i, e] of expectations.entries()) {
    const name = `${e.file}: ${e.fixture}${e.parser ? ` (${e.parser})` : ""}`;
    if (e.classify) {
      test(`${name} is classified ${e.classify}`, () => {
        expect(work.classified[i]).toBe(e.classify);
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
