/**
 * Benchmark 6: the two HTTP transports on the same captured page over TLS, from the replay upstream
 * running as its own process (so this process's CPU is the client's alone): the impersonating one
 * (impit, Chrome 151's ClientHello and HTTP/2) against got over Node's TLS as the baseline. Requests
 * go one at a time, in alternating blocks, so both see the same machine load. Then 1,000 requests
 * each on one kept client, counting the TLS handshakes the replay saw.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { DirectAgents, fetchPage, ImpersonatingClients, type FetchResult, type FetchSettings } from "@serp/upstream";
import { FIXTURES_DIR, fixturesAvailable } from "../packages/upstream/test/fixtures-dir.js";
import { fmt, percentile, runIfMain, type Row } from "./lib.js";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const PAGE = "web/coffee-desktop-2023.html";

async function startReplay(certOut: string): Promise<{ url: string; stop: () => void }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "packages/replay/src/main.ts", "--dir", FIXTURES_DIR, "--page", PAGE, "--https", "--port", "0", "--cert-out", certOut],
    { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  for await (const line of createInterface({ input: child.stdout! })) {
    const url = /listening on (https:\/\/\S+)/.exec(line)?.[1];
    if (url) return { url, stop: () => child.kill("SIGTERM") };
  }
  throw new Error("the replay did not start");
}

export async function benchTransports(rounds = 8, perBlock = 50): Promise<Row[]> {
  if (!fixturesAvailable) throw new Error(`captured pages not found at ${FIXTURES_DIR}`);
  const dir = mkdtempSync(join(tmpdir(), "bench-transports-"));
  const certFile = join(dir, "cert.pem");
  const replay = await startReplay(certFile);
  try {
    const settings: FetchSettings = { timeoutMs: 10_000, maxBodyBytes: 8 * 1024 * 1024, tls: { ca: readFileSync(certFile, "utf8") } };
    const url = `${replay.url}/search?q=coffee`;
    const direct = new DirectAgents(settings.tls);
    const impit = new ImpersonatingClients(true);
    const viaGot = () => fetchPage({ url, headers: { "user-agent": "bench" }, direct }, settings);
    const viaImpit = () => impit.fetch({ url, headers: {}, browser: "chrome151" }, settings);

    const timed = async (send: () => Promise<FetchResult>, n: number, into: number[]) => {
      const cpu = process.cpuUsage();
      for (let i = 0; i < n; i++) {
        const t = performance.now();
        const r = await send();
        if (!r.ok || r.response.statusCode !== 200) throw new Error(`request failed: ${JSON.stringify(r).slice(0, 200)}`);
        into.push(performance.now() - t);
      }
      const used = process.cpuUsage(cpu);
      return (used.user + used.system) / 1e6;
    };
    await timed(viaGot, 20, []);
    await timed(viaImpit, 20, []);
    const lat = { got: [] as number[], impit: [] as number[] };
    const cpu = { got: 0, impit: 0 };
    for (let r = 0; r < rounds; r++) {
      cpu.got += await timed(viaGot, perBlock, lat.got);
      cpu.impit += await timed(viaImpit, perBlock, lat.impit);
    }
    const n = rounds * perBlock;
    for (const l of Object.values(lat)) l.sort((a, b) => a - b);
    const ms = (l: number[], p: number) => percentile(l, p);
    const cpuMs = { got: (cpu.got / n) * 1000, impit: (cpu.impit / n) * 1000 };
    console.log(`${n} requests each for ${PAGE} (${(readFileSync(join(FIXTURES_DIR, PAGE)).length / 1024).toFixed(0)} KiB):`);
    console.log(`  got:   p50 ${fmt(ms(lat.got, 50), 2)} ms, p99 ${fmt(ms(lat.got, 99), 2)} ms, CPU ${fmt(cpuMs.got, 2)} ms/request`);
    console.log(`  impit: p50 ${fmt(ms(lat.impit, 50), 2)} ms, p99 ${fmt(ms(lat.impit, 99), 2)} ms, CPU ${fmt(cpuMs.impit, 2)} ms/request`);

    // Handshakes per 1,000 requests to one host, from new clients, read from the replay's own count.
    const stats = () => impit.fetch({ url: `${replay.url}/__replay/stats`, headers: {}, browser: "chrome151" }, settings).then(statsOf);
    const handshakes = async (send: () => Promise<FetchResult>) => {
      const before = await stats();
      for (let i = 0; i < 1_000; i++) await send();
      return (await stats()) - before;
    };
    const freshAgents = new DirectAgents(settings.tls);
    const freshImpit = new ImpersonatingClients(true);
    const hsGot = await handshakes(() => fetchPage({ url, headers: { "user-agent": "bench" }, direct: freshAgents }, settings));
    const hsImpit = await handshakes(() => freshImpit.fetch({ url, headers: {}, browser: "chrome151" }, settings));
    freshAgents.close();
    freshImpit.close();
    console.log(`  TLS handshakes per 1,000 requests: got ${hsGot}, impit ${hsImpit}`);
    direct.close();
    impit.close();
    const ratio = (a: number, b: number) => `×${fmt(a / b, 2)}`;
    return [
      { benchmark: "6. transport p50 (impit vs got, same page over TLS)", measured: `${fmt(ms(lat.impit, 50), 2)} ms`, baseline: `${fmt(ms(lat.got, 50), 2)} ms`, ratio: ratio(ms(lat.impit, 50), ms(lat.got, 50)), target: "report", met: null },
      { benchmark: "6. transport p99", measured: `${fmt(ms(lat.impit, 99), 2)} ms`, baseline: `${fmt(ms(lat.got, 99), 2)} ms`, ratio: ratio(ms(lat.impit, 99), ms(lat.got, 99)), target: "report", met: null },
      { benchmark: "6. transport CPU per request", measured: `${fmt(cpuMs.impit, 2)} ms`, baseline: `${fmt(cpuMs.got, 2)} ms`, ratio: ratio(cpuMs.impit, cpuMs.got), target: "report", met: null },
      { benchmark: "6. TLS handshakes per 1,000 requests", measured: `impit ${hsImpit}`, baseline: `got ${hsGot}`, ratio: "-", target: "≤ 10 each", met: hsImpit <= 10 && hsGot <= 10 },
    ];
  } finally {
    replay.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The replay's handshake count from a GET /__replay/stats answer. */
async function statsOf(r: FetchResult): Promise<number> {
  if (!r.ok) throw new Error(`stats: ${r.detail}`);
  return (JSON.parse(r.response.body) as { tlsHandshakes: number }).tlsHandshakes;
}

await runIfMain(import.meta.url, () => benchTransports());
