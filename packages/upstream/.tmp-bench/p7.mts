import { readFileSync, readdirSync } from "node:fs";
import { parseHtml } from "/work/main/packages/upstream/src/dom.ts";
import { extractAiOverview } from "/work/main/packages/upstream/src/parsers/web/ai-overview.ts";
import { extractRelatedQuestions } from "/work/main/packages/upstream/src/parsers/web/related-questions.ts";
import { extractTopStories } from "/work/main/packages/upstream/src/parsers/web/top-stories.ts";
import { extractKnowledgeGraph } from "/work/main/packages/upstream/src/parsers/web/knowledge-graph.ts";
const D = "/work/shared/fixtures/google/";
const files = ["web", "web-mobile", "web-nojs"].flatMap((d) => readdirSync(D + d).map((f) => `${d}/${f}`));
const htmls = files.map((f) => readFileSync(D + f, "utf8"));
const docs = htmls.map((h) => parseHtml(h));
const fns = { aio: extractAiOverview, rq: extractRelatedQuestions, ts: extractTopStories, kg: extractKnowledgeGraph } as const;
for (let r = 0; r < 3; r++) for (const d of docs) for (const fn of Object.values(fns)) fn(d as never);
const K = 3;
let t = performance.now(); for (let r = 0; r < K; r++) for (const h of htmls) parseHtml(h); const parse = (performance.now() - t) / K;
const res: Record<string, number> = {};
for (const [name, fn] of Object.entries(fns)) { t = performance.now(); for (let r = 0; r < K * 10; r++) for (const d of docs) fn(d as never); res[name] = (performance.now() - t) / (K * 10); }
const blocks = Object.values(res).reduce((a, b) => a + b, 0);
console.log(`parse all pages ${parse.toFixed(0)}ms; four blocks ${blocks.toFixed(1)}ms = ${((blocks / parse) * 100).toFixed(1)}%`, Object.fromEntries(Object.entries(res).map(([k, v]) => [k, v.toFixed(1)])));
