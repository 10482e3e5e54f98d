/**
 * The parsing behind class-rename-web.test.ts, run in a Node process of its own (in-node.ts): each
 * page web search parses, as captured and in its two copies (classes renamed with the seed; dropped).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { WebSearchBlocks } from "@serp/shared";
import { parsePage, type Coverage } from "../src/coverage.js";
import { isJsonChunks, joinJsonChunks } from "../src/kinds/web-search/index.js";
import { dropClasses, renameClasses } from "./rename-classes.js";

export type Variant = "renamed" | "dropped";
export interface PageRun {
  page: string;
  original: WebSearchBlocks;
  copies: Record<Variant, { blocks: WebSearchBlocks; coverage: Coverage }>;
}

/** The pages of `dirs` (under `fixturesDir`) web search parses. */
export const webPages = (fixturesDir: string, dirs: readonly string[]) =>
  dirs.flatMap((d) => readdirSync(join(fixturesDir, d)).filter((f) => /\.(html|txt)$/.test(f)).map((f) => `${d}/${f}`));

export function renamedRuns(fixturesDir: string, dirs: readonly string[], seed: number): PageRun[] {
  return webPages(fixturesDir, dirs).map((page) => {
    // The page as HTML (a progressive JSON page joined first: its class attributes sit in JSON strings).
    const body = readFileSync(join(fixturesDir, page), "utf8");
    const html = isJsonChunks(body) ? joinJsonChunks(body) : body;
    const copy = (changed: string) => parsePage("web-search", changed);
    return { page, original: parsePage("web-search", html).blocks, copies: { renamed: copy(renameClasses(html, seed)), dropped: copy(dropClasses(html)) } };
  });
}
