/**
 * Runs every benchmark and prints one table; writes it with the machine and the command to
 * docs/BENCHMARKS.md. `npm run bench` (starts a private Redis when REDIS_URL is unset).
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import { dirname, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { hostSteal, printTable, ROWS_LINE, type Row } from "./lib.js";

const here = dirname(fileURLToPath(import.meta.url));

/**
 * Each benchmark runs as its own process, one after another, as the service's processes run:
 * none inherits another's heap, compiled code or open connections.
 */
async function run(file: string): Promise<Row[]> {
  const child = spawn(process.execPath, ["--import", "tsx", resolve(here, file)], { stdio: ["ignore", "pipe", "inherit"], env: process.env });
  let rows: Row[] | undefined;
  for await (const line of createInterface({ input: child.stdout })) {
    if (line.startsWith(ROWS_LINE)) rows = JSON.parse(line.slice(ROWS_LINE.length)) as Row[];
    else console.log(line);
  }
  const code = await new Promise<number | null>((done) => (child.exitCode !== null ? done(child.exitCode) : child.once("exit", done)));
  if (code !== 0 || !rows) throw new Error(`bench/${file} failed (exit ${code})`);
  return rows;
}

const rows: Row[] = [];
const steal = hostSteal();
for (const file of ["submissions.ts", "live-latency.ts", "worker-throughput.ts", "extraction.ts", "memory.ts", "transports.ts", "browser.ts", "cache.ts", "raw-pages.ts", "archive.ts", "ledger.ts"]) {
  console.log(`\n== bench/${file}`);
  rows.push(...(await run(file)));
}

