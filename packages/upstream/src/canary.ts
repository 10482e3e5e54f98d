/**
 * The canary: one known query per result kind through every profile the table lists for it, past
 * the breakers, so an operator (or an alert) learns which ways of asking work right now before a
 * customer's job finds out. A kind with no working profile makes the report fail.
 */
import type { Endpoint, JobParams } from "@serp/shared";
import { PROFILE_SETS, type ProfileSet } from "./profiles.js";
import type { TryRecord, Upstream } from "./scrape.js";

/** The query each kind is asked. Product kinds need a product the upstream knows: `CANARY_PRODUCT_ID`. */
export const CANARY_PARAMS = (productId = "13239497633151178800"): Record<ProfileSet, { endpoint: Endpoint; params: JobParams }> => {
  const search = (query: string, device: "desktop" | "mobile" = "desktop"): JobParams => ({ query, country: "us", language: "en", page: 1, device });
  const product: JobParams = { product_id: productId, country: "us", language: "en" };
  return {
    "web-search": { endpoint: "web-search", params: search("coffee") },
    "web-search-mobile": { endpoint: "web-search", params: search("coffee", "mobile") },
    "web-news": { endpoint: "web-news", params: search("coffee") },
    "web-images": { endpoint: "web-images", params: search("coffee") },
    "web-local": { endpoint: "web-local", params: search("coffee") },
    "web-shopping-search": { endpoint: "web-shopping-search", params: search("coffee maker") },
    "web-shopping-product": { endpoint: "web-shopping-product", params: product },
    "web-shopping-product-info": { endpoint: "web-shopping-product-info", params: product },
    "web-autocomplete": { endpoint: "web-autocomplete", params: search("cheesecake") },
  };
};

export interface CanaryRow {
  kind: ProfileSet;
  profile: string;
  transport: string;
  /** The page class the try came to (`results`, `no_results`, `js_wall`, `refused`, …). */
  outcome: TryRecord["outcome"];
  status?: number;
  ms: number;
  detail?: string;
}

export interface CanaryReport {
  tableVersion: string;
  rows: CanaryRow[];
  /** Per kind, the profiles that answered with a page that parsed. */
  working: Record<ProfileSet, string[]>;
  /** Kinds with no working profile. */
  dead: ProfileSet[];
  ok: boolean;
}

export interface CanaryOptions {
  productId?: string;
  /** Only these kinds. Default: every kind the table lists. */
  kinds?: readonly ProfileSet[];
  signal?: AbortSignal;
}

/** Asks every rung of every kind once, one request at a time (a canary must not look like a burst). */
export async function runCanary(upstream: Pick<Upstream, "tryProfile" | "profiles">, opts: CanaryOptions = {}): Promise<CanaryReport> {
  const table = upstream.profiles();
  const asks = CANARY_PARAMS(opts.productId);
  const kinds = opts.kinds ?? PROFILE_SETS;
  const rows: CanaryRow[] = [];
  const working = {} as Record<ProfileSet, string[]>;
  for (const kind of kinds) {
    const { endpoint, params } = asks[kind];
    working[kind] = [];
    for (const profile of table.kinds[kind]) {
      const t = await upstream.tryProfile(endpoint, params, profile.name, opts.signal);
      rows.push({
        kind,
        profile: t.profile,
        transport: t.transport,
        outcome: t.outcome,
        ms: t.ms,
        ...(t.status !== undefined ? { status: t.status } : {}),
        ...(t.detail ? { detail: t.detail } : {}),
      });
      if (t.outcome === "results" || t.outcome === "no_results") working[kind].push(t.profile);
    }
  }
  const dead = kinds.filter((k) => working[k].length === 0);
  return { tableVersion: table.version, rows, working, dead, ok: dead.length === 0 };
}

/** The report as a table for a terminal: one line per try, then the verdict per kind. */
export function formatCanary(report: CanaryReport): string {
  const head = ["kind", "profile", "transport", "outcome", "status", "ms"];
  const lines = report.rows.map((r) => [r.kind, r.profile, r.transport, r.outcome, r.status === undefined ? "-" : String(r.status), String(r.ms)]);
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  const verdicts = Object.entries(report.working).map(([kind, names]) =>
    names.length ? `ok    ${kind}: ${names.join(", ")}` : `DEAD  ${kind}: no working profile`,
  );
  return [`profile table ${report.tableVersion}`, fmt(head), ...lines.map(fmt), "", ...verdicts].join("\n");
}

