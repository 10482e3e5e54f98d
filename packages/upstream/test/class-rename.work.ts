/**
 * The parsing behind class-rename.test.ts, run in a Node process of its own (in-node.ts): each page of
 * news, shopping and images, and each web page with a local pack, read as captured and in its two
 * copies (every class renamed with the seed; every class dropped).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseHtml } from "../src/html/index.js";
import { parseImages } from "../src/kinds/web-images.js";
import { extractLocalPack } from "../src/kinds/web-local.js";
import { parseNews } from "../src/kinds/web-news.js";
import { parseShopping } from "../src/kinds/web-shopping-search.js";
import { dropClasses, renameClasses } from "./rename-classes.js";

export interface Renamed<T> {
  original: T[];
  /** The renamed copy, then the dropped one: whether it differs from the page, and what was read. */
  copies: { differs: boolean; items: T[] }[];
}

export function renamedKinds(fixturesDir: string, seed: number) {
  const read = (page: string) => readFileSync(join(fixturesDir, page), "utf8");
  const each = <T>(pages: string[], items: (html: string) => T[]) =>
    Object.fromEntries(
      pages.map((page) => {
        const html = read(page);
        const copies = [renameClasses(html, seed), dropClasses(html)].map((changed) => ({ differs: changed !== html, items: items(changed) }));
        return [page, { original: items(html), copies } satisfies Renamed<T>];
      }),
    );
  const htmlIn = (dir: string) => readdirSync(join(fixturesDir, dir)).filter((f) => f.endsWith(".html")).map((f) => `${dir}/${f}`);
  const places = (html: string) => extractLocalPack(parseHtml(html))?.places ?? [];
  const web = ["web", "web-mobile", "web-nojs"].flatMap((d) => readdirSync(join(fixturesDir, d)).map((f) => `${d}/${f}`));
  return {
    news: each(htmlIn("news"), (html) => parseNews(html).news_results),
    shopping: each(htmlIn("shopping"), (html) => parseShopping(html).shopping_results),
    images: each(htmlIn("images"), (html) => parseImages(html).images_results),
    /** The web pages with a local pack only. */
    local: each(web.filter((page) => places(read(page)).length > 0), places),
  };
}

export type RenamedKinds = ReturnType<typeof renamedKinds>;
