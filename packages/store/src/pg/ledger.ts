/**
 * The `ledger` table: every grant, charge and refund, copied from the Redis stream the settlement
 * scripts append to (ledger-stream.ts). This module owns the table.
 *
 * The drainer reads the oldest entries, inserts them in one statement (`ON CONFLICT (entry_key) DO
 * NOTHING`), and only once that has committed trims them off the stream (XTRIM MINID). A drainer
 * that dies between the two leaves entries that are already in the table: the next insert of them
 * adds nothing, then they are trimmed. No entry is lost (nothing leaves the stream before it is in
 * PostgreSQL) and none is doubled (one row per job and type, per grant). The trim is safe even when
 * two drainers overlap (a lock that expired): XADD ids only grow, so everything below the last id a
 * drainer read was in its batch and is committed. While PostgreSQL is down the entries wait in the
 * stream (capped at LEDGER_STREAM_MAXLEN) and settlements go on: none of this is on their path.
 */
import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import type { LedgerEntry } from "../accounts.js";
import type { KeySpace } from "../keys.js";
import { LEDGER_STREAM_MAXLEN, entryFromFields, entryKey, nextStreamId, streamIdMs, type StreamEntry } from "../ledger-stream.js";
import { HOLD_LOCK, RELEASE_LOCK } from "../lua/ledger-lock.js";
import type { JobArchive } from "./archive.js";
import { inTransaction, type PgPool } from "./pool.js";

type Queryable = Pick<PgPool, "query">;

/** Inserts entries, each at most once (by entry key). Returns how many were new. */
export async function insertLedgerEntries(pg: Queryable, entries: readonly StreamEntry[]): Promise<number> {
  if (!entries.length) return 0;
  const cols = {
    key: [] as string[], account: [] as string[], type: [] as string[], credits: [] as number[], at: [] as string[],
    job: [] as (string | null)[], endpoint: [] as (string | null)[], pack: [] as (string | null)[], grant: [] as (string | null)[],
    uncharged: [] as (number | null)[], cacheHit: [] as boolean[],
  };
  for (const e of entries) {
    cols.key.push(entryKey(e));
    cols.account.push(e.accountId);
    cols.type.push(e.type);
    cols.credits.push(e.credits);
    cols.at.push(e.at);
    cols.job.push(e.jobId ?? null);
    cols.endpoint.push(e.endpoint ?? null);
    cols.pack.push(e.pack ?? null);
    cols.grant.push(e.grantId ?? null);
    cols.uncharged.push(e.uncharged ?? null);
    cols.cacheHit.push(e.cacheHit === true);
  }
  const r = await pg.query(
    `INSERT INTO ledger (entry_key, account_id, type, credits, at, job_id, endpoint, pack, grant_id, uncharged, cache_hit)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::timestamptz[], $6::text[], $7::text[], $8::text[], $9::text[], $10::int[], $11::bool[])
     ON CONFLICT (entry_key) DO NOTHING`,
    [cols.key, cols.account, cols.type, cols.credits, cols.at, cols.job, cols.endpoint, cols.pack, cols.grant, cols.uncharged, cols.cacheHit],
  );
  return r.rowCount ?? 0;
}

/** The stream's state, for /metrics: entries not yet in PostgreSQL and the age of the oldest. */
export interface DrainState {
  pending: number;
  /** Seconds since the oldest undrained entry was appended (0 when none). */
  lagSeconds: number;
  /** pending / LEDGER_STREAM_MAXLEN: past 1 the oldest entries would be dropped. */
  fillRatio: number;
  /** Whether the last attempt to write to PostgreSQL succeeded. */
  postgresUp: boolean;
}

export interface LedgerDrainerOptions {
  /** Entries per insert. */
  batch?: number;
  /** The pause between polls when the stream is empty; after failures it doubles, up to FAILING_PAUSE_MS. */
  idleMs?: number;
  /** How long the drain lock is held without renewal (another process takes over after it). */
  lockMs?: number;
  /** Called after each drained batch with each entry's delay (ms from its XADD to its commit). */
  onDrained?: (delaysMs: number[]) => void;
  /** Called after each poll with the stream's state. */
  onState?: (state: DrainState) => void;
  onError?: (err: Error) => void;
  /** The job archive (archive.ts): the jobs of drained charges and refunds are archived with them. */
  archive?: Pick<JobArchive, "recordsOf" | "insert" | "shortenHot">;
  /** Test hook: runs after an insert committed, before the trim (the drill kills the process here). */
  afterInsert?: () => Promise<void> | void;
}

