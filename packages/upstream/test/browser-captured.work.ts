/**
 * The renders behind browser-captured.test.ts, run in a Node process of its own (./in-node.ts):
 * the browser's client and the parsers run three to five times faster there than under Jest's
 * module sandbox. Each function drives its own replay and browser pool, and returns what the test
 * asserts on.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startReplayServer } from "@serp/replay";
import { BrowserPool } from "../src/browser.js";
import { PARSERS } from "../src/kinds/index.js";
import { ask, firstDifference, settings, withoutScripted } from "./browser-support.js";

/**
 * A bound on each render, not a measure: these check what a render parses to, and on a busy 2-core
 * machine a big page has taken more than 20 s to render (the transport's own limit is tested in
 * browser.test.ts).
 */
const RENDER_BOUND_MS = 90_000;

/**
 * Every captured web page (web, web-mobile, web-nojs) served over TLS and rendered by Chromium as
 * under a challenge: `differing` lists each page whose parse differs from the captured page's (or
 * that failed), `left` each page whose own script sent the browser to another URL.
 */
export async function renderEveryWebPage(fixturesDir: string): Promise<{ pages: number; differing: string[]; left: string[] }> {
  const files = ["web", "web-mobile", "web-nojs"].flatMap((dir) => readdirSync(join(fixturesDir, dir)).map((f) => `${dir}/${f}`));
  const single = await startReplayServer({ dir: fixturesDir, https: true, routes: files.map((file) => ({ q: file.replace(/\W+/g, "-"), file })) });
  // Every page rendered (as under a challenge), which is what lets a warm page be read raw.
  const own = new BrowserPool({ concurrency: 2, renderAlways: true }, { ca: single.certPem });
  try {
    const differing: string[] = [];
    const left: string[] = [];
    const queue = [...files];
    // As many at once as the pool has pages, so no request spends its time limit waiting.
    const renderNext = async (): Promise<void> => {
      const file = queue.shift();
      if (!file) return;
      const device = file.startsWith("web-mobile/") ? "mobile" : "desktop";
      const path = `/search?q=${file.replace(/\W+/g, "-")}`;
      const r = await own.fetch(ask(single, path, { device }), { ...settings, timeoutMs: RENDER_BOUND_MS });
      if (!r.ok) differing.push(`${file}: ${r.failure} ${r.detail}`);
      else if (!r.response.url.endsWith(path)) left.push(`${file} → ${new URL(r.response.url).search.slice(0, 60)}`);
      else {
        const direct = withoutScripted(PARSERS["web-search"](readFileSync(join(fixturesDir, file), "utf8"))) as object;
        const rendered = withoutScripted(PARSERS["web-search"](r.response.body)) as object;
        if (JSON.stringify(rendered) !== JSON.stringify(direct)) differing.push(`${file}: ${firstDifference(direct, rendered)}`);
      }
      return renderNext();
    };
    await Promise.all([renderNext(), renderNext()]);
    return { pages: files.length, differing, left };
  } finally {
    await own.close();
    await single.close();
  }
}

/**
 * One captured shopping page rendered `times` times in a row, its page's CPU slowed `slowdown`
 * times by Chrome's own throttling: the captured page's parse, and each render's parse that differs
 * from it.
 */
export async function renderShoppingRepeatedly(fixturesDir: string, times: number, slowdown: number): Promise<{ direct: string; renders: number; differing: string[] }> {
  const file = "shopping/ean-7891114090307-shopping-pt-br-2021.html";
  const replay = await startReplayServer({ dir: fixturesDir, https: true, routes: [{ file }] });
  const pool = new BrowserPool({ concurrency: 1, renderAlways: true, cpuSlowdown: slowdown }, { ca: replay.certPem });
  try {
    const direct = JSON.stringify(PARSERS["web-shopping-search"](readFileSync(join(fixturesDir, file), "utf8")));
    const req = ask(replay, "/search?q=7891114090307&tbm=shop&hl=pt-BR&gl=br", { language: "pt-BR", country: "br" });
    const differing: string[] = [];
    for (let i = 0; i < times; i++) {
      const r = await pool.fetch(req, { ...settings, timeoutMs: RENDER_BOUND_MS });
      if (!r.ok) throw new Error(`render ${i}: ${r.failure} ${r.detail}`);
      const parse = JSON.stringify(PARSERS["web-shopping-search"](r.response.body));
      if (parse !== direct) differing.push(`render ${i}: ${firstDifference(JSON.parse(direct), JSON.parse(parse))}`);
    }
    return { direct, renders: times, differing };
  } finally {
    await pool.close();
    await replay.close();
  }
}
