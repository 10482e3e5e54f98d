/**
 * Issue 25's web blocks, per captured desktop page: what the page shows against what the parse
 * returns, and how many of the page's result links reach the blocks by their target.
 *
 * - Shown, counted on the raw page with no parser: shopping tiles (distinct `data-offer-id`s), AI
 *   overview citations (distinct `data-icl-uuid`s); returned: `shopping_results`, text blocks and
 *   list items carrying `reference_indexes`, `inline_videos`, `perspectives`, the knowledge panel's
 *   `kgmid`, `header_images` and `people_also_search_for`.
 * - Links: the coverage figure's titled result links (coverage.ts); `inBlocks` those whose target is
 *   in the blocks, the rest counted as understood only because they sit in a block the parser knows
 *   (`known`). `share` = inBlocks / links: the part of the page's results the answer returns.
 *
 * Run: node_modules/.bin/tsx bench/rich-blocks.ts [page-name-substring]
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { WebSearchBlocks } from "@serp/shared";
import { parsePage } from "@serp/upstream";
import { FIXTURES_DIR, fixturesAvailable } from "../packages/upstream/test/fixtures-dir.js";

const distinct = (html: string, re: RegExp) => new Set([...html.matchAll(re)].map((m) => m[1])).size;

function row(file: string): string {
  const html = readFileSync(join(FIXTURES_DIR, "web", file), "utf8");
  const { blocks, coverage } = parsePage("web-search", html);
  const b = blocks as WebSearchBlocks & Record<string, unknown>;
  const cited = (b.ai_overview?.text_blocks ?? []).flatMap((t) => [t, ...(t.list ?? [])]).filter((t) => t.reference_indexes?.length).length;
  const kg = b.knowledge_graph;
  const known = coverage.known ?? 0;
  const inBlocks = coverage.accounted - known;
  const cells = [
    file.replace(/\.html$/, "").padEnd(50),
    `shop ${distinct(html, /data-offer-id="([^"]+)"/g)}/${b.shopping_results?.length ?? 0}`.padEnd(11),
    `cite ${distinct(html, /data-icl-uuid="([^"]+)"/g)}/${cited}`.padEnd(10),
    `vid ${b.inline_videos?.length ?? 0}`.padEnd(7),
    `persp ${b.perspectives?.length ?? 0}`.padEnd(9),
    `kg ${kg ? `${kg.kgmid ? "id" : "-"} img ${kg.header_images?.length ?? 0} pasf ${kg.people_also_search_for?.length ?? 0}` : "none"}`.padEnd(22),
    `links ${coverage.links} inBlocks ${inBlocks} known ${known} share ${coverage.links ? (inBlocks / coverage.links).toFixed(2) : "-"}`,
  ];
  return cells.join(" ");
}

if (!fixturesAvailable) {
  console.error("captured pages not found; set SERP_FIXTURES_DIR");
  process.exit(1);
}
const only = process.argv[2];
for (const file of readdirSync(join(FIXTURES_DIR, "web")).filter((f) => f.includes("desktop") && f.endsWith(".html")).sort()) {
  if (only && !file.includes(only)) continue;
  console.log(row(file));
}
