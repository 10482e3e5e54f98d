import { readFileSync, readdirSync } from "node:fs";
import { parseHtml, firstOfEach, matches, hasClass, type Element } from "/work/main/packages/upstream/src/dom.ts";
const D = "/work/shared/fixtures/google/";
const files = ["web", "web-mobile", "web-nojs"].flatMap((d) => readdirSync(D + d).map((f) => `${d}/${f}`));
const docs = files.map((f) => parseHtml(readFileSync(D + f, "utf8")));
const p1 = (el: Element) => { const c = el.attribs.class; return c !== undefined && (c.includes("related-question-pair") || c.includes("C7GS5b")) && matches(el, "div.related-question-pair, span.C7GS5b:has(+ div .yStFkb)"); };
const p2 = (el: Element) => { const c = el.attribs.class; return (el.name === "g-section-with-header" || (c !== undefined && (c.includes("m7jPZ") || c.includes("Xdlr0d")))) && matches(el, 'g-section-with-header:has(a[href*="tbm=nws"]), div.m7jPZ, div.Xdlr0d:has(a.BVG0Nb[href*="/url?q="])'); };
const p3 = (el: Element) => el.attribs.id === "eKIzJc" || (el.name === "div" && el.attribs["data-mcpr"] !== undefined);
const p4 = (el: Element) => el.attribs["data-attrid"] === "title" || (!!el.attribs.class?.includes("kno-ecr-pt") && hasClass(el, "kno-ecr-pt"));
const RE = /(?:^|\s)(?:related-question-pair|C7GS5b|m7jPZ|Xdlr0d|kno-ecr-pt)(?:\s|$)/;
const combined = [(el: Element) => { const c = el.attribs.class; return c !== undefined && RE.test(c) && matches(el, "div.related-question-pair, span.C7GS5b:has(+ div .yStFkb)"); }, p2, p3, p4];
const none = () => false;
const runs: [string, () => void][] = [
  ["4 separate", () => { for (const d of docs) for (const p of [p1, p2, p3, p4]) firstOfEach(d, [p]); }],
  ["1 shared", () => { for (const d of docs) firstOfEach(d, [p1, p2, p3, p4]); }],
  ["1 walk no tests", () => { for (const d of docs) firstOfEach(d, [none]); }],
];
for (const [, r] of runs) for (let i = 0; i < 5; i++) r();
for (const [n, r] of runs) { const K = 20; const t = performance.now(); for (let i = 0; i < K; i++) r(); console.log(n, ((performance.now() - t) / K).toFixed(1), "ms per 37 pages"); }
const one = (el: Element) => { const a = el.attribs; const c = a.class; if (c !== undefined && RE.test(c)) return true; return a.id === "eKIzJc" || a["data-attrid"] === "title" || a["data-mcpr"] !== undefined || el.name === "g-section-with-header"; };
const onlyClass = (el: Element) => { const c = el.attribs.class; return c !== undefined && RE.test(c); };
for (const [n, r] of [["combined one predicate", () => { for (const d of docs) firstOfEach(d, [one]); }], ["class regex only", () => { for (const d of docs) firstOfEach(d, [onlyClass]); }]] as [string, () => void][]) { for (let i = 0; i < 5; i++) r(); const K = 20; const t = performance.now(); for (let i = 0; i < K; i++) r(); console.log(n, ((performance.now() - t) / K).toFixed(1), "ms per 37 pages"); }
const wrap = (p: (el: Element) => boolean) => (el: Element) => { p(el); return false; };
for (const [n, p] of [["p1 rq", p1], ["p2 ts", p2], ["p3 aio", p3], ["p4 kg", p4], ["one", one], ["none", none]] as [string, (el: Element) => boolean][]) { const r = () => { for (const d of docs) firstOfEach(d, [wrap(p)]); }; for (let i = 0; i < 5; i++) r(); const K = 20; const t = performance.now(); for (let i = 0; i < K; i++) r(); console.log("full walk with", n, ((performance.now() - t) / K).toFixed(1), "ms"); }
