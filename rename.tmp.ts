import { readFileSync, readdirSync } from "node:fs";
import { PARSERS } from "./packages/upstream/src/kinds/index.js";
const dir = "/work/shared/fixtures/google/";
const KIND: Record<string, string> = { web: "web-search", "web-mobile": "web-search", "web-nojs": "web-search", news: "web-news", images: "web-images", shopping: "web-shopping-search" };
function rename(html: string, mode: "random" | "drop"): string {
  const map = new Map<string, string>();
  let n = 0;
  return html.replace(/(\sclass\s*=\s*)("([^"]*)"|'([^']*)')/gi, (_m, pre, _q, a, b) => {
    if (mode === "drop") return "";
    const v = (a ?? b) as string;
    const out = v.split(/\s+/).filter(Boolean).map((c) => { if (!map.has(c)) map.set(c, "z" + (n++).toString(36) + "q"); return map.get(c)!; }).join(" ");
    return `${pre}"${out}"`;
  });
}
function count(blocks: any): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(blocks ?? {})) {
    if (Array.isArray(v)) out[k] = v.length;
    else if (v && typeof v === "object" && Array.isArray((v as any).places)) out[k] = (v as any).places.length;
    else if (v && typeof v === "object") out[k] = 1;
  }
  return out;
}
const only = process.argv[2];
for (const sub of Object.keys(KIND)) {
  if (only && sub !== only) continue;
  for (const f of readdirSync(dir + sub)) {
    const html = readFileSync(dir + sub + "/" + f, "utf8");
    const p = (PARSERS as any)[KIND[sub]!];
    let a: any, b: any, c: any;
    try { a = count(p(html)); } catch (e) { a = { err: 1 }; }
    try { b = count(p(rename(html, "random"))); } catch (e) { b = { err: 1 }; }
    try { c = count(p(rename(html, "drop"))); } catch (e) { c = { err: 1 }; }
    const tot = (o: any) => Object.values(o).reduce((x: number, y: any) => x + y, 0) as number;
    const keys = Object.keys(a).filter((k) => k !== "search_information");
    const lost = keys.filter((k) => (b[k] ?? 0) < 0.9 * a[k]).map((k) => `${k} ${a[k]}→${b[k] ?? 0}/${c[k] ?? 0}`);
    console.log(`${sub}/${f}`.padEnd(70), tot(a), tot(b), tot(c), lost.join("; "));
  }
}
