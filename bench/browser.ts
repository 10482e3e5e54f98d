/**
 * Benchmark 7: a page rendered by the browser transport (Debian's Chromium, warm pool) against the
 * same page fetched over HTTP (the impersonating transport), each followed by the web parser, from
 * the replay upstream running as its own process. At BROWSER_CONCURRENCY 1, 2 and 4: latency p50/p99
 * per page, CPU-seconds per page (the whole machine's, so every browser process counts), and the
 * browsers' resident size per concurrent page.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { BROWSER_DEFAULTS, BrowserPool, ImpersonatingClients, PARSERS, type FetchResult } from "@serp/upstream";
import { FIXTURES_DIR, fixturesAvailable } from "../packages/upstream/test/fixtures-dir.js";
import { fmt, percentile, runIfMain, type Row } from "./lib.js";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const PAGE = "web/coffee-desktop-2023.html";

async function startReplay(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "packages/replay/src/main.ts", "--dir", FIXTURES_DIR, "--page", PAGE, "--https", "--port", "0", "--cert-out", join(mkdtempSync(join(tmpdir(), "bench-browser-")), "cert.pem")],
    { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  for await (const line of createInterface({ input: child.stdout! })) {
    const url = /listening on (https:\/\/\S+)/.exec(line)?.[1];
    if (url) return { url, stop: () => child.kill("SIGTERM") };
  }
  throw new Error("the replay did not start");
}

/**
 * CPU seconds the whole machine spent (Linux /proc/stat, all cores): the bench runs alone, so this is
 * this process, the browser with every renderer it started and stopped, and the replay, for both the
 * browser and the HTTP baseline alike. Per-process sums lose renderers that exit mid-run.
 */
function machineCpuSeconds(): number {
  const [, ...fields] = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/);
  const [user, nice, system, , , irq, softirq] = fields.map(Number);
  return (user! + nice! + system! + irq! + softirq!) / 100;
}

/** Resident size of every Chromium process on the machine, in MB. */
function chromiumRssMb(): number {
  let kb = 0;
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      if (!/chrom/i.test(readFileSync(`/proc/${pid}/comm`, "utf8"))) continue;
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0);
    } catch {
      /* gone meanwhile */
    }
  }
  return kb / 1024;
}

interface Measured {
  p50: number;
  p99: number;
  cpuPerPage: number;
  rssPerPage?: number;
}

async function measure(pages: number, concurrency: number, fetchOne: () => Promise<FetchResult>, browser: boolean): Promise<Measured> {
  const latencies: number[] = [];
  let peakRss = 0;
  const cpu0 = machineCpuSeconds();
  let left = pages;
  const lane = async () => {
    while (left-- > 0) {
      const t = performance.now();
      const r = await fetchOne();
      if (!r.ok) throw new Error(`fetch failed: ${r.failure} ${r.detail}`);
      const blocks = PARSERS["web-search"](r.response.body);
      if (!blocks.organic_results?.length) throw new Error("the page did not parse");
      latencies.push(performance.now() - t);
      if (browser) peakRss = Math.max(peakRss, chromiumRssMb());
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  const cpu = machineCpuSeconds() - cpu0;
  latencies.sort((a, b) => a - b);
  return {
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    cpuPerPage: cpu / pages,
    ...(browser ? { rssPerPage: peakRss / concurrency } : {}),
  };
}

export async function benchBrowser(pages = 24): Promise<Row[]> {
  if (!fixturesAvailable) throw new Error(`captured pages not found at ${FIXTURES_DIR}`);
  if (!existsSync(BROWSER_DEFAULTS.executablePath)) throw new Error(`no Chromium at ${BROWSER_DEFAULTS.executablePath}`);
  const replay = await startReplay();
  const url = `${replay.url}/search?q=coffee&hl=en`;
  const rows: Row[] = [];
  try {
    const http = new ImpersonatingClients(true);
    const viaHttp = () => http.fetch({ url, headers: {}, browser: "chrome151" }, { timeoutMs: 20_000, maxBodyBytes: 8e6 });
    await measure(4, 1, viaHttp, false);
    const base = await measure(pages, 1, viaHttp, false);
    http.close();
    console.log(`HTTP (impit) + parse: p50 ${fmt(base.p50, 0)} ms, p99 ${fmt(base.p99, 0)} ms, ${fmt(base.cpuPerPage, 3)} CPU-s/page`);
    for (const concurrency of [1, 2, 4]) {
      const pool = new BrowserPool({ concurrency }, { insecure: true });
      const viaBrowser = () =>
        pool.fetch({ url, headers: { "accept-language": "en-US,en;q=0.9" }, device: "desktop", language: "en", country: "us" }, { timeoutMs: 30_000, maxBodyBytes: 8e6 });
      try {
        await measure(concurrency * 2, concurrency, viaBrowser, true); // warm: launched, contexts and pages open
        const m = await measure(pages, concurrency, viaBrowser, true);
        console.log(
          `browser c=${concurrency} + parse: p50 ${fmt(m.p50, 0)} ms, p99 ${fmt(m.p99, 0)} ms, ${fmt(m.cpuPerPage, 3)} CPU-s/page, ${fmt(m.rssPerPage ?? NaN, 0)} MB RSS per concurrent page`,
        );
        const label = `7. browser page, concurrency ${concurrency}`;
        rows.push(
          { benchmark: `${label}: p50 (vs HTTP)`, measured: `${fmt(m.p50, 0)} ms`, baseline: `${fmt(base.p50, 0)} ms`, ratio: `×${fmt(m.p50 / base.p50, 1)}`, target: concurrency === 1 ? "≤ 400 ms" : "report", met: concurrency === 1 ? m.p50 <= 400 : null },
          { benchmark: `${label}: p99`, measured: `${fmt(m.p99, 0)} ms`, baseline: `${fmt(base.p99, 0)} ms`, ratio: `×${fmt(m.p99 / base.p99, 1)}`, target: "report", met: null },
          { benchmark: `${label}: CPU-s per page`, measured: fmt(m.cpuPerPage, 3), baseline: fmt(base.cpuPerPage, 3), ratio: `×${fmt(m.cpuPerPage / base.cpuPerPage, 1)}`, target: "≤ 0.25", met: m.cpuPerPage <= 0.25 },
          { benchmark: `${label}: RSS per concurrent page`, measured: `${fmt(m.rssPerPage ?? NaN, 0)} MB`, baseline: "-", ratio: "-", target: "report", met: null },
        );
      } finally {
        await pool.close();
      }
    }
  } finally {
    replay.stop();
  }
  return rows;
}

await runIfMain(import.meta.url, () => benchBrowser());