/** The longest pause between two drains while they fail. */
const FAILING_PAUSE_MS = 2_000;

/**
 * Copies the ledger stream into PostgreSQL, in every worker process; one at a time drains (a Redis
 * lock), the others stand by and report the stream's state all the same.
 */
export class LedgerDrainer {
  private readonly token = randomBytes(8).toString("hex");
  private readonly batch: number;
  private readonly idleMs: number;
  private readonly lockMs: number;
  private stopped = false;
  private loop: Promise<void> | undefined;
  private wake: (() => void) | undefined;
  private postgresUp = true;

  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
    private readonly pg: Queryable,
    private readonly o: LedgerDrainerOptions = {},
  ) {
    this.batch = o.batch ?? 500;
    this.idleMs = o.idleMs ?? 200;
    this.lockMs = o.lockMs ?? 10_000;
  }

  /**
   * One batch: the oldest entries, inserted, then trimmed. Returns how many were read (0: the
   * stream is empty). Throws when PostgreSQL fails; the entries stay.
   */
  async drainOnce(): Promise<number> {
    const rows = (await this.redis.xrange(this.keys.ledgerStream(), "-", "+", "COUNT", this.batch)) as [string, string[]][];
    if (!rows.length) return 0;
    const entries = rows.map(([, fields]) => entryFromFields(fields)).filter((e): e is StreamEntry => e !== null);
    // The jobs these settlements ended, archived in the same transaction as their ledger rows.
    const archive = this.o.archive;
    const records = archive ? await archive.recordsOf(entries.filter((e) => e.jobId && e.type !== "grant").map((e) => e.jobId!)) : [];
    try {
      if (records.length && archive && "connect" in this.pg) {
        await inTransaction(this.pg as PgPool, async (client) => {
          await insertLedgerEntries(client, entries);
          await archive.insert(client, records);
        });
      } else {
        await insertLedgerEntries(this.pg, entries);
      }
      this.postgresUp = true;
    } catch (err) {
      this.postgresUp = false;
      throw err;
    }
    // Archived: each job's Redis copy now lives only to the end of its hot window.
    if (records.length) await archive!.shortenHot(records);
    const committedAt = Date.now();
    await this.o.afterInsert?.();
    const lastId = rows[rows.length - 1]![0];
    await this.redis.xtrim(this.keys.ledgerStream(), "MINID", nextStreamId(lastId));
    this.o.onDrained?.(rows.map(([id]) => committedAt - streamIdMs(id)));
    return rows.length;
  }

  /** Drains until the stream is empty (or `deadlineMs` passes): what reconcile and rebuild do first. */
  async drainAll(deadlineMs = 60_000): Promise<void> {
    const until = Date.now() + deadlineMs;
    while ((await this.drainOnce()) > 0) if (Date.now() > until) throw new Error("the ledger stream did not empty in time");
  }

  /** The stream's state, read from Redis. */
  async state(): Promise<DrainState> {
    const [len, first] = await Promise.all([
      this.redis.xlen(this.keys.ledgerStream()),
      this.redis.xrange(this.keys.ledgerStream(), "-", "+", "COUNT", 1) as Promise<[string, string[]][]>,
    ]);
    const oldest = first[0]?.[0];
    return {
      pending: len,
      lagSeconds: oldest ? Math.max(0, (Date.now() - streamIdMs(oldest)) / 1_000) : 0,
      fillRatio: len / LEDGER_STREAM_MAXLEN,
      postgresUp: this.postgresUp,
    };
  }

  start(): this {
    this.loop ??= this.run();
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    await RELEASE_LOCK.run(this.redis, { lock: this.keys.ledgerDrainLock(), token: this.token }).catch(() => undefined);
  }

  private async run(): Promise<void> {
    // After failures (PostgreSQL or Redis down) the pause doubles, up to FAILING_PAUSE_MS, so an
    // outage is not polled five times a second; the first success restores it.
    let pause = this.idleMs;
    while (!this.stopped) {
      let full = false;
      try {
        const held = (await HOLD_LOCK.run<number>(this.redis, { lock: this.keys.ledgerDrainLock(), token: this.token, ms: this.lockMs })) === 1;
        if (held) full = (await this.drainOnce()) >= this.batch;
        pause = this.idleMs;
      } catch (err) {
        this.o.onError?.(err as Error);
        pause = Math.min(FAILING_PAUSE_MS, Math.max(this.idleMs, pause * 2));
      }
      if (this.o.onState) await this.state().then(this.o.onState, () => undefined);
      if (!full && !this.stopped) await this.sleep(pause);
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((r) => {
      const t = setTimeout(r, ms);
      this.wake = () => {
        clearTimeout(t);
        r();
      };
    });
  }
}

