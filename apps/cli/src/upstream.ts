/**
 * The operators' view of the upstream: `canary` asks every profile of every kind once from here
 * (with the workers' upstream settings: UPSTREAM_BASE_URL, UPSTREAM_PROFILES_FILE, proxies…) and
 * prints which work right now; `upstream status` prints what the running workers publish about
 * their profiles' breakers.
 */
import type { PublishedStatus } from "@serp/store";
import {
  createUpstream,
  formatCanary,
  GATEWAY,
  poolsOfList,
  proxyLabel,
  readExitsFile,
  type ExitsConfig,
  type ExitStatus,
  PROFILE_SETS,
  runCanary,
  readUpstreamEnv,
  type ProfileSet,
  type UpstreamStatus,
} from "@serp/upstream";

import { chooseUpstreamSettings } from "./upstream-settings.js";

/** Runs the canary; exit status 1 when some kind has no working profile. */
export async function canaryCommand(kinds: string | undefined, json: boolean, out: (line: string) => void, note: (line: string) => void = () => undefined): Promise<number> {
  const chosen = kinds?.split(",").map((k) => k.trim());
  const unknown = chosen?.filter((k) => !(PROFILE_SETS as readonly string[]).includes(k));
  if (unknown?.length) {
    out(`error: unknown kind ${unknown.join(", ")}; kinds: ${PROFILE_SETS.join(", ")}`);
    return 2;
  }
  const settings = chooseUpstreamSettings(process.env);
  note(settings.note);
  const env = readUpstreamEnv(settings.env);
  const upstream = createUpstream(env);
  try {
    const report = await runCanary(upstream, { productId: env.CANARY_PRODUCT_ID, kinds: chosen as ProfileSet[] | undefined });
    out(json ? JSON.stringify(report, null, 2) : formatCanary(report));
    return report.ok ? 0 : 1;
  } finally {
    await upstream.close();
  }
}

/** What a worker publishes (upstream-watch.ts in the worker). */
export type WorkerUpstreamStatus = UpstreamStatus & { canary?: { at: string; dead: string[] } };

/** One line per breaker per worker: state, rest, last outcome, success rate and tries. */
export function formatStatuses(entries: PublishedStatus<WorkerUpstreamStatus>[]): string {
  if (!entries.length) return "no worker has published an upstream status (is a worker running against this Redis and SERP_PREFIX?)";
  const lines: string[] = [];
  for (const e of entries) {
    const s = e.status;
    lines.push(`worker ${e.instance} at ${e.at}: profile table ${s.tableVersion}`);
    if (s.canary) lines.push(`  last canary ${s.canary.at}: ${s.canary.dead.length ? `no working profile for ${s.canary.dead.join(", ")}` : "every kind works"}`);
    const head = ["breaker", "state", "rest until", "last outcome", "success", "tries"];
    const rows = s.breakers.map((b) => [
      b.key,
      b.state,
      b.restUntil ? new Date(b.restUntil).toISOString().slice(11, 19) + "Z" : "-",
      b.lastOutcome ?? "-",
      b.successRate === null ? "-" : `${Math.round(b.successRate * 100)}%`,
      Object.entries(b.outcomes).map(([k, n]) => `${k} ${n}`).join(", ") || "-",
    ]);
    if (!rows.length) {
      lines.push("  no upstream request yet");
      continue;
    }
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
    const fmt = (cells: string[]) => `  ${cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()}`;
    lines.push(fmt(head), ...rows.map(fmt));
  }
  return lines.join("\n");
}

/** One exit as `upstream proxies` lists it. */
export interface ExitRow {
  pool: string;
  tier: number;
  kind: "static" | "gateway";
  countries: string;
  /** A static proxy's `host:port`, `gateway` for a gateway pool's own health: never credentials. */
  exit: string;
  state: "ok" | "resting" | "probe due" | "probing";
  strikes: number;
  reason?: string;
  restUntil?: string;
}

/**
 * The pools the workers' settings name (UPSTREAM_PROXIES_FILE or UPSTREAM_PROXIES: labels only) and
 * each exit's state as the fleet keeps it in Redis (exits that rest, or healed).
 */
export function exitRows(config: ExitsConfig, states: ExitStatus[], now = Date.now()): ExitRow[] {
  const rows: ExitRow[] = [];
  const stateOf = (pool: string, exit: string) => states.find((s) => s.pool === pool && s.exit === exit);
  for (const p of config.pools) {
    const exits = p.gateway ? [GATEWAY] : (p.proxies ?? []).map(proxyLabel);
    for (const exit of exits) {
      const s = stateOf(p.name, exit);
      const state: ExitRow["state"] = !s || s.strikes === 0 ? "ok" : now < s.until ? "resting" : now < s.probeUntil ? "probing" : "probe due";
      rows.push({
        pool: p.name, tier: p.tier, kind: p.gateway ? "gateway" : "static", countries: p.countries?.join(",") ?? "any", exit, state, strikes: s?.strikes ?? 0,
        ...(s?.reason ? { reason: s.reason } : {}),
        ...(s && now < s.until ? { restUntil: new Date(s.until).toISOString() } : {}),
      });
    }
  }
  return rows;
}

export function formatExitRows(rows: ExitRow[], source: string): string {
  if (!rows.length) return `no proxy pools (${source}): requests go out directly`;
  const head = ["pool", "tier", "kind", "countries", "exit", "state", "strikes", "reason", "rest until"];
  const body = rows.map((r) => [r.pool, String(r.tier), r.kind, r.countries, r.exit, r.state, String(r.strikes), r.reason ?? "-", r.restUntil?.slice(11, 19).concat("Z") ?? "-"]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd();
  return [`pools from ${source}`, line(head), ...body.map(line)].join("\n");
}

/**
 * The pools from the workers' settings, this environment's or the running npm start's (the file is
 * read as a worker reads it; a bad one is an error naming the field).
 */
export function configuredPools(note: (line: string) => void = () => undefined): ExitsConfig {
  const settings = chooseUpstreamSettings(process.env);
  note(settings.note);
  const env = readUpstreamEnv(settings.env);
  return env.UPSTREAM_PROXIES_FILE ? readExitsFile(env.UPSTREAM_PROXIES_FILE) : poolsOfList(env.UPSTREAM_PROXIES ?? []);
}
