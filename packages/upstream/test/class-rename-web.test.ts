/**
 * Web search's blocks hold when class names change (issue 25): every captured page the web search
 * parser reads (web/, web-mobile/, web-nojs/, the progressive JSON pages of upstream-json/ and the
 * video-results page of videos/: see MANIFEST.md and the conformance expectations), with each class
 * attribute rewritten through a random renaming (one new name for each class, consistent across the
 * page) and with every class attribute dropped, still gives, block by block, at least 90% of the
 * items the original page gives, with the same key fields:
 *
 * - organic results: link, title and snippet. The original's snippet is read by class; a copy's by
 *   shape (the block's longest run of text outside its links, its leading date read apart), which
 *   leaves out a "Read more" link, a date or a byline the class reader keeps in it, or keeps one it
 *   leaves out, and reads no separator hidden from screen readers: compared by their letters and
 *   digits, one snippet holds the other, which is at least 60% of its length. On the pages of
 *   `FACTS_ROW_SNIPPETS` the class reader takes a facts row (rating, price, stock) for the snippet,
 *   which the shape reader passes over for the text under it: their snippets are not compared;
 * - related questions: the question; related searches: the query;
 * - ads, top stories, discussions and forums: title and link;
 * - the knowledge panel: the same title, and its type, description, kgmid and attributes (each as
 *   key → value), at least 90% of them equal. The basic layout's panel block (`BASIC_PANELS`) is still
 *   read by class only: its figures are printed, not checked;
 * - the AI overview: its text blocks' snippets (a list's, its items') and its page token; its
 *   references' links.
 *
 * Local packs are held to the same in class-rename.test.ts. The coverage check (src/coverage.ts)
 * must let every copy through where the parser finds results (conformance.test.ts prints the margins).
 *
 * The seed is printed in the title: RENAME_SEED=<seed> replays a run.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import type { WebSearchBlocks } from "@serp/shared";
import { understood } from "../src/coverage.js";
import type { PageRun, Variant } from "./class-rename-web.work.js";
import { FIXTURES_DIR, fixturesAvailable } from "./fixtures-dir.js";
import { inNode } from "./in-node.js";

const seed = Number(process.env.RENAME_SEED ?? Date.now() % 100_000);
const describeIfFixtures = fixturesAvailable ? describe : describe.skip;

/** Folders whose pages web search parses (videos/ holds one page of web search's video results). */
const DIRS = ["web", "web-mobile", "web-nojs", "upstream-json", "videos"];
const VARIANTS: readonly Variant[] = ["renamed", "dropped"];

/** A text's letters and digits: spacing and separators (`·`, often hidden from screen readers) aside. */
const lettersOf = (s: string | undefined) => (s ?? "").replace(/[^\p{L}\p{N}]+/gu, "").toLowerCase();

/** One snippet holds the other, which is most of it (by letters and digits). */
function sameSnippet(original: string | undefined, copy: string | undefined): boolean {
  const o = lettersOf(original);
  const c = lettersOf(copy);
  if (!o) return true;
  const [short, long] = c.length <= o.length ? [c, o] : [o, c];
  return short.length >= 0.6 * long.length && long.includes(short);
}

/**
 * Pages whose class reader takes a facts row for the snippet (organic.ts: the first snippet-class
 * match of the block): `Rating 8.7/10 (1,957,975)` (web-nojs/matrix-nojs-2023), `13 380,00 ₽ В
 * наличии` (upstream-json/kommod-milan-tch-json-ru-2024). The shape reader gives the text under it.
 */
const FACTS_ROW_SNIPPETS = new Set(["web-nojs/matrix-nojs-2023.html", "upstream-json/kommod-milan-tch-json-ru-2024.txt"]);

/**
 * Basic pages (`gbv=1`) whose knowledge panel is the basic layout's block (knowledge-graph.ts
 * `basicPanel`), not yet found by shape: their panel is counted in the printed table, not checked.
 */
const BASIC_PANELS = new Set(["web-nojs/coffee-nojs-2023.html", "web-nojs/domain-nojs-2023.html", "web-nojs/matrix-nojs-2023.html"]);

