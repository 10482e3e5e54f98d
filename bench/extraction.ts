/**
 * Benchmark 4: extraction time per captured page and MB/s, next to a bare `parse5.parse` of the
 * same page (the least any parse5-based parser must do). Extraction is what a worker runs on a
 * page: its kind's parser and the page's coverage figure, read from the same tree (`parsePage`).
 * Rounds alternate between the two so both see the same machine load.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parse } from "parse5";
import type { Endpoint } from "@serp/shared";
import { parsePage } from "@serp/upstream";
import { FIXTURES_DIR, fixturesAvailable } from "../packages/upstream/test/fixtures-dir.js";
import { fmt, runIfMain, signed, type Row } from "./lib.js";

const KIND_PARSER: Record<string, Endpoint> = {
  web: "web-search", "web-mobile": "web-search", "web-nojs": "web-search", videos: "web-search",
  news: "web-news", images: "web-images", shopping: "web-shopping-search", "shopping-product": "web-shopping-product",
};

function time(fn: () => unknown, minMs: number): number {
  fn();
  let n = 0;
  const start = performance.now();
  do {
    fn();
    n++;
  } while (performance.now() - start < minMs);
  return (performance.now() - start) / n;
}

export async function benchExtraction(minMsPerPage = 120, print = true): Promise<Row> {
  if (!fixturesAvailable) throw new Error(`captured pages not found at ${FIXTURES_DIR}`);
  const pages = Object.entries(KIND_PARSER).flatMap(([dir, parser]) =>
    readdirSync(join(FIXTURES_DIR, dir)).filter((f) => f.endsWith(".html")).map((f) => ({ file: `${dir}/${f}`, parser })),
  );
  let totalBare = 0;
  let totalParser = 0;
  let totalBytes = 0;
  const lines: string[] = [];
  for (const { file, parser } of pages) {
    const html = readFileSync(join(FIXTURES_DIR, file), "utf8");
    const bytes = Buffer.byteLength(html);
    let bare = 0;
    let full = 0;
    for (let round = 0; round < 3; round++) {
      bare += time(() => parse(html), minMsPerPage / 3);
      full += time(() => parsePage(parser, html), minMsPerPage / 3);
    }
    bare /= 3;
    full /= 3;
    totalBare += bare;
    totalParser += full;
    totalBytes += bytes;
    lines.push(
      `${file.padEnd(70)} ${(bytes / 1024).toFixed(0).padStart(5)} KB  parse5 ${fmt(bare, 2).padStart(6)} ms  parser ${fmt(full, 2).padStart(6)} ms  ` +
        `${fmt(bytes / 1e6 / (full / 1000)).padStart(6)} MB/s  ${signed((full / bare - 1) * 100, 0)}%`,
    );
  }
  if (print) console.log(lines.join("\n"));
  const overhead = totalParser / totalBare - 1;
  const mbps = totalBytes / 1e6 / (totalParser / 1000);
  const bareMbps = totalBytes / 1e6 / (totalBare / 1000);
  console.log(`extraction: ${pages.length} pages, ${fmt(totalBytes / 1e6)} MB; parsers ${fmt(mbps)} MB/s vs bare parse5 ${fmt(bareMbps)} MB/s; ${signed(overhead * 100)}%`);
  return {
    benchmark: "4. extraction per page (all captured pages)",
    measured: `${fmt(totalParser / pages.length, 2)} ms/page, ${fmt(mbps)} MB/s`,
    baseline: `${fmt(totalBare / pages.length, 2)} ms/page, ${fmt(bareMbps)} MB/s (bare parse5.parse)`,
    ratio: `${signed(overhead * 100)}%`,
    // Issue 17: parsers and the coverage figure together within +20% of bare parse5.
    target: "<= +20%",
    met: overhead <= 0.2,
  };
}

await runIfMain(import.meta.url, () => benchExtraction());