const stolen = steal();
console.log("");
const table = printTable(rows);
const cpu = os.cpus()[0]?.model ?? "unknown CPU";
const machine = `${os.cpus().length} × ${cpu}, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.type()} ${os.release()}, Node ${process.version}`;
const doc = `# Benchmarks

Every figure is printed beside a baseline measured in the same run, on loopback, against the replay
upstream serving captured pages. Run them all with:

\`\`\`sh
npm run bench
\`\`\`

Each benchmark runs as its own process, one after another (or run one: \`node --import tsx bench/<name>.ts\` with \`REDIS_URL\` set).

Last run: ${new Date().toISOString()} on ${machine}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(" / ")} at the end${
  stolen === null ? "" : `, ${(stolen * 100).toFixed(0)}% of CPU time stolen by the hypervisor over the run`
}.
Figures from a shared machine move by several points between runs; the ratios are what to compare.

${table}

What each one measures:

1. **Async submissions** (\`bench/submissions.ts\`): POST /v1/jobs on the fast queue (202) with 32
   connections, vs a bare Express endpoint doing one Redis write; rounds alternate and the median
   ratio is reported.
2. **Live latency** (\`bench/live-latency.ts\`): one live web-search at a time through the API, the
   live queue and a worker, vs fetching and parsing the same page directly in one process, first with
   the replay answering at once, then answering after 500 ms. Target (issue 15, replacing the earlier
   +5 ms): the service adds at most 10 ms at p50 and 25 ms at p99 in both, so its overhead does not
   grow with upstream latency; about 14 hand-offs between processes at 0.3–1.2 ms each on this 2-vCPU
   VM are the floor of a design where the API owns the request and a BullMQ worker owns the job. The
   client is \`node:http\` on a kept-alive connection, the least a client adds (the global \`fetch\`
   adds 1–2 ms a call of its own on this machine). Two report rows say where the difference goes:
   - *split at the upstream request*: each call is timed from its start to the moment the replay
     upstream (in the bench process, on the same clock) receives the page request, and from there
     to the answer. The first part is the client, the API (rate limit, submission, enqueue: three
     Redis round trips) and the worker taking the job; the second the worker's fetch, parse and
     settlement, and the answer's way back. *The worker's own part* is the jobs' \`latencyMs\`: it
     matches the baseline, so the difference is all in the way there and back.
   - *the host*: the share of CPU time the hypervisor took while the benchmark ran, and a Redis
     round trip after 5 ms idle against one back to back. Each hand-over between processes wakes
     one that was idle; on this VM that costs about ten times a round trip between busy processes,
     and a live job makes about fifteen of them (client, API, Redis, worker and back).
3. **Worker throughput** (\`bench/worker-throughput.ts\`): real worker processes, the replay upstream
   answering after a fixed delay L, concurrency C per process, vs the limit C/L; then two processes.
4. **Extraction** (\`bench/extraction.ts\`): every captured page through its kind's parser vs a bare
   \`parse5.parse\` of the same page (the run prints per-page figures).
5. **Memory** (\`bench/memory.ts\`): Redis \`MEMORY USAGE\` of retained completed web-search job records
   vs the size of their result JSON. Then, with pages kept (docs/RAW-PAGES.md), every key of the
   stack per job with the pages in the page store (a folder) vs the same jobs with each page's bytes
   put back into its Redis record, as pages were kept before the page store; the page record's share
   alone; and Redis's \`used_memory\` grown per job over the same two steps.
6. **Transports** (\`bench/transports.ts\`): the same captured page over TLS from the replay upstream
   (its own process), one request at a time in alternating blocks: the impersonating transport (impit,
   Chrome 151's ClientHello and HTTP/2) vs got over Node's TLS, latency p50/p99 and this process's CPU
   per request (impit's threads included); then 1,000 requests from a new client of each, counting the
   TLS handshakes the replay saw (kept-alive connections: target at most 10).
7. **Browser** (\`bench/browser.ts\`): a full web search through the browser transport (Debian's
   Chromium, warm pool: browser launched, context and page kept, the exit past its first page, so its
   pages are read as they arrive, not rendered) vs the same page fetched over HTTP with impit, each
   then parsed, at BROWSER_CONCURRENCY 1, 2 and 4: latency p50/p99, CPU-seconds per page of this
   process and every process it started (the browser and its renderers, the replay, for both alike;
   other work on a shared machine does not count), and the memory (PSS) of its Chromium processes
   per concurrent page. Then the bytes one search moves through its exit, per rung (http, impersonate,
   browser), cold (a fresh client: new connections, no cookies, nothing cached) and warm, counted by a
   loopback CONNECT proxy, against the page gzipped (the replay compresses as the upstream does); the
   browser's own count (\`bytes\` on its result) is printed beside it. What the cuts bought (same
   page): keeping the context and an idle page took a page from ~1,050 ms and ~1.9 CPU-s to ~400 ms and
   ~0.6–0.9 CPU-s; reading a warm page's document as it arrives instead of rendering it (the renderer
   gets an empty page) took it to ~0.25 CPU-s, about 0.18 above the HTTP rung; no GPU process saved
   about 12% of a render's CPU. Past two pages at a time the two cores are saturated.
8. **Result cache** (\`bench/cache.ts\`): \`/search.json\` through real API and worker processes, one
   request at a time on a kept-alive connection, alternating a search answered from the cache (the
   API alone: look-up, the job created completed and billed in one Redis script, the envelope) with
   a live miss (a query not seen before: look-up, queue, the worker's claim, fetch, parse, fill),
   both on the same captured page: latency p50/p99. Then Redis \`MEMORY USAGE\` of a cache entry
   (the result's blocks gzipped, with its fetch time, source job and upstream URL) for every captured
   web results page vs the size of its result JSON.
9. **Raw pages** (\`bench/raw-pages.ts\`): every captured page kept as a worker keeps it (brotli at
   quality 2 into the page store, a folder here, then its record in one MULTI): its compressed size vs
   its size as received, the bytes kept per job for RAW_HTML_RETENTION_SECONDS; and Redis
   \`MEMORY USAGE\` of its record (where the page is) vs the same record holding the bytes too. Then the compression per page on libuv's pool,
   quality 2 (kept) against quality 5, alternating page by page. Pages carry inline images that
   hardly compress, so every quality lands near 3.5–4×; quality 2 costs well under half of quality 5.
   The worker compresses once the job is settled, off the live answer's path (row 2 runs with it on).
10. **Job archive** (\`bench/archive.ts\`, needs PostgreSQL): completed web-search jobs, archived by the
   ledger drainer with their settlement; the hot window's end is brought forward with a PEXPIRE (as
   JOB_HOT_SECONDS after completion would end it). Redis memory per job after it (EXISTS first, then
   \`MEMORY USAGE\`: nothing of the result may be left) vs while hot; PostgreSQL's
   \`pg_column_size\` of the archived record (JSONB, TOAST-compressed) vs the result JSON; and
   \`GET /v1/jobs/{id}\` over real HTTP on a kept-alive connection, p50/p99, archived vs hot.
11. **Ledger drain lag** (\`bench/ledger.ts\`, needs PostgreSQL): the submissions load of row 1 (POST
   /v1/jobs on the fast queue, 32 connections) with workers serving the fast queue in the same
   process (PARSE_THREADS=1), so every job settles and appends its charge to the Redis stream, which
   the worker's drainer copies into PostgreSQL. The lag (age of the oldest entry not yet in
   PostgreSQL, \`serp_ledger_drain_lag_seconds\`) sampled every 50 ms during the load and as long
   again after it, while the workers settle the backlog: p50/p99; and the histogram bucket holding 99%
   of the entries' settlement-to-commit delays.
`;
const out = resolve(dirname(fileURLToPath(import.meta.url)), "../docs/BENCHMARKS.md");
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, doc);
console.log(`\nwritten to ${out}`);
process.exit(0);