type Item = Record<string, unknown>;
interface BlockCheck {
  block: keyof WebSearchBlocks;
  /** Whether a copy's item is the original's, by its key fields. */
  same: (original: Item, copy: Item) => boolean;
  /** The block's items, where the block is one object rather than a list (knowledge panel, AI overview). */
  items?: (blocks: WebSearchBlocks) => Item[];
}

const str = (v: unknown) => (typeof v === "string" ? v : undefined);
/** Each block's check by name (organic results twice: with their snippet, and by link and title alone). */
const CHECKS: Record<string, BlockCheck> = {
  organic_results: { block: "organic_results", same: (o, c) => o.link === c.link && o.title === c.title && sameSnippet(str(o.snippet), str(c.snippet)) },
  "organic (link, title)": { block: "organic_results", same: (o, c) => o.link === c.link && o.title === c.title },
  related_questions: { block: "related_questions", same: (o, c) => o.question === c.question },
  related_searches: { block: "related_searches", same: (o, c) => o.query === c.query },
  ads: { block: "ads", same: (o, c) => o.title === c.title && o.link === c.link },
  top_stories: { block: "top_stories", same: (o, c) => o.title === c.title && o.link === c.link },
  discussions_and_forums: { block: "discussions_and_forums", same: (o, c) => o.title === c.title && o.link === c.link },
  "knowledge_graph title": { block: "knowledge_graph", same: sameField, items: (b) => (b.knowledge_graph ? [{ field: "title", value: b.knowledge_graph.title }] : []) },
  knowledge_graph: { block: "knowledge_graph", same: sameField, items: (b) => panelFields(b.knowledge_graph) },
  "ai_overview text": { block: "ai_overview", same: sameField, items: (b) => overviewText(b.ai_overview) },
  "ai_overview references": { block: "ai_overview", same: sameField, items: (b) => (b.ai_overview?.references ?? []).map((r) => ({ field: "link", value: r.link })) },
};
const itemsOf = (blocks: WebSearchBlocks, check: BlockCheck) => (check.items ? check.items(blocks) : ((blocks[check.block] ?? []) as Item[]));

/** One field of a block that is one object: its name and value. */
function sameField(o: Item, c: Item): boolean {
  return o.field === c.field && o.value === c.value;
}

/** A knowledge panel's key fields (its title is checked apart): type, description, kgmid, and each attribute as key → value. */
function panelFields(graph: WebSearchBlocks["knowledge_graph"]): Item[] {
  if (!graph) return [];
  const fields: Item[] = [];
  for (const field of ["type", "description", "kgmid"] as const) if (graph[field]) fields.push({ field, value: graph[field] });
  for (const [key, value] of Object.entries(graph.attributes ?? {})) fields.push({ field: `attributes.${key}`, value });
  return fields;
}

/** An AI overview's text: each text block's snippet (a list's, its items' snippets), or its page token. */
function overviewText(overview: WebSearchBlocks["ai_overview"]): Item[] {
  if (!overview) return [];
  const blocks = (overview.text_blocks ?? []).map((b) => ({ field: "snippet", value: b.snippet ?? (b.list ?? []).map((i) => i.snippet).join("\n") }));
  return overview.page_token ? [...blocks, { field: "page_token", value: overview.page_token }] : blocks;
}

/** How many of the original's items the copy gives (each copy item paired once), and how many it gives besides. */
function kept(original: Item[], copy: Item[], check: BlockCheck): { kept: number; extra: number } {
  const left = [...copy];
  let n = 0;
  for (const o of original) {
    const at = left.findIndex((c) => check.same(o, c));
    if (at >= 0) {
      left.splice(at, 1);
      n++;
    }
  }
  return { kept: n, extra: left.length };
}

