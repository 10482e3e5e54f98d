/**
 * `reparse`: today's parsers over the upstream pages the workers kept (RAW_HTML_RETENTION_SECONDS),
 * each compared with the result its job was sold with. An operator runs it before shipping a
 * parser fix, against real traffic: per job, the count of every block before and after, and the
 * first item that differs; a summary line last. Reads only: no job or result is changed.
 */
import { buildResult, isEndpoint, type Endpoint, type JobResult } from "@serp/shared";
import { RawPageMissingError, decompressPage, type JobStore, type KeptPage, type RawPageStore } from "@serp/store";
import { COVERAGE_THRESHOLDS, parsePage, understood, type Coverage } from "@serp/upstream";

export interface ReparseOptions {
  /** Pages kept at or after this time (ms). */
  sinceMs: number;
  endpoint?: Endpoint;
  /** The most recent this many pages only. */
  limit?: number;
}

export interface Difference {
  /** `organic_results[3]`, `knowledge_graph.description`. */
  path: string;
  before: unknown;
  after: unknown;
}

export interface ReparseRow {
  jobId: string;
  endpoint: Endpoint;
  query: string;
  keptAt: string;
  /** `no_job`: the job record expired before its page; `failed`: today's parser threw on the page. */
  status: "unchanged" | "changed" | "no_job" | "failed";
  /** Items per block, as sold and as parsed today (every block either has). */
  counts?: Record<string, [before: number, after: number]>;
  firstDifference?: Difference;
  /** Today's coverage figure, where the kind measures one. */
  coverage?: Coverage & { understood: boolean; threshold: number };
  error?: string;
}

/** `90s`, `30m`, `1h`, `2d` → ms; undefined when it is none of these. */
export function durationMs(text: string): number | undefined {
  const m = /^(\d{1,6})(s|m|h|d)$/.exec(text.trim());
  if (!m) return undefined;
  return Number(m[1]) * { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as "s" | "m" | "h" | "d"];
}

/** `web-search`, or its engine name `web_search`. */
export function endpointNamed(text: string): Endpoint | undefined {
  const name = text.trim().replace(/_/g, "-");
  return isEndpoint(name) ? name : undefined;
}

type Blocks = Record<string, unknown>;

/** The result's blocks (its parameters are the job's, not the parser's). */
/** A result's blocks: what it carries besides its parameters and the layout of the page it came from. */
function blocksOf(result: JobResult | null): Blocks {
  const { search_parameters: _sp, layout: _layout, ...blocks } = (result ?? {}) as Blocks;
  return blocks;
}

/** An array block's items (a web page's local pack keeps them under `places`). */
function items(value: unknown): unknown[] | undefined {
  if (Array.isArray(value)) return value;
  if (value && typeof value === "object" && Array.isArray((value as { places?: unknown }).places)) return (value as { places: unknown[] }).places;
  return undefined;
}

