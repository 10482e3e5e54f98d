/**
 * The browser transport's parity with the captured pages, the longest browser checks (a file of
 * their own, so Jest runs them on another worker beside browser.test.ts): every captured web page
 * rendered parses exactly as the page itself does, and a rendered shopping page parses the same 20
 * times in a row on a CPU slowed by Chrome's own throttling.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startReplayServer } from "@serp/replay";
import { BrowserPool } from "../src/browser.js";
import { PARSERS } from "../src/kinds/index.js";
import { FIXTURES_DIR } from "./fixtures-dir.js";
import { ask, d, firstDifference, settings, withoutScripted } from "./browser-support.js";

d("browser transport: every captured web page rendered", () => {
  test("the rendered HTML parses exactly as the captured page does, for every captured web page", async () => {
    const files = ["web", "web-mobile", "web-nojs"].flatMap((dir) => readdirSync(join(FIXTURES_DIR, dir)).map((f) => `${dir}/${f}`));
    const single = await startReplayServer({ dir: FIXTURES_DIR, https: true, routes: files.map((file) => ({ q: file.replace(/\W+/g, "-"), file })) });
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
        const r = await own.fetch(ask(single, path, { device }), settings);
        if (!r.ok) differing.push(`${file}: ${r.failure} ${r.detail}`);
        else if (!r.response.url.endsWith(path)) left.push(`${file} → ${new URL(r.response.url).search.slice(0, 60)}`);
        else {
          const direct = withoutScripted(PARSERS["web-search"](readFileSync(join(FIXTURES_DIR, file), "utf8"))) as object;
          const rendered = withoutScripted(PARSERS["web-search"](r.response.body)) as object;
          if (JSON.stringify(rendered) !== JSON.stringify(direct)) differing.push(`${file}: ${firstDifference(direct, rendered)}`);
        }
        return renderNext();
      };
      await Promise.all([renderNext(), renderNext()]);
      expect(differing).toEqual([]);
      // One capture's own script sends a JavaScript browser elsewhere (a 2022 Wayback copy of the
      // basic layout); the page a browser ends on is then another query's, not this capture.
      expect(left.map((l) => l.split(" → ")[0])).toEqual(["web-nojs/fatmira-brecani-basic-2022-wayback.html"]);
    } finally {
      await own.close();
      await single.close();
    }
  }, 300_000);
});

d("browser transport: snapshots on a slow CPU", () => {
  test("a rendered shopping page parses identically 20 times in a row with the page's CPU slowed 4× (Chrome's CPU throttling)", async () => {
    const file = "shopping/ean-7891114090307-shopping-pt-br-2021.html";
    const replay = await startReplayServer({ dir: FIXTURES_DIR, https: true, routes: [{ file }] });
    // The page's scripts run as on a machine four times slower or busier, without taking CPU from
    // the other test files (cpuSlowdown's effect is checked in browser.test.ts).
    const pool = new BrowserPool({ concurrency: 1, renderAlways: true, cpuSlowdown: 4 }, { ca: replay.certPem });
    try {
      const direct = JSON.stringify(PARSERS["web-shopping-search"](readFileSync(join(FIXTURES_DIR, file), "utf8")));
      expect(JSON.parse(direct).shopping_results?.length).toBeGreaterThan(0);
      const req = ask(replay, "/search?q=7891114090307&tbm=shop&hl=pt-BR&gl=br", { language: "pt-BR", country: "br" });
      const parses: string[] = [];
      for (let i = 0; i < 20; i++) {
        const r = await pool.fetch(req, { ...settings, timeoutMs: 30_000 });
        if (!r.ok) throw new Error(`render ${i}: ${r.failure} ${r.detail}`);
        parses.push(JSON.stringify(PARSERS["web-shopping-search"](r.response.body)));
      }
      expect(parses.filter((p) => p !== direct)).toEqual([]);
    } finally {
      await pool.close();
      await replay.close();
    }
  }, 120_000);
});
