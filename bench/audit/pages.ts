/**
 * The captured pages the field audits read (../shared/fixtures/google), and each page as they read
 * it: its text, the parsers' tree and what the parsers make of it, and the field audit's own parse5
 * tree. Each view is built on first use and once per page, so audits run together
 * (`readPages`) share one parse of every page they both read.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseHtml, type Document } from "../../packages/upstream/src/html/index.js";
import { extractImages } from "../../packages/upstream/src/kinds/web-images.js";
import { extractLocalPack } from "../../packages/upstream/src/kinds/web-local.js";
import { extractNews } from "../../packages/upstream/src/kinds/web-news.js";
import { extractWebSearch, isJsonChunks, joinJsonChunks } from "../../packages/upstream/src/kinds/web-search/index.js";
import { extractShopping } from "../../packages/upstream/src/kinds/web-shopping-search.js";
import { FIXTURES_DIR, fixturesAvailable } from "../../packages/upstream/test/fixtures-dir.js";
import { loadPage, type Page } from "./page.js";

/** The page directories of each kind (MANIFEST.md); local packs come from the web pages. */
export const PAGE_DIRS = {
  web: ["web", "web-mobile", "web-nojs"],
  news: ["news"],
  images: ["images"],
  shopping: ["shopping"],
} as const;

/** The captured pages of the directories, relative to the fixtures folder, directory by directory (names in order). */
export function filesIn(...dirs: readonly string[]): string[] {
  return dirs.flatMap((d) => readdirSync(join(FIXTURES_DIR, d)).filter((f) => f.endsWith(".html")).map((f) => `${d}/${f}`));
}

export function requireFixtures(): void {
  if (!fixturesAvailable) throw new Error(`captured pages not found at ${FIXTURES_DIR}`);
}

/** One captured page; every view below is computed on first use and kept for the page's life. */
export class CapturedPage {
  private memo = new Map<string, unknown>();
  constructor(readonly file: string) {}

  private once<T>(key: string, make: () => T): T {
    if (!this.memo.has(key)) this.memo.set(key, make());
    return this.memo.get(key) as T;
  }

  get html(): string {
    return this.once("html", () => readFileSync(join(FIXTURES_DIR, this.file), "utf8"));
  }
  /** Whether it is a web search page (web/, web-mobile/, web-nojs/). */
  get isWeb(): boolean {
    return (PAGE_DIRS.web as readonly string[]).includes(this.file.split("/")[0]!);
  }
  /** The parsers' tree of the page (of the page a web search body's JSON chunks carry, as the parser reads it). */
  get doc(): Document {
    return this.once("doc", () => parseHtml(this.isWeb && isJsonChunks(this.html) ? joinJsonChunks(this.html) : this.html));
  }
  /** The field audit's own tree (parse5's, never the parsers'). */
  get page(): Page {
    return this.once("page", () => loadPage(this.html));
  }
  /** What the page's kind parser gives (the same as its `parseX(html)`). */
  get webSearch(): ReturnType<typeof extractWebSearch> {
    return this.once("webSearch", () => extractWebSearch(this.doc));
  }
  get localPack(): ReturnType<typeof extractLocalPack> {
    return this.once("localPack", () => extractLocalPack(this.doc));
  }
  get news(): ReturnType<typeof extractNews> {
    return this.once("news", () => extractNews(this.doc));
  }
  get images(): ReturnType<typeof extractImages> {
    return this.once("images", () => extractImages(this.doc));
  }
  get shopping(): ReturnType<typeof extractShopping> {
    return this.once("shopping", () => extractShopping(this.doc));
  }
}

/** One audit's side of a walk over the pages: the pages it reads, and what it does with each. */
export interface PageReader {
  /** Its pages, in the order it reads them (its figures' and lines' order follows it). */
  files: readonly string[];
  /**
   * Reads one page. It keeps plain data only (no tree: the page is dropped once every reader has
   * read it), by page, and puts it together in the order of `files` when asked for its figures:
   * readers run together get the pages in one order that need not be theirs.
   */
  read(page: CapturedPage): void;
}

/** Walks the pages of all the readers once: each page is read and parsed once, handed to every reader that reads it, then dropped. */
export function readPages(readers: PageReader[]): void {
  requireFixtures();
  const files = [...new Set(readers.flatMap((r) => r.files))];
  for (const file of files) {
    const page = new CapturedPage(file);
    for (const r of readers) if (r.files.includes(file)) r.read(page);
  }
}