function countOf(value: unknown): number {
  const list = items(value);
  if (list) return list.length;
  if (value === undefined || value === null) return 0;
  return typeof value === "object" && Object.keys(value).length === 0 ? 0 : 1;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The first place the two results differ, block by block in the order they appear. */
export function firstDifference(before: Blocks, after: Blocks): Difference | undefined {
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  for (const key of keys) {
    const [b, a] = [before[key], after[key]];
    if (same(b, a)) continue;
    const [bl, al] = [items(b), items(a)];
    if (bl && al) {
      const inner = Array.isArray(b) ? "" : ".places";
      for (let i = 0; i < Math.max(bl.length, al.length); i++) {
        if (!same(bl[i], al[i])) return { path: `${key}${inner}[${i}]`, before: bl[i], after: al[i] };
      }
    }
    if (b && a && typeof b === "object" && typeof a === "object" && !Array.isArray(b) && !Array.isArray(a)) {
      const [bo, ao] = [b as Blocks, a as Blocks];
      const sub = [...new Set([...Object.keys(bo), ...Object.keys(ao)])].find((k) => !same(bo[k], ao[k]));
      if (sub !== undefined) return { path: `${key}.${sub}`, before: bo[sub], after: ao[sub] };
    }
    return { path: key, before: b, after: a };
  }
  return undefined;
}

export async function reparse(pages: RawPageStore, jobs: JobStore, o: ReparseOptions): Promise<ReparseRow[]> {
  const ids = await pages.since(o.sinceMs);
  // Oldest first; with a limit, the most recent ones of the kind asked for.
  const chosen: KeptPage[] = [];
  for (let i = ids.length - 1; i >= 0 && (o.limit === undefined || chosen.length < o.limit); i--) {
    // A page whose bytes are gone from the page store (swept early, another host's folder) is left out.
    const page = await pages.compressed(ids[i]!).catch((err: Error) => {
      if (err instanceof RawPageMissingError) return null;
      throw err;
    });
    if (page && (!o.endpoint || page.endpoint === o.endpoint)) chosen.unshift(page);
  }
  const rows: ReparseRow[] = [];
  for (const kept of chosen) {
    const id = kept.jobId;
    const page = { ...kept, body: await decompressPage(kept.data) };
    const record = await jobs.get(id);
    const base = { jobId: id, endpoint: page.endpoint, keptAt: new Date(page.keptAt).toISOString(), query: record?.job.params.query ?? record?.job.params.product_id ?? "" };
    if (!record) {
      rows.push({ ...base, status: "no_job" });
      continue;
    }
    let parsed: ReturnType<typeof parsePage>;
    try {
      parsed = parsePage(page.endpoint, page.body);
    } catch (err) {
      rows.push({ ...base, status: "failed", error: (err as Error).message });
      continue;
    }
    const before = blocksOf(record.result);
    const after = blocksOf(buildResult(page.endpoint, record.job.params, parsed.blocks));
    const counts: ReparseRow["counts"] = {};
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) counts[key] = [countOf(before[key]), countOf(after[key])];
    const difference = firstDifference(before, after);
    const row: ReparseRow = { ...base, status: difference ? "changed" : "unchanged", counts };
    if (difference) row.firstDifference = difference;
    if (parsed.coverage.layout !== "none") {
      row.coverage = { ...parsed.coverage, understood: understood(page.endpoint, parsed.coverage), threshold: COVERAGE_THRESHOLDS[page.endpoint] };
    }
    rows.push(row);
  }
  return rows;
}

/** A value in one line, cut short. */
function shown(value: unknown, max = 240): string {
  if (value === undefined) return "(none)";
  const text = JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** One block of lines per job, then the summary. */
export function formatReparse(rows: ReparseRow[], sinceMs: number): string {
  const lines: string[] = [];
  for (const r of rows) {
    const head = `${r.jobId} ${r.endpoint} ${JSON.stringify(r.query)} (kept ${r.keptAt})`;
    if (r.status === "no_job") {
      lines.push(`${head}: no job record (expired before its page); not compared`);
      continue;
    }
    if (r.status === "failed") {
      lines.push(`${head}: today's parser FAILED: ${r.error}`);
      continue;
    }
    const counts = Object.entries(r.counts ?? {})
      .map(([block, [b, a]]) => (b === a ? `${block} ${b}` : `${block} ${b} → ${a}`))
      .join(", ");
    lines.push(`${head}: ${r.status}${counts ? `; ${counts}` : ""}`);
    if (r.firstDifference) {
      const d = r.firstDifference;
      lines.push(`  first difference at ${d.path}:`, `    before ${shown(d.before)}`, `    after  ${shown(d.after)}`);
    }
    if (r.coverage && !r.coverage.understood) {
      lines.push(`  coverage ${r.coverage.ratio.toFixed(2)} < ${r.coverage.threshold}: today a worker would refuse this page as understood only in part`);
    }
  }
  const n = (status: ReparseRow["status"]) => rows.filter((r) => r.status === status).length;
  lines.push(
    `${rows.length} page${rows.length === 1 ? "" : "s"} re-parsed (kept since ${new Date(sinceMs).toISOString()}): ` +
      `${n("changed")} changed, ${n("unchanged")} unchanged, ${n("no_job")} without a job record, ${n("failed")} failed to parse`,
  );
  return lines.join("\n");
}
