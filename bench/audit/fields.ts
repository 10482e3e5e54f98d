/**
 * Field audit (issue 25): of the documented fields (reference/serpapi-shapes.md) that the captured
 * pages SHOW, how many reach our /search.json answer.
 *
 *   node_modules/.bin/tsx bench/audit.ts fields [--json] [--kind web|local|news|images|shopping] [--page <file part>] [--cards]
 *
 * Our side: each shared page goes through the code /search.json runs (the kind's parser, the
 * worker's `buildResult`, the compatibility `envelope`), in process. The page side never uses our
 * parsers: what each returned item's card shows is told by the audit's own detectors (shown.ts,
 * whose head lists every rule) on a parse5 tree of the page (page.ts).
 * Returned: the item's field is present and not empty (an object or list counts when it has content).
 * A field returned but not shown is not counted: the share is shown → returned.
 */
import { buildResult, type BlocksByEndpoint, type Endpoint, type Job, type JobParams } from "@serp/shared";
import { envelope } from "../../apps/api/src/compat/response.js";
import { searchOfJob } from "../../apps/api/src/compat/params.js";
import { SERVICE_OPTIONS, baseOf, targetOf, textOf, type El } from "./page.js";
import { filesIn, PAGE_DIRS, readPages, type CapturedPage, type PageReader } from "./pages.js";
import {
  aiReferencesShown,
  imageFields,
  knowledgePanelShown,
  localFields,
  locate,
  newsFields,
  organicFields,
  placeCards,
  relatedQuestionsShown,
  shoppingFields,
  webBlocksShown,
  type Located,
} from "./shown.js";

export type AuditKind = "web" | "local" | "news" | "images" | "shopping";
type Item = Record<string, unknown>;

/** The endpoint of each kind's pages (pages.ts); local packs come from the web pages. */
const ENDPOINT: Record<Exclude<AuditKind, "local">, Endpoint> = { web: "web-search", news: "web-news", images: "web-images", shopping: "web-shopping-search" };

// ---- our answer ----------------------------------------------------------------------------------

/** What GET /search.json answers for a page the kind's parser gave these blocks: buildResult → compatibility envelope. */
export function answerOf<E extends Endpoint>(endpoint: E, blocks: BlocksByEndpoint[E], mobile = false): Record<string, unknown> {
  const params: JobParams = { query: "audit", country: "us", language: "en", page: 1, ...(endpoint === "web-search" ? { device: mobile ? "mobile" : "desktop" } : {}) };
  const result = buildResult(endpoint, params, blocks as never);
  const now = new Date().toISOString();
  const job: Job = { id: "audit", endpoint, queue: "live", status: "completed", params, credits: 1, latencyMs: 0, error: null, attempts: 1, createdAt: now, completedAt: now };
  return envelope(searchOfJob(job), { job, accountId: "audit", result, upstreamUrl: null }, "http://localhost");
}

export function present(v: unknown): boolean {
  if (v === undefined || v === null || v === "" || v === false) return v === false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === "object") return Object.values(v as object).some(present);
  return true;
}
const at = (item: Item, path: string): unknown => path.split(".").reduce<unknown>((o, k) => (o && typeof o === "object" ? (o as Item)[k] : undefined), item);

// ---- tallies --------------------------------------------------------------------------------------

interface Tally {
  shown: number;
  returned: number;
  /** The page with the most items showing the field without it in our answer. */
  example?: string;
  missingByPage?: Record<string, number>;
}
export interface KindReport {
  kind: AuditKind;
  pages: number;
  items: number;
  unlocated: number;
  /** Item fields only (whole blocks apart): the kind's figure. */
  shown: number;
  returned: number;
  share: number | null;
  /** Web search: whole blocks shown on a page (one each per page) and returned. */
  blocks?: { shown: number; returned: number; share: number | null };
  fields: Record<string, Tally & { share: number | null }>;
}

class Counter {
  fields = new Map<string, Tally>();
  pages = 0;
  items = 0;
  unlocated = 0;
  add(field: string, shown: boolean, returned: boolean, page: string) {
    const t = this.fields.get(field) ?? { shown: 0, returned: 0 };
    this.fields.set(field, t);
    if (!shown) return;
    t.shown++;
    if (returned) t.returned++;
    else {
      const by = (t.missingByPage ??= {});
      by[page] = (by[page] ?? 0) + 1;
      if (!t.example || by[page]! > by[t.example]!) t.example = page;
    }
  }
  report(kind: AuditKind): KindReport {
    let shown = 0;
    let returned = 0;
    const fields: KindReport["fields"] = {};
    let blockShown = 0;
    let blockReturned = 0;
    for (const [name, t] of this.fields) {
      if (name.startsWith("block:")) {
        blockShown += t.shown;
        blockReturned += t.returned;
      } else {
        shown += t.shown;
        returned += t.returned;
      }
      const { missingByPage: _m, ...tally } = t;
      fields[name] = { ...tally, share: t.shown ? t.returned / t.shown : null };
    }
    const report: KindReport = { kind, pages: this.pages, items: this.items, unlocated: this.unlocated, shown, returned, share: shown ? returned / shown : null, fields };
    if (blockShown) report.blocks = { shown: blockShown, returned: blockReturned, share: blockReturned / blockShown };
    return report;
  }
}

