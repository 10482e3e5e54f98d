import { readFileSync } from "node:fs";
import { parseHtml, firstOfEach, all } from "/work/main/packages/upstream/src/dom.ts";
import { extractAiOverview } from "/work/main/packages/upstream/src/parsers/web/ai-overview.ts";
for (const f of process.argv.slice(2)) {
const doc = parseHtml(readFileSync("/work/shared/fixtures/google/" + f, "utf8"));
const [c] = firstOfEach(doc, ["#eKIzJc, div[data-mcpr]"]);
const fns: [string, () => unknown][] = [["full", () => extractAiOverview(doc)], ["walk", () => firstOfEach(doc, ["#eKIzJc, div[data-mcpr]"])], ["refs all", () => all("li.LLtSOc, li.CyMdWb", c!)], ["walk container", () => firstOfEach(c!, [".nomatch"])]];
for (const [, fn] of fns) for (let i = 0; i < 20; i++) fn();
console.log(f, fns.map(([n, fn]) => { const N = 50; const t = performance.now(); for (let i = 0; i < N; i++) fn(); return `${n} ${(((performance.now() - t) / N) * 1000).toFixed(0)}µs`; }).join(" | "));
}
