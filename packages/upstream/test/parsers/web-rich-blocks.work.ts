/**
 * The parsing behind web-rich-blocks.test.ts, run in a Node process of its own (../in-node.ts): the
 * blocks of each captured web page the test names. The assertions stay in the test file.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { WebSearchBlocks } from "@serp/shared";
import { parseWebSearch } from "../../src/kinds/web-search/index.js";

/** Each page of `names` (in the fixtures' web/ folder, without `.html`) parsed. */
export function webRichBlocksWork(fixturesDir: string, names: string[]): Record<string, WebSearchBlocks> {
  return Object.fromEntries(names.map((name) => [name, parseWebSearch(readFileSync(join(fixturesDir, "web", `${name}.html`), "utf8"))]));
}