/**
 * What one page adds to the counters, kept as data (no tree) and replayed into them in the audit's
 * page order: a field's example page is the first with the most items missing it, and the
 * `--cards` lines come page by page.
 */
type Step = { kind: AuditKind; count: "pages" | "items" | "unlocated" } | { kind: AuditKind; field: string; shown: boolean; returned: boolean } | { line: string };

/** One kind's counting on one page. */
class PageCount {
  constructor(
    private steps: Step[],
    private kind: AuditKind,
  ) {}
  count(what: "pages" | "items" | "unlocated") {
    this.steps.push({ kind: this.kind, count: what });
  }
  add(field: string, shown: boolean, returned: boolean) {
    this.steps.push({ kind: this.kind, field, shown, returned });
  }
}

/** Each item against its card: counts what the card shows and whether the item has it, and logs the verdict. */
function judgeItems(
  file: string,
  label: string,
  titleWidth: number,
  cards: Array<Located | undefined>,
  items: Item[],
  c: PageCount,
  fields: (card: El, head: El, item: Item, add: (f: string, shown: boolean) => void) => void,
  returnedOf: Record<string, (i: Item) => boolean>,
  log: (line: string) => void,
): void {
  items.forEach((item, i) => {
    c.count("items");
    const loc = cards[i];
    if (!loc) return void c.count("unlocated");
    const judged: string[] = [];
    fields(loc.card, loc.head, item, (f, shown) => {
      const returned = (returnedOf[f] ?? ((it: Item) => present(at(it, f))))(item);
      c.add(f, shown, returned);
      if (shown) judged.push(`${f}${returned ? "" : "✗"}`);
    });
    log(`${file} ${label} #${item.position} ${String(item.title).slice(0, titleWidth)} :: ${judged.join(" ")}${process.env.AUDIT_TEXT ? `\n    ${textOf(loc.card).slice(0, Number(process.env.AUDIT_TEXT))}` : ""}`);
  });
}

const ORGANIC_RETURNED: Record<string, (i: Item) => boolean> = {
  rich_snippet: (i) => present(i.rich_snippet),
};

const KG_KNOWN = new Set(["title", "type", "kgmid", "knowledge_graph_search_link", "serpapi_knowledge_graph_search_link", "header_images", "description", "source", "website", "thumbnail", "people_also_search_for", "see_results_about", "attributes"]);

function kgReturned(kg: Item | undefined, field: string): boolean {
  if (!kg) return false;
  if (field === "attributes") return present(kg.attributes) || Object.keys(kg).some((k) => !KG_KNOWN.has(k) && !k.endsWith("_link") && !k.endsWith("_links") && present(kg[k]));
  return present(kg[field]);
}

const BLOCK_RETURNED: Record<string, (o: Record<string, unknown>) => boolean> = {
  ai_overview: (o) => present(o.ai_overview),
  knowledge_graph: (o) => present(o.knowledge_graph),
  related_questions: (o) => present(o.related_questions),
  related_searches: (o) => present(o.related_searches),
  top_stories: (o) => present(o.top_stories),
  ads: (o) => present(o.ads),
  inline_shopping: (o) => present(o.shopping_results) || present(o.inline_shopping) || present(o.inline_shopping_results) || present(o.immersive_products),
  inline_videos: (o) => present(o.inline_videos) || present(o.video_results) || present(o.videos),
  perspectives: (o) => present(o.perspectives),
  local_results: (o) => present(o.local_results),
};

const LOCAL_RETURNED: Record<string, (i: Item) => boolean> = {
  service_options: (i) => present(i.service_options) || (typeof i.description === "string" && SERVICE_OPTIONS.test(i.description)),
};

const NEWS_RETURNED: Record<string, (i: Item) => boolean> = {
  source: (i) => present(i.source),
};

const IMAGE_RETURNED: Record<string, (i: Item) => boolean> = {
  is_product: (i) => i.is_product === true,
  in_stock: (i) => typeof i.in_stock === "boolean",
};

const SHOPPING_RETURNED: Record<string, (i: Item) => boolean> = {
  thumbnail: (i) => present(i.thumbnail) || present(i.thumbnails),
};


// ---- the run ---------------------------------------------------------------------------------------------------------

export interface AuditOptions {
  kinds?: AuditKind[];
  pageFilter?: string;
  /** Print each located card's fields as judged (to check the detectors by eye). */
  cards?: boolean;
}

