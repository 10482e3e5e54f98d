/**
 * The upstream page each completed job was parsed from, kept compressed for a while
 * (RAW_HTML_RETENTION_SECONDS, default an hour; 0 keeps none): its owner reads it (GET
 * /v1/jobs/{id}/html, the compatibility endpoint's `raw_html_file` and `output=html`), and an
 * operator re-parses recent traffic with today's parsers before shipping a parser fix
 * (`npm run cli -- reparse`).
 *
 * Brotli at quality 2, on libuv's thread pool (never on the event loop): result pages carry inline
 * images that hardly compress, so quality 2 keeps 3.7× and quality 5 4.0×, for well under half of
 * quality 5's CPU (about 4 ms a 630 KB page against 9; bench/raw-pages.ts). The stored bytes are
 * served as they are to a client that accepts `br`.
 *
 * The bytes (about 190 KiB a page) go to a page store, a folder or an S3-compatible bucket
 * (page-blobs.ts); Redis keeps only where each page is and what it is, a small hash expiring with
 * the retention, so a page outlives neither its retention nor its record. docs/RAW-PAGES.md.
 */
import { join } from "node:path";
import { promisify } from "node:util";
import { brotliCompress, brotliDecompress, constants } from "node:zlib";
import type { Redis } from "ioredis";
import type { Endpoint } from "@serp/shared";
import type { KeySpace } from "./keys.js";
import type { RawPagesEnv } from "./env.js";
import { FolderPageBlobs, checkedLocation, pageLocation, type PageBlobs } from "./page-blobs.js";
import { S3PageBlobs } from "./page-blobs-s3.js";

const compress = promisify(brotliCompress);
const decompress = promisify(brotliDecompress);

export const DEFAULT_RAW_HTML_RETENTION_SECONDS = 3600;
/** RAW_PAGES_DIR unset: this folder in the working directory (npm start: the project's). */
export const DEFAULT_RAW_PAGES_DIR = ".raw-pages";
/** How long after its record a page's bytes may stay (RawPageStore.sweep). */
const SWEEP_GRACE_MS = 2_000;
/** The Content-Encoding of the stored bytes. */
export const RAW_PAGE_ENCODING = "br";
const BROTLI_QUALITY = 2;

/** A page as the upstream sent it. */
export interface UpstreamPageText {
  body: string;
  contentType?: string;
}

/** A kept page, still compressed. */
export interface KeptPage {
  jobId: string;
  endpoint: Endpoint;
  contentType: string;
  /** When it was kept (ms since the epoch). */
  keptAt: number;
  /** Its size as received (UTF-8 bytes). */
  bytes: number;
  /** The page, brotli-compressed (RAW_PAGE_ENCODING). */
  data: Buffer;
}

/** What a page takes once kept. */
export interface KeptSize {
  bytes: number;
  compressedBytes: number;
}

export function defaultContentType(endpoint: Endpoint): string {
  return endpoint === "web-autocomplete" ? "application/json; charset=utf-8" : "text/html; charset=utf-8";
}

export function compressPage(body: string): Promise<Buffer> {
  const raw = Buffer.from(body, "utf8");
  return compress(raw, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY,
      [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
      [constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
    },
  });
}

export async function decompressPage(data: Buffer): Promise<string> {
  return (await decompress(data)).toString("utf8");
}

/**
 * A page whose record is still in Redis but whose bytes the page store does not have: swept early,
 * deleted by hand, or written to another host's folder (the API and the workers must share
 * RAW_PAGES_DIR, or use a bucket).
 */
export class RawPageMissingError extends Error {
  constructor(
    readonly jobId: string,
    readonly where: string,
  ) {
    super(`the page of ${jobId} is recorded but not in the page store (${where})`);
    this.name = "RawPageMissingError";
  }
}

/**
 * The page store the settings name (checked by checkRawPagesEnv): the bucket when RAW_PAGES_S3_BUCKET
 * is set, else the folder. `results`: the store of completed jobs' results beside it (job-results.ts),
 * the folder's `results/` or the bucket's results prefix (resultsPrefixOf), its writes flushed to disk.
 */
