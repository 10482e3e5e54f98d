import { readFileSync } from "node:fs";
import { isTag, type AnyNode } from "domhandler";
import { parseHtml, firstOfEach } from "/work/main/packages/upstream/src/dom.ts";
for (const f of process.argv.slice(2)) {
const doc = parseHtml(readFileSync("/work/shared/fixtures/google/" + f, "utf8"));
let tags = 0, texts = 0, inOpaque = 0; const st: [AnyNode, boolean][] = [[doc, false]];
const OP = new Set(["script", "style", "noscript", "template", "svg", "head"]);
const names = new Map<string, number>();
while (st.length) { const [x, op] = st.pop()!; if (isTag(x)) { tags++; if (op) inOpaque++; names.set(x.name, (names.get(x.name) ?? 0) + 1); for (const c of x.children) st.push([c, op || OP.has(x.name)]); } else { texts++; if ("children" in x) for (const c of (x as any).children) st.push([c, op]); } }
const N = 50; for (let i = 0; i < 10; i++) firstOfEach(doc, [".nomatch"]);
const t = performance.now(); for (let i = 0; i < N; i++) firstOfEach(doc, [".nomatch"]); 
console.log(f, { tags, texts, inOpaque, walk: (((performance.now() - t) / N) * 1000).toFixed(0) + "µs" }, [...names].sort((a, b) => b[1] - a[1]).slice(0, 8));
}
