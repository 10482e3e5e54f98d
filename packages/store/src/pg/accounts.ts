/**
 * The `accounts` and `api_keys` tables: accounts, their limit overrides and their keys (SHA-256
 * only), the source of truth. AccountStore writes here first and then to Redis, which keeps the
 * hot copy the atomic reserve and authentication read; `rebuild` (pg/reconcile.ts) restores Redis
 * from here. This module owns both tables.
 */
import type { LimitOverrides, LimitOverridesChange } from "../limits.js";
import type { PgPool } from "./pool.js";

type Queryable = Pick<PgPool, "query">;

export interface AccountRow {
  id: string;
  name: string;
  createdAt: string;
  limits: LimitOverrides;
}

export interface KeyRow {
  sha256: string;
  id: string;
  accountId: string;
  label: string;
  createdAt: string;
  revokedAt: string | null;
}

/** A new account (an id that exists already is left as it is). */
export async function insertAccount(pg: Queryable, a: AccountRow): Promise<void> {
  await pg.query(
    "INSERT INTO accounts (id, name, created_at, limits) VALUES ($1, $2, $3, $4) ON CONFLICT (id) DO NOTHING",
    [a.id, a.name, a.createdAt, JSON.stringify(a.limits)],
  );
}

export async function insertKey(pg: Queryable, k: KeyRow): Promise<void> {
  await pg.query(
    "INSERT INTO api_keys (sha256, id, account_id, label, created_at, revoked_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (sha256) DO NOTHING",
    [k.sha256, k.id, k.accountId, k.label, k.createdAt, k.revokedAt],
  );
}

export async function revokeKeyRow(pg: Queryable, sha256: string, at: string): Promise<void> {
  await pg.query("UPDATE api_keys SET revoked_at = $2 WHERE sha256 = $1 AND revoked_at IS NULL", [sha256, at]);
}

/** Applies a change of limit overrides (null removes one). False when PostgreSQL has no such account. */
export async function updateLimits(pg: Queryable, accountId: string, change: LimitOverridesChange): Promise<boolean> {
  const set = Object.fromEntries(Object.entries(change).filter(([, v]) => v !== undefined && v !== null));
  const removed = Object.entries(change).filter(([, v]) => v === null).map(([k]) => k);
  const r = await pg.query("UPDATE accounts SET limits = (limits || $2::jsonb) - $3::text[] WHERE id = $1", [accountId, JSON.stringify(set), removed]);
  return (r.rowCount ?? 0) > 0;
}

export async function loadAccounts(pg: Queryable): Promise<AccountRow[]> {
  const r = await pg.query<{ id: string; name: string; created_at: Date; limits: LimitOverrides }>("SELECT id, name, created_at, limits FROM accounts ORDER BY id");
  return r.rows.map((row) => ({ id: row.id, name: row.name, createdAt: row.created_at.toISOString(), limits: row.limits }));
}

export async function loadKeys(pg: Queryable): Promise<KeyRow[]> {
  const r = await pg.query<{ sha256: string; id: string; account_id: string; label: string; created_at: Date; revoked_at: Date | null }>(
    "SELECT sha256, id, account_id, label, created_at, revoked_at FROM api_keys ORDER BY account_id, created_at",
  );
  return r.rows.map((row) => ({
    sha256: row.sha256, id: row.id, accountId: row.account_id, label: row.label,
    createdAt: row.created_at.toISOString(), revokedAt: row.revoked_at?.toISOString() ?? null,
  }));
}
