/**
 * The field audits of issue 25 on the captured pages (../shared/fixtures/google), one module
 * (bench/audit/) run in one walk over the pages, each page read and parsed once for all of them:
 *
 * - fields (audit/fields.ts): of the documented fields the pages SHOW, how many reach our
 *   /search.json answer, per kind, for every item we return (detectors: audit/shown.ts, audit/page.ts);
 * - organic (audit/organic.ts): per organic result, the field families its card shows by shape
 *   against its JSON;
 * - kinds (audit/kinds.ts): per images, news, shopping and local card, the fields its markup shows
 *   against the parser's output.
 *
 *   node_modules/.bin/tsx bench/audit.ts [fields] [organic] [kinds]   (none named: all three)
 *     fields:  [--kind web|local|news|images|shopping] [--page <file part>] [--cards]; --json prints its report as JSON
 *     organic: [--pages] [--missed <field>]
 *
 * One audit named prints what its old script printed (bench/field-audit.ts, bench/organic-fields.ts,
 * bench/kind-fields.ts); several print theirs one after the other, each under its name.
 */
import type { AuditKind } from "./audit/fields.js";
import { readPages } from "./audit/pages.js";

const AUDITS = ["fields", "organic", "kinds"] as const;
type AuditName = (typeof AUDITS)[number];

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const value = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const named = AUDITS.filter((a) => args.includes(a));
  const run = new Set<AuditName>(named.length ? named : AUDITS);
  // Only the audits asked for are loaded (the field audit's answer side alone loads the API's modules).
  const fieldsAudit = run.has("fields") ? await import("./audit/fields.js") : undefined;
  const organicAudit = run.has("organic") ? await import("./audit/organic.js") : undefined;
  const kindsAudit = run.has("kinds") ? await import("./audit/kinds.js") : undefined;
  const kind = value("--kind") as AuditKind | undefined;
  const fields = fieldsAudit?.fieldsReader({ kinds: kind ? [kind] : undefined, pageFilter: value("--page"), cards: args.includes("--cards") });
  const organic = organicAudit?.organicReader();
  const kinds = kindsAudit?.kindsReader();
  readPages([fields, organic, kinds].filter((r): r is NonNullable<typeof r> => !!r));

  let printed = 0;
  /** With several audits, each report under its name. */
  const heading = (name: AuditName) => run.size > 1 && console.log(`${printed++ ? "\n" : ""}## ${name}\n`);
  if (fieldsAudit && fields) {
    heading("fields");
    const report = fields.report();
    console.log(args.includes("--json") ? JSON.stringify(report, null, 2) : fieldsAudit.formatAudit(report));
  }
  if (organicAudit && organic) {
    heading("organic");
    console.log(organicAudit.formatOrganic(organic.results(), organic.files.length, { pages: args.includes("--pages"), missed: value("--missed") }));
  }
  if (kindsAudit && kinds) {
    heading("kinds");
    console.log(kindsAudit.formatKinds(kinds.figures()));
  }
}

if (process.argv[1] && /bench[/\\]audit\.ts$/.test(process.argv[1])) await main();