export interface AuditReport {
  kinds: KindReport[];
  gaps: Array<{ kind: AuditKind; field: string; shown: number; returned: number; missing: number; example?: string }>;
}

function pagesOf(kind: Exclude<AuditKind, "local">, filter?: string): string[] {
  return filesIn(...PAGE_DIRS[kind]).filter((f) => !filter || f.includes(filter)).sort();
}

const SIMPLE: Array<["news" | "images" | "shopping", string, string[], number, (card: El, head: El, item: Item, add: (f: string, s: boolean) => void) => void, Record<string, (i: Item) => boolean>]> = [
  ["news", "news_results", ["link"], 1500, (card, _h, item, add) => newsFields(card, item, add), NEWS_RETURNED],
  ["images", "images_results", ["link"], 600, (card, _h, item, add) => imageFields(card, item, add), IMAGE_RETURNED],
  ["shopping", "shopping_results", ["product_link", "link", "tracking_link"], 600, (card, _h, item, add) => shoppingFields(card, item, add), SHOPPING_RETURNED],
];

/** A web page's items and blocks, judged (web), and its local pack's places (local). */
function readWebPage(p: CapturedPage, want: Set<AuditKind>, steps: Step[], log: (s: string) => void): void {
  const file = p.file;
  const page = p.page;
  const out = answerOf("web-search", p.webSearch, file.startsWith("web-mobile/"));
  if (want.has("web")) {
    const c = new PageCount(steps, "web");
    c.count("pages");
    const items = (out.organic_results as Item[] | undefined) ?? [];
    judgeItems(file, "organic", 50, locate(page, items, ["link"], "title", 2500), items, c, organicFields, ORGANIC_RETURNED, log);
    const kg = knowledgePanelShown(page);
    if (kg) {
      for (const [f, shown] of Object.entries(kg)) {
        const returned = kgReturned(out.knowledge_graph as Item | undefined, f);
        c.add(`knowledge_graph.${f}`, shown, returned);
        if (shown) log(`${file} knowledge_graph.${f}${returned ? "" : "✗"}`);
      }
    }
    const stories = (out.top_stories as Item[] | undefined) ?? [];
    locate(page, stories, ["link"], "title", 800).forEach((loc, i) => {
      if (!loc) return;
      newsFields(loc.card, stories[i]!, (f, shown) => {
        if (f !== "source" && f !== "date" && f !== "thumbnail") return;
        const returned = present(stories[i]![f]);
        c.add(`top_stories.${f}`, shown, returned);
        if (shown) log(`${file} top_stories #${i + 1}.${f}${returned ? "" : "✗"}`);
      });
    });
    const questions = (out.related_questions as Item[] | undefined) ?? [];
    relatedQuestionsShown(page, questions).forEach((shown, i) => {
      if (!shown) return;
      for (const [f, isShown] of Object.entries(shown)) {
        const returned = present(questions[i]![f]);
        c.add(`related_questions.${f}`, isShown, returned);
        if (isShown) log(`${file} related_questions #${i + 1}.${f}${returned ? "" : "✗"}`);
      }
    });
    const refs = aiReferencesShown(page, items);
    const returnedRefs = new Set(((out.ai_overview as { references?: Item[] } | undefined)?.references ?? []).map((r) => baseOf(targetOf(String(r.link ?? "")))));
    for (const t of refs) {
      const returned = returnedRefs.has(t);
      c.add("ai_overview.references", true, returned);
      log(`${file} ai_overview.references ${t.slice(0, 60)}${returned ? "" : "✗"}`);
    }
    const blocks = webBlocksShown(page);
    for (const [name, shown] of Object.entries(blocks)) {
      const returned = BLOCK_RETURNED[name]!(out);
      c.add(`block:${name}`, shown, returned);
      if (shown) log(`${file} block ${name}${returned ? "" : "✗"}`);
    }
  }
  if (want.has("local")) {
    const lr = out.local_results as { places?: Item[] } | Item[] | undefined;
    const places = Array.isArray(lr) ? lr : (lr?.places ?? []);
    const c = new PageCount(steps, "local");
    if (places.length) c.count("pages");
    const cards = placeCards(page, places);
    places.forEach((pl, i) => {
      c.count("items");
      const card = cards[i];
      if (!card) return void c.count("unlocated");
      const judged: string[] = [];
      localFields(page, card, pl, (f, shown) => {
        const returned = (LOCAL_RETURNED[f] ?? ((it: Item) => present(at(it, f))))(pl);
        c.add(f, shown, returned);
        if (shown) judged.push(`${f}${returned ? "" : "✗"}`);
      }, String(pl.title ?? ""));
      log(`${file} place #${pl.position} ${String(pl.title).slice(0, 40)} :: ${judged.join(" ")}${process.env.AUDIT_TEXT ? `\n    ${textOf(card).slice(0, Number(process.env.AUDIT_TEXT))}` : ""}`);
    });
  }
}

