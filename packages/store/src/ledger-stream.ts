/**
 * The ledger's way out of Redis. Each settlement script (FINALIZE and CREATE_CACHED in lua/jobs.ts,
 * GRANT in lua/accounts.ts) appends its entry to one Redis stream in the same step as the charge, so
 * an entry exists exactly when its balance change does. A drainer in the worker processes copies
 * the entries into PostgreSQL and then trims them off (pg/ledger.ts): Redis holds only what is not
 * yet in PostgreSQL, instead of a per-account list that grew forever (about 133 bytes a job).
 */
import type { LedgerEntry } from "./accounts.js";

/**
 * The stream is capped near this many entries (XADD MAXLEN ~): while PostgreSQL is down the ledger
 * waits here, and about 1 M entries (~150 MB of Redis) is hours of settlements at a busy
 * deployment's rate. Past it the oldest undrained entries would be dropped, so /metrics shows the
 * stream's fill (serp_ledger_stream_fill_ratio) to alarm on long before.
 */
export const LEDGER_STREAM_MAXLEN = 1_000_000;

/** Lua: appends the table `entry` (with its accountId) to the stream whose key is the local `streamKey`. */
export const xaddEntry = (streamKey: string, entry: string) =>
  `redis.call('XADD', ${streamKey}, 'MAXLEN', '~', '${LEDGER_STREAM_MAXLEN}', '*', 'e', cjson.encode(${entry}))`;

/** A ledger entry as it travels through the stream: with its account, and grants with their id. */
export interface StreamEntry extends LedgerEntry {
  accountId: string;
  grantId?: string;
}

/**
 * What makes an entry unique, for PostgreSQL's `ledger.entry_key`: one charge or refund per job,
 * one row per grant. Inserting an entry twice (a drainer that died before trimming) adds nothing.
 */
export function entryKey(e: Pick<StreamEntry, "type" | "jobId" | "grantId">): string {
  if (e.type === "grant") return `grant:${e.grantId ?? ""}`;
  return `${e.type}:${e.jobId ?? ""}`;
}

/** An entry from its stream record (fields `e`, the JSON), or null for one that is not ours. */
export function entryFromFields(fields: readonly string[]): StreamEntry | null {
  for (let i = 0; i + 1 < fields.length; i += 2) {
    if (fields[i] !== "e") continue;
    try {
      const e = JSON.parse(fields[i + 1]!) as StreamEntry;
      return e && typeof e.accountId === "string" && typeof e.type === "string" ? e : null;
    } catch {
      return null;
    }
  }
  return null;
}

/** The time (ms since the epoch) Redis gave a stream id: its first part. */
export const streamIdMs = (id: string): number => Number(id.slice(0, id.indexOf("-")));

/** The smallest id after `id` (XTRIM MINID keeps ids ≥ it). */
export function nextStreamId(id: string): string {
  const at = id.indexOf("-");
  return `${id.slice(0, at)}-${BigInt(id.slice(at + 1)) + 1n}`;
}