interface LedgerRow {
  type: LedgerEntry["type"];
  credits: number;
  at: Date;
  job_id: string | null;
  endpoint: string | null;
  pack: string | null;
  grant_id: string | null;
  uncharged: number | null;
  cache_hit: boolean;
}

function fromRow(r: LedgerRow): LedgerEntry & { grantId?: string } {
  const e: LedgerEntry & { grantId?: string } = { type: r.type, credits: r.credits, at: r.at.toISOString() };
  if (r.job_id) e.jobId = r.job_id;
  if (r.endpoint) e.endpoint = r.endpoint;
  if (r.pack) e.pack = r.pack;
  if (r.grant_id) e.grantId = r.grant_id;
  if (r.uncharged !== null) e.uncharged = r.uncharged;
  if (r.cache_hit) e.cacheHit = true;
  return e;
}

/**
 * How many of the newest stream entries ledger() looks through for an account's undrained ones. The
 * stream is normally a drain interval long; while PostgreSQL is down, only its newest entries show.
 */
const STREAM_SCAN = 10_000;

/** The account's entries still in the stream (not yet drained, or drained and not yet trimmed), oldest first. */
async function streamEntries(redis: Redis, keys: KeySpace, accountId: string): Promise<StreamEntry[]> {
  const rows = (await redis.xrevrange(keys.ledgerStream(), "+", "-", "COUNT", STREAM_SCAN)) as [string, string[]][];
  return rows
    .map(([, f]) => entryFromFields(f))
    .filter((e): e is StreamEntry => e?.accountId === accountId)
    .reverse();
}

/**
 * The account's newest `limit` ledger entries, oldest first: PostgreSQL's rows plus the entries
 * still in the stream, so a job settled a moment ago shows at once. Without PostgreSQL (pg
 * undefined): the stream's only.
 */
export async function readLedger(redis: Redis, keys: KeySpace, pg: Queryable | undefined, accountId: string, limit: number): Promise<LedgerEntry[]> {
  // The stream first, then the table: an entry trimmed before the stream was read had committed
  // before it (the drainer trims only after its insert commits), so the table read after it has it.
  // Read the other way round, an entry drained in between would be in neither.
  const pending = await streamEntries(redis, keys, accountId);
  const rows = pg
    ? await pg
        .query<LedgerRow>(
          `SELECT type, credits, at, job_id, endpoint, pack, grant_id, uncharged, cache_hit FROM ledger
           WHERE account_id = $1 ORDER BY seq DESC LIMIT $2`,
          [accountId, limit],
        )
        .then((r) => r.rows.reverse().map(fromRow))
    : [];
  const seen = new Set(rows.map((e) => entryKey(e)));
  const merged = [...rows, ...pending.filter((e) => !seen.has(entryKey(e)))];
  merged.sort((a, b) => a.at.localeCompare(b.at));
  return merged.slice(-limit).map(({ accountId: _a, grantId: _g, ...e }: LedgerEntry & { accountId?: string; grantId?: string }) => e);
}

/** Per account: credits granted and charged, from PostgreSQL. */
export async function ledgerTotals(pg: Queryable): Promise<Map<string, { granted: number; charged: number }>> {
  const r = await pg.query<{ account_id: string; granted: string; charged: string }>(
    `SELECT account_id, COALESCE(SUM(credits) FILTER (WHERE type = 'grant'), 0) AS granted,
            COALESCE(SUM(credits) FILTER (WHERE type <> 'grant'), 0) AS charged
     FROM ledger GROUP BY account_id`,
  );
  return new Map(r.rows.map((row) => [row.account_id, { granted: Number(row.granted), charged: Number(row.charged) }]));
}
