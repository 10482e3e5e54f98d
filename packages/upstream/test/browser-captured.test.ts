/**
 * The browser transport's parity with the captured pages, the longest browser checks (a file of
 * their own, so Jest runs them on another worker beside browser.test.ts): every captured web page
 * rendered parses exactly as the page itself does, and a rendered shopping page parses the same 20
 * times in a row on a CPU slowed by Chrome's own throttling. The renders and parses run in a Node
 * process of their own (browser-captured.work.ts, through in-node.ts); the assertions are here.
 */
import { FIXTURES_DIR } from "./fixtures-dir.js";
import { d } from "./browser-support.js";
import { inNode } from "./in-node.js";

const work = new URL("./browser-captured.work.ts", import.meta.url);

d("browser transport: every captured web page rendered", () => {
  test("the rendered HTML parses exactly as the captured page does, for every captured web page", async () => {
    const { pages, differing, left } = await inNode<{ pages: number; differing: string[]; left: string[] }>(work, "renderEveryWebPage", FIXTURES_DIR);
    expect(pages).toBeGreaterThan(30);
    expect(differing).toEqual([]);
    // One capture's own script sends a JavaScript browser elsewhere (a 2022 Wayback copy of the
    // basic layout); the page a browser ends on is then another query's, not this capture.
    expect(left.map((l) => l.split(" → ")[0])).toEqual(["web-nojs/fatmira-brecani-basic-2022-wayback.html"]);
  }, 600_000);
});

d("browser transport: snapshots on a slow CPU", () => {
  test("a rendered shopping page parses identically 20 times in a row with the page's CPU slowed 4× (Chrome's CPU throttling)", async () => {
    // The page's scripts run as on a machine four times slower or busier, without taking CPU from
    // the other test files (cpuSlowdown's effect is checked in browser.test.ts).
    const { direct, renders, differing } = await inNode<{ direct: string; renders: number; differing: string[] }>(work, "renderShoppingRepeatedly", FIXTURES_DIR, 20, 4);
    expect(JSON.parse(direct).shopping_results?.length).toBeGreaterThan(0);
    expect(renders).toBe(20);
    expect(differing).toEqual([]);
  }, 300_000);
});
