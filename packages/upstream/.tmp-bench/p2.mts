import { readFileSync } from "node:fs";
import { parseHtml, firstOfEach, first } from "/work/main/packages/upstream/src/dom.ts";
import { extractAiOverview } from "/work/main/packages/upstream/src/parsers/web/ai-overview.ts";
import { extractRelatedQuestions } from "/work/main/packages/upstream/src/parsers/web/related-questions.ts";
import { extractTopStories } from "/work/main/packages/upstream/src/parsers/web/top-stories.ts";
import { extractKnowledgeGraph } from "/work/main/packages/upstream/src/parsers/web/knowledge-graph.ts";
for (const f of process.argv.slice(2)) {
const doc = parseHtml(readFileSync("/work/shared/fixtures/google/" + f, "utf8"));
const fns: [string, () => unknown][] = [
 ["aio", () => extractAiOverview(doc)], ["rq", () => extractRelatedQuestions(doc)], ["ts", () => extractTopStories(doc)], ["kg", () => extractKnowledgeGraph(doc)],
 ["walk aio sel", () => firstOfEach(doc, ["#eKIzJc, div[data-mcpr]"])],
 ["walk #eKIzJc", () => firstOfEach(doc, ["#eKIzJc"])],
 ["walk nomatch", () => firstOfEach(doc, [".nomatch"])],
 ["walk 4 sels", () => firstOfEach(doc, ["#eKIzJc, div[data-mcpr]", "div.related-question-pair, span.C7GS5b:has(+ div .yStFkb)", 'g-section-with-header:has(a[href*="tbm=nws"]), div.m7jPZ, div.Xdlr0d:has(a.BVG0Nb[href*="/url?q="])', '[data-attrid="title"], .kno-ecr-pt'])],
 ["first nomatch", () => first(".nomatch", doc)],
];
for (const [, fn] of fns) for (let i = 0; i < 30; i++) fn();
const out: string[] = [];
for (const [name, fn] of fns) { const N = 100; const t = performance.now(); for (let i = 0; i < N; i++) fn(); out.push(`${name} ${(((performance.now() - t) / N) * 1000).toFixed(0)}µs`); }
console.log(f, out.join(" | "));
}
