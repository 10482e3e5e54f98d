/**
 * Completed jobs' results, kept beside the raw pages while their job records are in Redis
 * (JOB_RESULT_STORE=page-store, the default): a results page's result is tens of KiB of JSON (inline
 * thumbnails and all), most of what a job record would take in Redis, so its bytes go to a store of
 * their own (openPageBlobs(env, "results"): the folder's `results/`, or the bucket's results prefix)
 * and the record keeps only where they are (`resultLoc`). Brotli-compressed as pages are.
 *
 * A result is written whole and durably before the script that settles its job runs (JobStore
 * finalize, createCached), so a job is never seen completed without its result; a settlement the
 * record refuses deletes the result it wrote. It lives as long as its record: the workers' sweeper
 * deletes every result JOB_RETENTION_SECONDS after it was written (the longest a record lives), and,
 * where records are archived in PostgreSQL (which holds them whole, result and all), each result
 * JOB_HOT_SECONDS after it was written once no record in Redis names it any more. docs/RAW-PAGES.md.
 */
import { checkedLocation, resultLocation, type PageBlobs } from "./page-blobs.js";
import type { RawPagesEnv } from "./env.js";
import { compressPage, decompressPage, openPageBlobs } from "./raw-pages.js";

/**
 * How long a result outlives the longest its record can live (JOB_RETENTION_SECONDS from its
 * settlement): the record's expiry starts just after its result is written.
 */
const SWEEP_GRACE_MS = 60_000;

/** A record names a result the result store does not have, or has unreadable: a clear error, never a result made up. */
export class ResultMissingError extends Error {
  constructor(
    readonly jobId: string,
    readonly where: string,
    readonly unreadable = false,
  ) {
    super(`the result of ${jobId} is recorded but ${unreadable ? "unreadable" : "missing"} in the result store (${where})`);
    this.name = "ResultMissingError";
  }
}

export class JobResults {
  constructor(
    /** Where the results' bytes are (openPageBlobs(env, "results")). */
    readonly blobs: PageBlobs,
    /** JOB_RETENTION_SECONDS: the longest a job record lives once settled. */
    readonly retentionSeconds: number,
    /**
     * JOB_HOT_SECONDS where records are archived in PostgreSQL (their Redis copies then live that long
     * after settling): results older than this that no record names go at once. Unset: none.
     */
    readonly hotSeconds?: number,
  ) {}

  /** Writes a result (its JSON) whole, and to the disk when in a folder; returns where it is. */
  async put(jobId: string, json: string, now = Date.now()): Promise<string> {
    const loc = resultLocation(jobId, now);
    await this.blobs.put(loc, await compressPage(json));
    return loc;
  }

  /**
   * The result JSON at `loc`. ResultMissingError when the store has nothing there or bytes that do
   * not decompress; PageStoreUnavailableError (page-blobs.ts) when the store does not answer.
   */
  async get(jobId: string, loc: string): Promise<string> {
    const data = await this.blobs.get(checkedLocation(loc));
    if (!data) throw new ResultMissingError(jobId, this.blobs.where);
    return decompressPage(data).catch(() => {
      throw new ResultMissingError(jobId, this.blobs.where, true);
    });
  }

  /** A result no record names (its settlement was refused, or failed): deleted now rather than by the sweeper. */
  async discard(loc: string): Promise<void> {
    await this.blobs.delete([loc]).catch(() => undefined);
  }

  /**
   * Deletes the results no record can name any more (the workers' sweeper); returns how many. Past
   * the retention, whole partitions; past the hot window, each result `named` (JobStore.resultsNamed)
   * says no record names: its record was archived and has expired from Redis, or it was discarded.
   */
  async sweep(now = Date.now(), named?: (locations: string[]) => Promise<boolean[]>): Promise<number> {
    let deleted = await this.blobs.sweep(now - this.retentionSeconds * 1000 - SWEEP_GRACE_MS);
    if (this.hotSeconds === undefined || !named) return deleted;
    for await (const batch of this.blobs.list(now - this.hotSeconds * 1000 - SWEEP_GRACE_MS)) {
      const kept = await named(batch);
      const unnamed = batch.filter((_, i) => !kept[i]);
      if (unnamed.length) await this.blobs.delete(unnamed);
      deleted += unnamed.length;
    }
    return deleted;
  }
}

/**
 * A job record's hash with its result read from the result store when the record names one there
 * (`resultLoc`): what fromHash reads. A record with its result inline (JOB_RESULT_STORE=redis, or
 * written before results moved) is returned as it is.
 */
export async function withStoredResult(h: Record<string, string>, results: JobResults | undefined): Promise<Record<string, string>> {
  if (!h.resultLoc || h.result) return h;
  if (!results) throw new ResultMissingError(h.id ?? "?", "this process has no result store: JOB_RESULT_STORE=redis where the workers keep results in the page store");
  return { ...h, result: await results.get(h.id!, h.resultLoc) };
}

/** The result store the settings name (JOB_RESULT_STORE, beside the pages: openPageBlobs), or none when results stay in Redis. */
export function openJobResults(env: RawPagesEnv, retentionSeconds: number, hotSeconds?: number): JobResults | undefined {
  return env.JOB_RESULT_STORE === "page-store" ? new JobResults(openPageBlobs(env, "results"), retentionSeconds, hotSeconds) : undefined;
}

/** The job a result's location names (`<day>/<hh>/<jobId>.<nonce>.json.br`). */
export function jobOfResult(location: string): string {
  return location.slice(location.lastIndexOf("/") + 1).split(".")[0]!;
}
