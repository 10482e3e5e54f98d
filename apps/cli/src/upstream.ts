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
  PROFILE_SETS,
  runCanary,
  readUpstreamEnv,
  upstreamOptionsOf,
  type ProfileSet,
  type UpstreamStatus,
} from "@serp/upstream";

/** Runs the canary; exit status 1 when some kind has no working profile. */
export async function canaryCommand(kinds: string | undefined, json: boolean, out: (line: string) => void): Promise<number> {
  const chosen = kinds?.split(",").map((k) => k.trim());
  const unknown = chosen?.filter((k) => !(PROFILE_SETS as readonly string[]).includes(k));
  if (unknown?.length) {
    out(`error: unknown kind ${unknown.join(", ")}; kinds: ${PROFILE_SETS.join(", ")}`);
    return 2;
  }
  const env = readUpstreamEnv(process.env);
  const upstream = createUpstream(upstreamOptionsOf(env));
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
