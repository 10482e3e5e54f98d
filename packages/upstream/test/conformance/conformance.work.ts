/**
 * The parsing behind conformance.test.ts, run in a Node process of its own (in-node.ts): every page
 * an expectation names through its kind's parser (blocks and coverage figure), its classification,
 * and, per results page, how the coverage check judges the copies a redesign could leave or that
 * must be refused.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Endpoint } from "@serp/shared";
import { classify } from "../../src/classify.js";
import type { PageClass } from "../../src/failures.js";
import { parsePage, type Coverage } from "../../src/coverage.js";
import { kindOf } from "../../src/kinds/index.js";
import { cutInRegion, REGION_IDS, regionInside, unknownRegion } from "../cut-region.js";
import { dropClasses, renameClasses } from "../rename-classes.js";

export interface BlockExpectation {
  count?: number;
  minCount?: number;
  present?: boolean;
  first?: Record<string, unknown>[];
  match?: Record<string, unknown>;
  all?: { title: string; link: string }[];
  minRecall?: number;
}
export interface PageExpectation {
  file: string;
  fixture: string;
  parser?: Endpoint;
  classify?: PageClass;
  blocks?: Record<string, BlockExpectation>;
  note?: string;
}

const expectationDir = join(dirname(fileURLToPath(import.meta.url)), "expectations");
/** The expectations checked in beside this file, each with the file it came from. */
export const expectations: PageExpectation[] = readdirSync(expectationDir)
  .filter((f) => f.endsWith(".json"))
  .sort()
  .flatMap((file) => (JSON.parse(readFileSync(join(expectationDir, file), "utf8")) as Omit<PageExpectation, "file">[]).map((e) => ({ file, ...e })));

/** A copy of a page and how the coverage check judged it. */
export interface Judged {
  /** The figure, or undefined when the parser refused the page outright (nothing is sold either). */
  coverage?: Coverage;
  /** Whether the parser found anything to sell (a page where it finds nothing fails as unparseable, whatever its figure). */
  found: boolean;
}
export type Variant = "renamed" | "dropped" | "unknown" | "cut";
/** The seed of the class renaming: fixed, so a failure replays. */
const RENAME_SEED = 2025;

function judge(parser: Endpoint, body: string): Judged {
  try {
    const { blocks, coverage } = parsePage(parser, body);
    return { coverage, found: kindOf(parser).hasContent(blocks as never) };
  } catch {
    return { found: false };
  }
}

/** Whether the coverage check measures the kind's results region (the kinds whose copies are judged). */
export const measured = (e: PageExpectation): e is PageExpectation & { parser: Endpoint } =>
  !!e.parser && e.classify === "results" && kindOf(e.parser).coverage.region !== undefined;

export interface Work {
  /** Each page parsed once per parser, as a worker parses it: its blocks and coverage figure, by `parser:fixture`. */
  parsed: Record<string, { blocks: unknown; coverage: Coverage }>;
  /** Each expectation's page's class, by the expectation's index (those that name a class). */
  classified: Record<number, PageClass>;
  /** Per measured results page, each copy's judgement. */
  copies: Record<string, Partial<Record<Variant, Judged>>>;
}

export const parsedKey = (parser: Endpoint, fixture: string) => `${parser}:${fixture}`;

export function conformanceWork(fixturesDir: string): Work {
  const work: Work = { parsed: {}, classified: {}, copies: {} };
  const read = (fixture: string) => readFileSync(join(fixturesDir, fixture), "utf8");
  for (const [i, e] of expectations.entries()) {
    const body = read(e.fixture);
    if (e.classify) work.classified[i] = classify({ statusCode: 200, headers: {}, body, url: "https://www.google.com/search" }, e.parser ?? "web-search");
    if (e.parser && (e.blocks || e.classify === "results")) work.parsed[parsedKey(e.parser, e.fixture)] = parsePage(e.parser, body);
    if (!measured(e)) continue;
    const ids = REGION_IDS[e.parser as keyof typeof REGION_IDS];
    // A progressive page's copies are made of the page its chunks carry.
    const wrapped = kindOf(e.parser).wrapped;
    const page = wrapped?.test(body) ? wrapped.page(body) : body;
    const copies: Partial<Record<Variant, Judged>> = {
      renamed: judge(e.parser, renameClasses(page, RENAME_SEED)),
      dropped: judge(e.parser, dropClasses(page)),
    };
    const inside = ids && regionInside(page, ids);
    const unknown = ids && unknownRegion(page, ids, inside);
    if (unknown) copies.unknown = judge(e.parser, unknown);
    const cut = ids && cutInRegion(page, ids, inside);
    if (cut) copies.cut = judge(e.parser, cut);
    work.copies[e.fixture] = copies;
  }
  return work;
}
