/** Small shared pieces of the benchmarks: load generation, percentiles, the printed table. */
import { readFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { pathToFileURL } from "node:url";
import autocannon from "autocannon";

export interface LoadResult {
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
}

/** Drives `url` with autocannon from a worker thread, so the generator does not share the server's event loop. */
export async function load(opts: autocannon.Options): Promise<LoadResult> {
  const r = await autocannon({ connections: 32, duration: 5, workers: 1, ...opts });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx, errors: r.errors };
}

export async function listen(server: Server): Promise<string> {
  await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

export function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export interface Row {
  benchmark: string;
  measured: string;
  baseline: string;
  ratio: string;
  target: string;
  met: boolean | null;
}

export function printTable(rows: Row[]): string {
  const head = ["benchmark", "measured", "baseline", "ratio", "target", "met"];
  const body = rows.map((r) => [r.benchmark, r.measured, r.baseline, r.ratio, r.target, r.met === null ? "-" : r.met ? "yes" : "NO"]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
  const out = [line(head), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...body.map(line)].join("\n");
  console.log(out);
  return out;
}

/**
 * Starts counting; the function returned gives the share of CPU time the hypervisor gave to other
 * guests since (Linux's "steal" in /proc/stat): on a shared VM it tells how much of a figure is
 * the host's. null where /proc/stat has no steal column.
 */
export function hostSteal(): () => number | null {
  const read = () => {
    try {
      const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
      return cpu.length > 7 ? { steal: cpu[7]!, total: cpu.slice(0, 8).reduce((a, b) => a + b, 0) } : null;
    } catch {
      return null;
    }
  };
  const start = read();
  return () => {
    const end = read();
    if (!start || !end || end.total === start.total) return null;
    return (end.steal - start.steal) / (end.total - start.total);
  };
}

/** CPU seconds a process has used, all its threads together (Linux's /proc; 0 elsewhere). */
export function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

export const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "n/a");
/** A difference with its sign: +1.5, -0.3. */
export const signed = (n: number, digits = 1) => (n < 0 ? fmt(n, digits) : `+${fmt(n, digits)}`);

/** Marks the line on which a benchmark run as its own process hands its rows to bench/run.ts. */
export const ROWS_LINE = "BENCH-ROWS ";

/**
 * The entry of a benchmark file: when `moduleUrl` is the file node was started with, runs the
 * benchmark, prints its rows, writes them on a ROWS_LINE, and exits (stopping what it left open).
 */
export async function runIfMain(moduleUrl: string, bench: () => Promise<Row | Row[]>): Promise<void> {
  if (!process.argv[1] || moduleUrl !== pathToFileURL(process.argv[1]).href) return;
  const rows = [await bench()].flat();
  console.log("");
  printTable(rows);
  console.log(`${ROWS_LINE}${JSON.stringify(rows)}`);
  process.exit(0);
}