export function openPageBlobs(env: RawPagesEnv, part: "pages" | "results" = "pages"): PageBlobs {
  const bucket = env.RAW_PAGES_S3_BUCKET;
  if (!bucket) return part === "pages" ? new FolderPageBlobs(env.RAW_PAGES_DIR) : new FolderPageBlobs(join(env.RAW_PAGES_DIR, "results"), true);
  return new S3PageBlobs({
    bucket,
    prefix: part === "pages" ? env.RAW_PAGES_S3_PREFIX : resultsPrefixOf(env.RAW_PAGES_S3_PREFIX),
    endpoint: env.RAW_PAGES_S3_ENDPOINT,
    region: env.RAW_PAGES_S3_REGION,
    accessKeyId: env.RAW_PAGES_S3_ACCESS_KEY_ID,
    secretAccessKey: env.RAW_PAGES_S3_SECRET_ACCESS_KEY,
    forcePathStyle: env.RAW_PAGES_S3_FORCE_PATH_STYLE ?? Boolean(env.RAW_PAGES_S3_ENDPOINT),
  });
}

/**
 * The bucket prefix of results beside pages under `pagesPrefix`: a sibling, never inside it, so the
 * pages' lifecycle rule (days) never reaches results, which live as long as their jobs. `raw/` →
 * `raw-results/`; `` → `results/`.
 */
export function resultsPrefixOf(pagesPrefix: string): string {
  return pagesPrefix ? `${pagesPrefix.slice(0, -1)}-results/` : "results/";
}

export class RawPageStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
    /** Where the pages' bytes are. */
    readonly blobs: PageBlobs,
    /** Seconds a page is kept; 0 keeps none. */
    readonly retentionSeconds: number = DEFAULT_RAW_HTML_RETENTION_SECONDS,
  ) {}

  get enabled(): boolean {
    return this.retentionSeconds > 0;
  }

  /**
   * Compresses a job's page into the page store, then records where it is in Redis with its
   * retention and indexes it by time for `reparse` (the index forgets what has expired as it goes):
   * a record always names a page written whole. Nothing when pages are not kept.
   */
  async keep(jobId: string, endpoint: Endpoint, page: UpstreamPageText, now = Date.now()): Promise<KeptSize | undefined> {
    if (!this.enabled) return undefined;
    const data = await compressPage(page.body);
    const bytes = Buffer.byteLength(page.body, "utf8");
    const loc = pageLocation(jobId, now);
    await this.blobs.put(loc, data);
    const key = this.keys.rawPage(jobId);
    const index = this.keys.rawPages();
    const replies = await this.redis
      .multi()
      .hset(key, { loc, endpoint, type: page.contentType ?? defaultContentType(endpoint), bytes: String(bytes), at: String(now) })
      .expire(key, this.retentionSeconds)
      .zadd(index, now, jobId)
      .zremrangebyscore(index, "-inf", `(${now - this.retentionSeconds * 1000}`)
      .expire(index, this.retentionSeconds)
      .exec();
    const failed = replies?.find(([err]) => err)?.[0];
    if (failed) throw failed;
    return { bytes, compressedBytes: data.length };
  }

  /**
   * The page still compressed (served as is to a client that accepts `br`); null when none is kept
   * (never, or past its retention). Throws RawPageMissingError when its record outlived its bytes.
   */
  async compressed(jobId: string): Promise<KeptPage | null> {
    const h = await this.redis.hgetallBuffer(this.keys.rawPage(jobId));
    const loc = h.loc?.toString();
    // A record with the bytes in it: kept by a worker from before the page store, until its retention ends.
    const data = loc ? await this.blobs.get(checkedLocation(loc)) : h.data;
    if (!data) {
      if (loc) throw new RawPageMissingError(jobId, this.blobs.where);
      return null;
    }
    return {
      jobId,
      endpoint: h.endpoint!.toString() as Endpoint,
      contentType: h.type?.toString() || "text/html; charset=utf-8",
      keptAt: Number(h.at?.toString() ?? 0),
      bytes: Number(h.bytes?.toString() ?? 0),
      data,
    };
  }

  /** The page as received; null when none is kept. */
  async read(jobId: string): Promise<(KeptPage & { body: string }) | null> {
    const page = await this.compressed(jobId);
    return page ? { ...page, body: await decompressPage(page.data) } : null;
  }

  /** Ids of the jobs whose page was kept at or after `fromMs`, oldest first. */
  async since(fromMs: number): Promise<string[]> {
    return this.redis.zrangebyscore(this.keys.rawPages(), fromMs, "+inf");
  }

  /**
   * Deletes the pages past their retention from the page store (the workers' sweeper, one process at
   * a time), a moment after their records expire: a record's expiry starts just after its page is
   * written, and a bucket dates objects to the second.
   */
  sweep(now = Date.now()): Promise<number> {
    return this.blobs.sweep(now - this.retentionSeconds * 1000 - SWEEP_GRACE_MS);
  }
}
