/**
 * Where the kept upstream pages' bytes live (raw-pages.ts keeps only their location in Redis): a
 * local folder (RAW_PAGES_DIR, the default) or an S3-compatible bucket (RAW_PAGES_S3_BUCKET,
 * page-blobs-s3.ts). Both lay pages out by the UTC hour they were kept,
 * `<yyyy-mm-dd>/<hh>/<jobId>.html.br`, so pages past their retention go a partition at a time
 * (sweep) and a bucket lifecycle rule can match them by prefix. Completed jobs' results are kept
 * the same way in a store of their own beside the pages' (job-results.ts,
 * `<yyyy-mm-dd>/<hh>/<jobId>.<nonce>.json.br`). docs/RAW-PAGES.md.
 */
import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, readdir, rename, rm, rmdir, stat, unlink, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";

export interface PageBlobs {
  readonly kind: "folder" | "s3";
  /** Where the pages are, for logs and error messages: a folder path or `s3://bucket/prefix`. */
  readonly where: string;
  /** Stores a page's bytes at `location` (pageLocation), whole or not at all. */
  put(location: string, data: Buffer): Promise<void>;
  /** The bytes at `location`, or null when there are none (swept, or another host's folder). */
  get(location: string): Promise<Buffer | null>;
  /** Deletes what is at each of `locations`, if anything. */
  delete(locations: readonly string[]): Promise<void>;
  /** Deletes every page kept before `cutoffMs`, oldest partition first; returns how many. */
  sweep(cutoffMs: number): Promise<number>;
  /** The locations in the hour partitions that ended by `beforeMs`, oldest first, a batch at a time. */
  list(beforeMs: number): AsyncIterable<string[]>;
  close(): void;
}

/** The page store could not be reached or did not answer in time (the bucket's server is down): worth a retry. */
export class PageStoreUnavailableError extends Error {
  constructor(where: string, cause: Error) {
    super(`the page store (${where}) is not answering: ${cause.message}`, { cause });
    this.name = "PageStoreUnavailableError";
  }
}

const HOUR_MS = 3_600_000;
const SAFE_ID = /^[A-Za-z0-9_-]{1,100}$/;
/** `2026-11-27/03/job_01J….html.br` (a page), `2026-11-27/03/job_01J….3f9a0c1d2e4b.json.br` (a result). */
const LOCATION = /^(\d{4}-\d{2}-\d{2})\/(\d{2})\/[A-Za-z0-9_-]{1,100}(\.html|\.[0-9a-f]{12}\.json)\.br$/;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const HOUR = /^\d{2}$/;

/** Where a page kept at `atMs` is stored: its UTC hour's partition, then the job id. */
export function pageLocation(jobId: string, atMs: number): string {
  return `${partitionOf(jobId, atMs)}${jobId}.html.br`;
}

/**
 * Where a job's result written at `atMs` is stored: its UTC hour's partition, the job id and a
 * nonce, so a second settlement's write (a duplicate delivery, refused by the record) never
 * overwrites the result the record names.
 */
export function resultLocation(jobId: string, atMs: number): string {
  return `${partitionOf(jobId, atMs)}${jobId}.${randomBytes(6).toString("hex")}.json.br`;
}

function partitionOf(jobId: string, atMs: number): string {
  if (!SAFE_ID.test(jobId)) throw new Error(`not a job id: ${jobId.slice(0, 100)}`);
  const iso = new Date(atMs).toISOString();
  return `${iso.slice(0, 10)}/${iso.slice(11, 13)}/`;
}

/** The start (ms) of the hour partition `day/hh`, or undefined when the names are not one. */
export function partitionStart(day: string, hour: string): number | undefined {
  if (!DAY.test(day) || !HOUR.test(hour)) return undefined;
  const t = Date.parse(`${day}T${hour}:00:00Z`);
  return Number.isNaN(t) ? undefined : t;
}

