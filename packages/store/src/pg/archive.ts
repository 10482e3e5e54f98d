import type { Redis } from "ioredis";
import type pg from "pg";
import { FINAL_STATUSES, type Job } from "@serp/shared";
import { fromHash, type JobRecord } from "../jobs.js";
import { ResultMissingError, withStoredResult, type JobResults } from "../job-results.js";
import type { KeySpace } from "../keys.js";

/** The archive could not be read (PostgreSQL unreachable): the API answers 503 with Retry-After. */
export class ArchiveUnavailableError extends Error {
  override readonly name = "ArchiveUnavailableError";
}

/** How long a final job stays whole in Redis by default, before only the archive holds it. */
export const DEFAULT_JOB_HOT_SECONDS = 3_600;

/**
 * The job archive (table `job_archive`): a final job's whole record, kept in PostgreSQL until its
 * retention ends, while Redis keeps it only for its hot window. A job is archived when the ledger
 * drainer writes its settlement (the same transaction, so the ledger row and the archived record
 * arrive together or not at all); only after that commit is its Redis copy given the rest of its
 * hot window to live (`shortenHot`). A crash in between leaves the Redis copy at its full
 * retention, and the next drain of the same entry archives it again as a no-op: nothing is lost
 * and nothing doubles. PostgreSQL down: records stay in Redis until it is back.
 */
export class JobArchive {
  constructor(
    private readonly pool: pg.Pool,
    private readonly redis: Redis,
    private readonly keys: KeySpace,
    /** Seconds a final job keeps its whole record in Redis. */
    readonly hotSeconds: number,
    /** Seconds a job is kept at all (JOB_RETENTION_SECONDS), counted from its creation. */
    readonly retentionSeconds: number,
  ) {}

  /**
   * Where records read here find their results when kept in the result store (JobStore.results):
   * the archive holds each record whole, result and all.
   */
  results: JobResults | undefined;
  readResultsFrom(results: JobResults | undefined): this {
    this.results = results;
    return this;
  }

  /**
   * The final records of `jobIds` still in Redis (others are gone or not final: nothing to archive),
   * with their results. A record whose result is missing from the result store is left out (it stays
   * in Redis to the end of its retention, where reading it says so); a result store that does not
   * answer throws, and the drain is tried again.
   */
  async recordsOf(jobIds: readonly string[]): Promise<JobRecord[]> {
    if (!jobIds.length) return [];
    const pipe = this.redis.pipeline();
    for (const id of jobIds) pipe.hgetall(this.keys.job(id));
    const replies = (await pipe.exec()) ?? [];
    const records = await Promise.all(
      replies.map(async ([err, h]) => {
        const fields = h as Record<string, string> | undefined;
        if (err || !fields?.id || !FINAL_STATUSES.includes(fields.status as Job["status"])) return null;
        try {
          return fromHash(await withStoredResult(fields, this.results));
        } catch (e) {
          if (e instanceof ResultMissingError) return null;
          throw e;
        }
      }),
    );
    return records.filter((r): r is JobRecord => r !== null);
  }

  /** Writes records inside the caller's transaction; a record archived before is left as it is. */
  async insert(client: pg.ClientBase, records: readonly JobRecord[]): Promise<void> {
    if (!records.length) return;
    const rows = records.map((r) => ({
      id: r.job.id,
      account_id: r.accountId,
      endpoint: r.job.endpoint,
      status: r.job.status,
      created_at: r.job.createdAt,
      completed_at: r.job.completedAt,
      expires_at: new Date(Date.parse(r.job.createdAt) + this.retentionSeconds * 1000).toISOString(),
      record: r,
    }));
    await client.query(
      `INSERT INTO job_archive (id, account_id, endpoint, status, created_at, completed_at, expires_at, record)
       SELECT id, account_id, endpoint, status, created_at, completed_at, expires_at, record
       FROM jsonb_to_recordset($1::jsonb) AS t(id text, account_id text, endpoint text, status text,
         created_at timestamptz, completed_at timestamptz, expires_at timestamptz, record jsonb)
       ON CONFLICT (id) DO NOTHING`,
      [JSON.stringify(rows)],
    );
  }

  /**
   * After the archive committed: each record's Redis copy lives out the rest of its hot window
   * (from its completion) and no longer, so Redis memory stays flat as retention grows.
   */
  async shortenHot(records: readonly JobRecord[]): Promise<void> {
    if (!records.length) return;
    const pipe = this.redis.pipeline();
    const now = Date.now();
    for (const r of records) {
      const finished = Date.parse(r.job.completedAt ?? r.job.createdAt);
      const left = Math.max(1, Math.ceil((finished + this.hotSeconds * 1000 - now) / 1000));
      // Only ever shorter: a record's retention is never extended here.
      pipe.expire(this.keys.job(r.job.id), left, "LT");
    }
    await pipe.exec();
  }

  /** A job from the archive; null when it was never archived or its retention ended. */
  async get(id: string): Promise<JobRecord | null> {
    let rows: { record: JobRecord }[];
    try {
      ({ rows } = await this.pool.query<{ record: JobRecord }>("SELECT record FROM job_archive WHERE id = $1 AND expires_at > now()", [id]));
    } catch (err) {
      throw new ArchiveUnavailableError(`the job archive is unavailable: ${(err as Error).message}`);
    }
    return rows[0]?.record ?? null;
  }

  /** Deletes records past their retention, a batch at a time; returns how many went. */
  async purgeExpired(batch = 1_000): Promise<number> {
    const { rowCount } = await this.pool.query(
      "DELETE FROM job_archive WHERE id IN (SELECT id FROM job_archive WHERE expires_at <= now() LIMIT $1)",
      [batch],
    );
    return rowCount ?? 0;
  }
}
