/**
 * The operators' checks between Redis (the hot copy) and PostgreSQL (the source of truth), for the
 * CLI's `reconcile` and `rebuild`.
 */
import type { Redis } from "ioredis";
import type { KeySpace } from "../keys.js";
import { LIMIT_FIELDS, type LimitOverrides } from "../limits.js";
import { loadAccounts, loadKeys } from "./accounts.js";
import { LedgerDrainer, ledgerTotals } from "./ledger.js";
import type { PgPool } from "./pool.js";

async function execOrThrow(p: ReturnType<Redis["pipeline"]>): Promise<void> {
  for (const [err] of (await p.exec()) ?? []) if (err) throw err;
}

export interface Difference {
  accountId: string;
  /** The balance Redis holds (null: no such account in Redis). */
  redisBalance: number | null;
  /** Grants − charges in the ledger (null: no such account in PostgreSQL). */
  ledgerBalance: number | null;
  problem: "balance differs" | "missing in Redis" | "missing in PostgreSQL";
}

export interface ReconcileReport {
  accounts: number;
  differences: Difference[];
}

async function redisBalances(redis: Redis, keys: KeySpace, ids: string[]): Promise<Map<string, number | null>> {
  const out = new Map<string, number | null>();
  for (let i = 0; i < ids.length; i += 1_000) {
    const chunk = ids.slice(i, i + 1_000);
    const p = redis.pipeline();
    for (const id of chunk) p.hmget(keys.account(id), "id", "balance");
    const res = (await p.exec()) ?? [];
    chunk.forEach((id, j) => {
      const [err, v] = res[j] ?? [];
      if (err) throw err;
      const [found, balance] = v as [string | null, string | null];
      out.set(id, found ? Number(balance ?? 0) : null);
    });
  }
  return out;
}

async function compare(redis: Redis, keys: KeySpace, pg: PgPool): Promise<ReconcileReport> {
  await new LedgerDrainer(redis, keys, pg).drainAll();
  const [accounts, totals, inRedis] = await Promise.all([loadAccounts(pg), ledgerTotals(pg), redis.smembers(keys.accounts())]);
  const inPg = new Set(accounts.map((a) => a.id));
  const ids = [...new Set([...inPg, ...inRedis])].sort();
  const balances = await redisBalances(redis, keys, ids);
  const differences: Difference[] = [];
  for (const id of ids) {
    const t = totals.get(id) ?? { granted: 0, charged: 0 };
    const ledgerBalance = inPg.has(id) ? t.granted - t.charged : null;
    const redisBalance = balances.get(id) ?? null;
    if (ledgerBalance === null) differences.push({ accountId: id, redisBalance, ledgerBalance, problem: "missing in PostgreSQL" });
    else if (redisBalance === null) differences.push({ accountId: id, redisBalance, ledgerBalance, problem: "missing in Redis" });
    else if (redisBalance !== ledgerBalance) differences.push({ accountId: id, redisBalance, ledgerBalance, problem: "balance differs" });
  }
  return { accounts: ids.length, differences };
}

/**
 * For every account: its balance in Redis against grants − charges in PostgreSQL's ledger, after
 * draining the ledger stream. A settlement landing between the two reads could show as a
 * difference for a moment, so differences are checked again (`tries` times, `pauseMs` apart) and
 * only the ones that persist are reported.
 */
export async function reconcile(redis: Redis, keys: KeySpace, pg: PgPool, { tries = 3, pauseMs = 200 } = {}): Promise<ReconcileReport> {
  let report = await compare(redis, keys, pg);
  for (let i = 1; i < tries && report.differences.length; i++) {
    await new Promise((r) => setTimeout(r, pauseMs));
    const before = new Set(report.differences.map((d) => d.accountId));
    const again = await compare(redis, keys, pg);
    report = { accounts: again.accounts, differences: again.differences.filter((d) => before.has(d.accountId)) };
  }
  return report;
}

/**
 * Restores Redis's accounts (balance = grants − charges, reserved 0, limit overrides) and keys from
 * PostgreSQL, after Redis lost them. Whatever entries the ledger stream still holds are drained
 * first. Accounts and keys Redis has that PostgreSQL does not are left alone. Run it with the
 * workers stopped: jobs in flight are not counted (reserved starts at 0).
 */
export async function rebuild(redis: Redis, keys: KeySpace, pg: PgPool): Promise<{ accounts: number; keys: number }> {
  await new LedgerDrainer(redis, keys, pg).drainAll();
  const [accounts, apiKeys, totals] = await Promise.all([loadAccounts(pg), loadKeys(pg), ledgerTotals(pg)]);
  for (let i = 0; i < accounts.length; i += 500) {
    const p = redis.pipeline();
    for (const a of accounts.slice(i, i + 500)) {
      const t = totals.get(a.id) ?? { granted: 0, charged: 0 };
      const limits: Record<string, string> = {};
      for (const [name, field] of Object.entries(LIMIT_FIELDS) as [keyof LimitOverrides, string][]) {
        if (a.limits[name] !== undefined) limits[field] = String(a.limits[name]);
      }
      p.hdel(keys.account(a.id), ...Object.values(LIMIT_FIELDS));
      p.hset(keys.account(a.id), { id: a.id, name: a.name, createdAt: a.createdAt, balance: t.granted - t.charged, reserved: 0, ...limits });
      p.sadd(keys.accounts(), a.id);
    }
    await execOrThrow(p);
  }
  for (let i = 0; i < apiKeys.length; i += 500) {
    const p = redis.pipeline();
    for (const k of apiKeys.slice(i, i + 500)) {
      p.hset(keys.apiKey(k.sha256), { accountId: k.accountId, id: k.id, label: k.label, createdAt: k.createdAt, revokedAt: k.revokedAt ?? "" });
      p.sadd(keys.accountKeys(k.accountId), k.sha256);
    }
    await execOrThrow(p);
  }
  return { accounts: accounts.length, keys: apiKeys.length };
}