/** A location read back from Redis, checked before it becomes a path or an object key. */
export function checkedLocation(location: string): string {
  if (!LOCATION.test(location)) throw new Error(`not a page location: ${location.slice(0, 200)}`);
  return location;
}

/** Pages in a folder: on one host, shared by the API and the workers (a volume in compose). */
export class FolderPageBlobs implements PageBlobs {
  readonly kind = "folder";
  readonly where: string;

  constructor(
    dir: string,
    /** Flush each write to the disk (the file, then its folder's entry) before `put` resolves: what results need, pages can spare. */
    private readonly durable = false,
  ) {
    this.where = resolve(dir);
  }

  /** Written beside its place, then renamed over it: a reader sees the whole page or none. */
  async put(location: string, data: Buffer): Promise<void> {
    const path = join(this.where, checkedLocation(location));
    const dir = path.slice(0, path.lastIndexOf("/"));
    await mkdir(dir, { recursive: true });
    const temp = join(dir, `.${randomBytes(6).toString("hex")}.tmp`);
    try {
      if (this.durable) await writeSynced(temp, data);
      else await writeFile(temp, data, { flag: "wx" });
      await rename(temp, path);
      if (this.durable) await syncFolder(dir);
    } catch (err) {
      await unlink(temp).catch(() => undefined);
      throw err;
    }
  }

  async delete(locations: readonly string[]): Promise<void> {
    for (const location of locations) {
      await unlink(join(this.where, checkedLocation(location))).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== "ENOENT") throw err;
      });
    }
  }

  async get(location: string): Promise<Buffer | null> {
    try {
      return await readFile(join(this.where, checkedLocation(location)));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
  }

  /**
   * A partition whose hour ended before the cutoff goes whole; in the hour the cutoff falls in, the
   * files written before it (a write that died half way leaves a temp file, swept the same way).
   */
  async sweep(cutoffMs: number): Promise<number> {
    let deleted = 0;
    for (const day of (await namesIn(this.where)).filter((d) => DAY.test(d)).sort()) {
      const dayDir = join(this.where, day);
      for (const hour of (await namesIn(dayDir)).sort()) {
        const start = partitionStart(day, hour);
        if (start === undefined) continue;
        if (start > cutoffMs) return deleted;
        const hourDir = join(dayDir, hour);
        if (start + HOUR_MS <= cutoffMs) {
          deleted += (await namesIn(hourDir)).filter((f) => !f.endsWith(".tmp")).length;
          await rm(hourDir, { recursive: true, force: true });
          continue;
        }
        for (const file of await namesIn(hourDir)) {
          const path = join(hourDir, file);
          const written = await stat(path).then((s) => s.mtimeMs, () => undefined);
          if (written === undefined || written >= cutoffMs) continue;
          await unlink(path).catch(() => undefined);
          if (!file.endsWith(".tmp")) deleted++;
        }
      }
      // Empty once its last hour went (another process may be writing into it: then it stays).
      await rmdir(dayDir).catch(() => undefined);
    }
    return deleted;
  }

  async *list(beforeMs: number): AsyncIterable<string[]> {
    for (const day of (await namesIn(this.where)).filter((d) => DAY.test(d)).sort()) {
      for (const hour of (await namesIn(join(this.where, day))).sort()) {
        const start = partitionStart(day, hour);
        if (start === undefined) continue;
        if (start + HOUR_MS > beforeMs) return;
        const files = (await namesIn(join(this.where, day, hour))).filter((f) => !f.endsWith(".tmp"));
        if (files.length) yield files.map((f) => `${day}/${hour}/${f}`);
      }
    }
  }

  close(): void {}
}

async function writeSynced(path: string, data: Buffer): Promise<void> {
  const file = await open(path, "wx");
  try {
    await file.writeFile(data);
    await file.datasync();
  } finally {
    await file.close();
  }
}

/** The folder's own entries (a file renamed into it) to the disk. */
async function syncFolder(dir: string): Promise<void> {
  const folder = await open(dir, "r");
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}

async function namesIn(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
}
