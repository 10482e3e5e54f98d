import { readFileSync } from "node:fs";
import { isTag, type AnyNode, type Element } from "domhandler";
import { compile } from "css-select";
import { parseHtml } from "/work/main/packages/upstream/src/dom.ts";
for (const f of process.argv.slice(2)) {
const doc = parseHtml(readFileSync("/work/shared/fixtures/google/" + f, "utf8"));
const OP = new Set(["script", "style", "noscript", "template", "svg", "head"]);
function walk(test: (e: Element) => boolean) { const st: AnyNode[] = [doc]; let n = 0; while (st.length) { const x = st.pop()!; if (isTag(x)) { if (OP.has(x.name)) continue; n++; if (test(x)) return n; const c = x.children; for (let i = c.length - 1; i >= 0; i--) if (isTag(c[i]!)) st.push(c[i]!); } else if ("children" in x) { const c = (x as any).children; for (let i = c.length - 1; i >= 0; i--) st.push(c[i]); } } return n; }
const cs = compile(".nomatch"); const cs2 = compile("div.related-question-pair, span.C7GS5b:has(+ div .yStFkb)");
const tests: [string, (e: Element) => boolean][] = [["none", () => false], ["classIncludes", (e) => (e.attribs.class ?? "").includes("nomatchx")], ["css .nomatch", cs as any], ["css paa", cs2 as any]];
for (const [, t] of tests) for (let i = 0; i < 30; i++) walk(t);
const out: string[] = [];
for (const [name, t] of tests) { const N = 200; const t0 = performance.now(); let n = 0; for (let i = 0; i < N; i++) n = walk(t); out.push(`${name} ${(((performance.now() - t0) / N) * 1000).toFixed(0)}µs(n=${n})`); }
console.log(f, out.join(" | "));
}