describeIfFixtures(`web search blocks: class names renamed (seed ${seed}) or dropped`, () => {
  // Listed here too, so that each page is a test of its own.
  const pages = DIRS.flatMap((d) => readdirSync(join(FIXTURES_DIR, d)).filter((f) => /\.(html|txt)$/.test(f)).map((f) => `${d}/${f}`));
  const runs = new Map<string, PageRun>();
  // Each page parsed as captured and in its copies, in a Node process of its own (class-rename-web.work.ts).
  beforeAll(async () => {
    const done = await inNode<PageRun[]>(new URL("./class-rename-web.work.ts", import.meta.url), "renamedRuns", FIXTURES_DIR, DIRS, seed);
    for (const r of done) runs.set(r.page, r);
  }, 600_000);
  const run = (page: string): PageRun => runs.get(page)!;

  afterAll(() => {
    // Per block: items the copies keep of the originals', summed over the pages (and items they give besides).
    const rows = Object.entries(CHECKS).map(([name, check]) => {
      const cells = VARIANTS.map((v) => {
        let k = 0, total = 0, extra = 0;
        for (const r of runs.values()) {
          const o = itemsOf(r.original, check);
          const c = itemsOf(r.copies[v].blocks, check);
          const m = kept(o, c, check);
          k += m.kept;
          total += o.length;
          extra += m.extra;
        }
        return `${`${k}/${total}`.padStart(9)} (+${extra})`.padEnd(18);
      });
      return `${name.padEnd(24)} ${cells.join(" ")}`;
    });
    if (runs.size) console.log(`items kept on ${runs.size} pages, seed ${seed} (kept/original, +given besides):\n${"block".padEnd(24)} ${VARIANTS.map((v) => v.padEnd(18)).join(" ")}\n${rows.join("\n")}`);
  });

  test("the web pages are there to test", () => {
    expect(pages.length).toBeGreaterThanOrEqual(40);
  });

  test.each(pages)("%s: each block keeps ≥ 90% of its items with their key fields; coverage lets the copies through", (page) => {
    const { original, copies } = run(page);
    const short: string[] = [];
    for (const [name, check] of Object.entries(CHECKS)) {
      const o = itemsOf(original, check);
      if (!o.length || (name === "organic_results" && FACTS_ROW_SNIPPETS.has(page))) continue;
      if (check.block === "knowledge_graph" && BASIC_PANELS.has(page)) continue;
      for (const v of VARIANTS) {
        const { kept: k } = kept(o, itemsOf(copies[v].blocks, check), check);
        if (k < Math.ceil(0.9 * o.length)) short.push(`${name} ${v}: ${k}/${o.length}`);
      }
    }
    expect(short).toEqual([]);
    for (const v of VARIANTS) {
      const { blocks, coverage } = copies[v];
      if (blocks.organic_results.length) expect({ variant: v, understood: understood("web-search", coverage), coverage }).toMatchObject({ understood: true });
    }
  });

  test("every block is on some page", () => {
    const all = pages.map(run);
    const without = Object.keys(CHECKS).filter((name) => !all.some((r) => itemsOf(r.original, CHECKS[name]!).length));
    expect(without).toEqual([]);
  });
});

describe("a snippet read by shape against the one read by class", () => {
  test("the same text, or most of it read whole inside it", () => {
    expect(sameSnippet("Mar 22, 2023 — A snippet of a result, long enough to matter. Read more", "A snippet of a result, long enough to matter.")).toBe(true);
    expect(sameSnippet("M Kuhlmann 著 · 2006 · 被引用数: 193 — QFT is the extension of quantum mechanics", "M Kuhlmann 著2006被引用数: 193 — QFT is the extension of quantum mechanics")).toBe(true);
    expect(sameSnippet("A snippet of a result, long enough", "by RL Siegel — A snippet of a result, long enough")).toBe(true);
    expect(sameSnippet(undefined, "anything")).toBe(true);
  });
  test("another text, or a sliver of it, is not", () => {
    expect(sameSnippet("A snippet of a result, long enough to matter", "Another result's snippet")).toBe(false);
    expect(sameSnippet("A snippet of a result, long enough to matter", "A snippet")).toBe(false);
    expect(sameSnippet("A snippet", undefined)).toBe(false);
  });
});