/** The parser's blocks of a news, images or shopping page, from its one tree (pages.ts). */
const blocksOf = (p: CapturedPage, kind: "news" | "images" | "shopping") => (kind === "news" ? p.news : kind === "images" ? p.images : p.shopping);

/** The field audit's side of a walk over the pages (pages.ts). */
export function fieldsReader(opts: AuditOptions = {}): PageReader & { report(): AuditReport } {
  const want = new Set<AuditKind>(opts.kinds ?? ["web", "local", "news", "images", "shopping"]);
  const webPages = want.has("web") || want.has("local") ? pagesOf("web", opts.pageFilter) : [];
  const simplePages = SIMPLE.map(([kind]) => (want.has(kind) ? pagesOf(kind, opts.pageFilter) : []));
  /** In the audit's own order: the web pages (web and local), then news, images and shopping. */
  const files = [...webPages, ...simplePages.flat()];
  const stepsOf = new Map<string, Step[]>();
  return {
    files,
    read(p) {
      const steps: Step[] = [];
      const log = (line: string) => opts.cards && steps.push({ line });
      if (webPages.includes(p.file)) readWebPage(p, want, steps, log);
      SIMPLE.forEach(([kind, block, linkKey, maxText, fields, returnedOf], i) => {
        if (!simplePages[i]!.includes(p.file)) return;
        const c = new PageCount(steps, kind);
        const out = answerOf(ENDPOINT[kind], blocksOf(p, kind) as never);
        c.count("pages");
        const items = (out[block] as Item[] | undefined) ?? [];
        judgeItems(p.file, kind, 40, locate(p.page, items, linkKey, "title", maxText), items, c, fields, returnedOf, log);
      });
      stepsOf.set(p.file, steps);
    },
    report() {
      const counters = new Map<AuditKind, Counter>((["web", "local", "news", "images", "shopping"] as AuditKind[]).map((k) => [k, new Counter()]));
      for (const file of files) {
        for (const step of stepsOf.get(file) ?? []) {
          if ("line" in step) console.log(step.line);
          else if ("count" in step) counters.get(step.kind)![step.count]++;
          else counters.get(step.kind)!.add(step.field, step.shown, step.returned, file);
        }
      }
      const kinds = [...counters].filter(([k]) => want.has(k)).map(([k, c]) => c.report(k));
      const gaps = kinds
        .flatMap((r) => Object.entries(r.fields).map(([field, t]) => ({ kind: r.kind, field, shown: t.shown, returned: t.returned, missing: t.shown - t.returned, example: t.example })))
        .filter((g) => g.missing > 0)
        .sort((a, b) => b.missing - a.missing)
        .slice(0, 10);
      return { kinds, gaps };
    },
  };
}

/** The field audit, alone. */
export function runAudit(opts: AuditOptions = {}): AuditReport {
  const reader = fieldsReader(opts);
  readPages([reader]);
  return reader.report();
}

const pct = (x: number | null) => (x === null ? "  n/a" : `${(x * 100).toFixed(0).padStart(4)}%`);

export function formatAudit(r: AuditReport): string {
  const lines: string[] = [];
  lines.push("kind       pages  items  unlocated   shown  returned  share");
  for (const k of r.kinds) {
    lines.push(`${k.kind.padEnd(10)} ${String(k.pages).padStart(5)} ${String(k.items).padStart(6)} ${String(k.unlocated).padStart(10)} ${String(k.shown).padStart(7)} ${String(k.returned).padStart(9)}  ${pct(k.share)}`);
    if (k.blocks) lines.push(`${(k.kind + " blocks").padEnd(10)} ${"".padStart(5)} ${"".padStart(6)} ${"".padStart(10)} ${String(k.blocks.shown).padStart(7)} ${String(k.blocks.returned).padStart(9)}  ${pct(k.blocks.share)}`);
  }
  for (const k of r.kinds) {
    lines.push("", `${k.kind}: field${" ".repeat(32 - k.kind.length)}shown  returned  share`);
    for (const [f, t] of Object.entries(k.fields)) lines.push(`  ${f.padEnd(36)} ${String(t.shown).padStart(6)} ${String(t.returned).padStart(9)}  ${pct(t.share)}`);
  }
  lines.push("", "largest gaps (shown but not returned):");
  for (const g of r.gaps) lines.push(`  ${g.kind.padEnd(9)} ${g.field.padEnd(36)} ${String(g.returned).padStart(4)}/${String(g.shown).padEnd(4)} missing ${String(g.missing).padStart(4)}  e.g. ${g.example ?? ""}`);
  return lines.join("\n");
}
