import type pg from "pg";
import { z } from "zod";
import { ArchiveUnavailableError } from "./archive.js";

export type UsageGranularity = "day" | "month";

/** One endpoint's use in one period (UTC), from the ledger. */
export interface UsageRow {
  /** The period's first day, `YYYY-MM-DD` (UTC). */
  period: string;
  endpoint: string;
  /** Jobs that became final: completed + failed. */
  jobs: number;
  completed: number;
  failed: number;
  /** Of the completed ones, answered from the result cache. */
  cacheHits: number;
  credits: number;
}

/**
 * An account's usage by period and endpoint, read from the `ledger` table (each final job has one
 * entry: a charge when it completed, a refund when it failed). Entries reach the table within
 * about a second of the settlement (the drainer; its lag is in /metrics), so today's figures can
 * trail by that much. PostgreSQL unreachable: ArchiveUnavailableError (the API's 503).
 */
export async function usageByPeriod(
  pool: pg.Pool,
  accountId: string,
  range: { from: Date; to: Date },
  granularity: UsageGranularity,
): Promise<UsageRow[]> {
  try {
    const { rows } = await pool.query<{ period: string; endpoint: string; completed: string; failed: string; cache_hits: string; credits: string }>(
      `SELECT to_char(date_trunc($4, at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS period, endpoint,
              count(*) FILTER (WHERE type = 'charge') AS completed,
              count(*) FILTER (WHERE type = 'refund') AS failed,
              count(*) FILTER (WHERE type = 'charge' AND cache_hit) AS cache_hits,
              coalesce(sum(credits) FILTER (WHERE type = 'charge'), 0) AS credits
         FROM ledger
        WHERE account_id = $1 AND type IN ('charge', 'refund') AND at >= $2 AND at < $3 AND endpoint IS NOT NULL
        GROUP BY 1, 2
        ORDER BY 1, 2`,
      [accountId, range.from.toISOString(), range.to.toISOString(), granularity],
    );
    return rows.map((r) => {
      const completed = Number(r.completed);
      const failed = Number(r.failed);
      return { period: r.period, endpoint: r.endpoint, jobs: completed + failed, completed, failed, cacheHits: Number(r.cache_hits), credits: Number(r.credits) };
    });
  } catch (err) {
    throw new ArchiveUnavailableError(`usage is unavailable: ${(err as Error).message}`);
  }
}

const DAY_MS = 86_400_000;
/** A day (`2026-11-01`, midnight UTC) or an instant (`2026-11-01T12:00:00Z`). */
const instant = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/, "must be a date (YYYY-MM-DD) or an ISO 8601 instant with its offset")
  .transform((s, ctx) => {
    const d = new Date(s.length === 10 ? `${s}T00:00:00Z` : s);
    if (Number.isNaN(d.getTime())) ctx.addIssue({ code: "custom", message: "is not a real date" });
    return d;
  });

/**
 * `from` inclusive, `to` exclusive; the last 30 days until now by default; at most 366 days. The
 * query of GET /v1/account/usage as its route declares it (and the CLI's `usage`): its `.meta` is
 * the OpenAPI document's.
 */
export const usageQuery = z
  .strictObject({
    from: instant.optional().meta({ description: "Start (inclusive): a date YYYY-MM-DD (midnight UTC) or an ISO 8601 instant", example: "2026-11-01" }),
    to: instant.optional().meta({ description: "End (exclusive): a date or an instant; default now", example: "2026-12-01" }),
    granularity: z.enum(["day", "month"]).default("day").meta({ description: "Period of each row (default day)" }),
  })
  .transform(({ from, to, granularity }) => {
    const end = to ?? new Date();
    return { from: from ?? new Date(end.getTime() - 30 * DAY_MS), to: end, granularity };
  })
  .refine((q) => q.from < q.to, { message: "from must be before to", path: ["from"] })
  .refine((q) => q.to.getTime() - q.from.getTime() <= 366 * DAY_MS, { message: "a range covers at most 366 days", path: ["to"] });
