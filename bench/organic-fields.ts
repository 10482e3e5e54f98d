/**
 * The organic-result field audit of issue 25: on every shared web page (web/, web-mobile/,
 * web-nojs/), for each field family, how many organic results' cards show it (told from the card's
 * HTML by its shape: packages/upstream/test/organic-cards.ts) and how many of those our JSON gives it
 * to; and how many results have it in the JSON where the card shows no such shape (to read by hand:
 * the shapes are simple, so some are the detector's misses, not the parser's inventions).
 *
 * `node_modules/.bin/tsx bench/organic-fields.ts` (`--pages` adds a line per page and field;
 * `--missed <field>` lists the results whose card shows the field and whose JSON lacks it).
 */
import { FIXTURES_DIR, fixturesAvailable } from "../packages/upstream/test/fixtures-dir.js";
import { auditPage, auditPages, FIELDS, hasField, type AuditedResult } from "../packages/upstream/test/organic-cards.js";

if (!fixturesAvailable) throw new Error(`captured pages not found at ${FIXTURES_DIR}`);
const args = process.argv.slice(2);
const missedField = args.includes("--missed") ? args[args.indexOf("--missed") + 1] : undefined;

const results: AuditedResult[] = auditPages().flatMap(auditPage);
const withCard = results.filter((r) => r.card);
console.log(`${results.length} organic results on ${auditPages().length} pages (${withCard.length} with their card found)\n`);

const rows = FIELDS.map((field) => {
  const shown = withCard.filter((r) => r.shows.has(field));
  const found = shown.filter((r) => hasField(r.result, field));
  const extra = withCard.filter((r) => !r.shows.has(field) && hasField(r.result, field));
  const share = shown.length ? `${((found.length / shown.length) * 100).toFixed(0)}%` : "-";
  return [field, String(shown.length), String(found.length), share, String(extra.length)];
});
const head = ["field", "cards showing it", "JSON has it", "found", "JSON has it, no shape seen"];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (cells: string[]) => `| ${cells.map((c, i) => (i ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(" | ")} |`;
console.log([line(head), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line)].join("\n"));

if (args.includes("--pages")) {
  console.log("");
  const pages = [...new Set(results.map((r) => r.page))];
  for (const page of pages) {
    const on = withCard.filter((r) => r.page === page);
    const cells = FIELDS.map((f) => `${f} ${on.filter((r) => r.shows.has(f) && hasField(r.result, f)).length}/${on.filter((r) => r.shows.has(f)).length}`);
    console.log(`${page.padEnd(58)} ${String(on.length).padStart(3)} results  ${cells.join("  ")}`);
  }
}

if (missedField) {
  console.log("");
  for (const r of withCard.filter((x) => x.shows.has(missedField as never) && !hasField(x.result, missedField as never))) {
    console.log(`${r.page}  #${r.result.position} ${r.result.title.slice(0, 60)}`);
  }
}
