/**
 * Benchmark 9: what keeping each completed job's upstream page costs. Every captured page is kept
 * the way a worker keeps it (RawPageStore.keep: brotli into the page store, a folder here, then its
 * record in one MULTI), and its compressed size is set against the page's size as received. Redis
 * `MEMORY USAGE` of its record (where the page is) is set against the same record holding the
 * bytes too, as pages were kept before the page store (issue 27).
 * Then the compression itself, one page at a time on libuv's pool as the worker runs it: the
 * quality kept (2) against quality 5, the next step up in ratio.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { brotliCompress, constants } from "node:zlib";
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import type { Endpoint } from "@serp/shared";
import { FolderPageBlobs, RawPageStore, compressPage, keySpace } from "@serp/store";
import { FIXTURES_DIR, fixturesAvailable } from "../packages/upstream/test/fixtures-dir.js";
import { fmt, runIfMain, type Row } from "./lib.js";

const KIND: Record<string, Endpoint> = {
  web: "web-search", "web-mobile": "web-search", "web-nojs": "web-search", videos: "web-search", news: "web-news",
  images: "web-images", shopping: "web-shopping-search", "shopping-product": "web-shopping-product", autocomplete: "web-autocomplete",
};

const brotli = promisify(brotliCompress);
const q5 = (body: string) => brotli(Buffer.from(body), { params: { [constants.BROTLI_PARAM_QUALITY]: 5, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT } });

/**
 * Mean ms and compressed bytes per page of each compressor, over every page three times, one call
 * at a time, alternating between them page by page so both see the same machine load.
 */
async function timed(pages: string[], fns: ((body: string) => Promise<Buffer>)[]): Promise<{ ms: number; bytes: number }[]> {
  const out = fns.map(() => ({ ms: 0, bytes: 0 }));
  for (let round = 0; round < 3; round++) {
    for (const page of pages) {
      for (const [i, fn] of fns.entries()) {
        const start = performance.now();
        out[i]!.bytes += (await fn(page)).length;
        out[i]!.ms += performance.now() - start;
      }
    }
  }
  return out.map((o) => ({ ms: o.ms / (3 * pages.length), bytes: o.bytes / (3 * pages.length) }));
}

export async function benchRawPages(): Promise<Row[]> {
  if (!fixturesAvailable) throw new Error(`captured pages not found at ${FIXTURES_DIR}`);
  const pages = Object.entries(KIND).flatMap(([dir, endpoint]) =>
    readdirSync(join(FIXTURES_DIR, dir))
      .filter((f) => /\.(html|json|xml|txt)$/.test(f))
      .map((f) => ({ file: `${dir}/${f}`, endpoint, body: readFileSync(join(FIXTURES_DIR, dir, f), "utf8") })),
  );
  const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  const keys = keySpace(`braw${randomBytes(4).toString("hex")}`);
  const dir = mkdtempSync(join(tmpdir(), "bench-raw-pages-"));
  const store = new RawPageStore(redis, keys, new FolderPageBlobs(dir), 3600);
  let raw = 0;
  let kept = 0;
  let inRedis = 0;
  let compressed = 0;
  const usage = async (key: string) => Number(await redis.memory("USAGE", key, "SAMPLES", 0));
  try {
    for (const [i, page] of pages.entries()) {
      const id = `job_bench${i}`;
      const size = (await store.keep(id, page.endpoint, page))!;
      raw += size.bytes;
      compressed += size.compressedBytes;
      kept += await usage(keys.rawPage(id));
      // The same record with the page's bytes in it: how every page was kept in Redis before.
      const before = `${keys.rawPage(id)}:before`;
      await redis.hset(before, { ...(await redis.hgetall(keys.rawPage(id))), data: (await store.compressed(id))!.data });
      inRedis += await usage(before);
    }
    const index = await usage(keys.rawPages());
    kept += index;
    inRedis += index;
  } finally {
    const all = await redis.keys(`${keys.prefix}:*`);
    if (all.length) await redis.del(...all);
    redis.disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
  const n = pages.length;
  const bodies = pages.map((p) => p.body);
  await timed(bodies.slice(0, 3), [compressPage, q5]); // warm up
  const [fast, better] = (await timed(bodies, [compressPage, q5])) as [{ ms: number; bytes: number }, { ms: number; bytes: number }];
  const perJob = kept / n;
  const perJobBefore = inRedis / n;
  const perRaw = raw / n;
  const perCompressed = compressed / n;
  console.log(
    `raw pages: ${n} captured pages, ${fmt(perRaw / 1024)} KiB each as received, ${fmt(perCompressed / 1024)} KiB of brotli in the page store; ` +
      `Redis keeps ${fmt(perJob, 0)} B per job (where it is) against ${fmt(perJobBefore / 1024)} KiB with the bytes in Redis; ` +
      `an hour at 50 jobs/s: ${fmt((perJob * 50 * 3600) / 2 ** 20, 1)} MiB of Redis against ${fmt((perJobBefore * 50 * 3600) / 2 ** 30, 2)} GiB`,
  );
  console.log(`compression per page: quality 2 ${fmt(fast.ms, 2)} ms (x${fmt(raw / n / fast.bytes, 2)}), quality 5 ${fmt(better.ms, 2)} ms (x${fmt(raw / n / better.bytes, 2)})`);
  return [
    {
      benchmark: `9. raw page kept per job (${n} captured pages)`,
      measured: `${fmt(perCompressed / 1024)} KiB in the page store (brotli)`,
      baseline: `${fmt(perRaw / 1024)} KiB (the page as received)`,
      ratio: `${fmt((perCompressed / perRaw) * 100, 0)}% (x${fmt(perRaw / perCompressed, 2)} smaller)`,
      target: "report",
      met: null,
    },
    {
      benchmark: "9. raw page record in Redis per job",
      measured: `${fmt(perJob, 0)} B (where the page is)`,
      baseline: `${fmt(perJobBefore / 1024)} KiB (the bytes in Redis too, as before)`,
      ratio: `x${fmt(perJob / perJobBefore, 4)}`,
      target: "report",
      met: null,
    },
    {
      benchmark: "9. raw page compression per job (a libuv thread)",
      measured: `${fmt(fast.ms, 2)} ms/page at quality 2 (x${fmt(raw / n / fast.bytes, 2)})`,
      baseline: `${fmt(better.ms, 2)} ms/page at quality 5 (x${fmt(raw / n / better.bytes, 2)})`,
      ratio: `${fmt((fast.ms / better.ms) * 100, 0)}% of the CPU`,
      target: "report",
      met: null,
    },
  ];
}

await runIfMain(import.meta.url, () => benchRawPages());
