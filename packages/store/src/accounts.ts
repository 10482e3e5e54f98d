import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { Redis } from "ioredis";
import { API_KEY_PATTERN, newAccountId, newApiKey } from "@serp/shared";
import type { KeySpace } from "./keys.js";
import type { PgPool } from "./pg/pool.js";
import type { StreamEntry } from "./ledger-stream.js";
import { GRANT, SET_LIMITS } from "./lua/accounts.js";
import { insertAccount, insertKey, revokeKeyRow, updateLimits } from "./pg/accounts.js";
import { insertLedgerEntries, readLedger } from "./pg/ledger.js";
import { LIMIT_FIELDS, overridesFromHash, validateLimitChange, type LimitOverrides, type LimitOverridesChange } from "./limits.js";

// Limits are stored with the account; their types and defaults come with it.


export interface Account {
  id: string;
  name: string;
  createdAt: string;
  /** Credits bought minus credits charged. */
  balance: number;
  /** Credits held by jobs not yet final: one per job pending or processing. */
  reserved: number;
  /** Limits an operator set for this account (absent ones follow the deployment defaults). */
  limits: LimitOverrides;
}

export interface KeyInfo {
  /** The key's public id: its first characters, safe to show and to revoke by. */
  id: string;
  accountId: string;
  label: string;
  createdAt: string;
  revokedAt: string | null;
}

export interface LedgerEntry {
  type: "grant" | "charge" | "refund";
  credits: number;
  at: string;
  jobId?: string;
  endpoint?: string;
  pack?: string;
  uncharged?: number;
  /** A charge for a job answered from the result cache (billed CACHE_HIT_CREDITS, possibly 0). */
  cacheHit?: true;
}

export function hashKey(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

/** The first 12 characters (`sk_live_` + 4) name a key without revealing it. */
function keyId(key: string): string {
  return key.slice(0, 12);
}

export class AccountStore {
  /** Keys found valid lately, by hash: authenticate answers these without asking Redis. */
  private readonly validKeys = new Map<string, { accountId: string; until: number }>();
  /** Accounts' limit overrides read lately, by account id: limits answers these without asking Redis. */
  private readonly knownLimits = new Map<string, { limits: LimitOverrides; until: number }>();
  /** Counts what was forgotten, so a read that raced a revocation or a change is not remembered. */
  private forgotten = 0;

  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
    /**
     * How long authenticate trusts a key it found valid, and limits an account's overrides it read
     * (0: both ask Redis every time). Revocations and limit changes reach a process at once through
     * followChanges; this bounds one whose announcement is lost.
     */
    private readonly cacheMs = 0,
    /** PostgreSQL: accounts, keys, limits and grants are written there too, as the source of truth. */
    private readonly pg?: PgPool,
  ) {}

  /**
   * A new account. With PostgreSQL, it is written there first (the source of truth): when that
   * fails, nothing is created. The same goes for keys, revocations and limits below.
   */
  async create(name: string, id = newAccountId()): Promise<Account> {
    const createdAt = new Date().toISOString();
    if (this.pg) await insertAccount(this.pg, { id, name, createdAt, limits: {} });
    await this.redis
      .multi()
      .hset(this.keys.account(id), { id, name, createdAt, balance: 0, reserved: 0 })
      .sadd(this.keys.accounts(), id)
      .exec();
    return { id, name, createdAt, balance: 0, reserved: 0, limits: {} };
  }

  async get(id: string): Promise<Account | null> {
    const h = await this.redis.hgetall(this.keys.account(id));
    if (!h.id) return null;
    return {
      id: h.id,
      name: h.name ?? "",
      createdAt: h.createdAt ?? "",
      balance: Number(h.balance ?? 0),
      reserved: Number(h.reserved ?? 0),
      limits: overridesFromHash(h),
    };
  }

  /**
   * Changes the account's limit overrides: a number sets one (0 = no limit), null removes it.
   * False when there is no such account.
   */
  async setLimits(accountId: string, change: LimitOverridesChange): Promise<boolean> {
    validateLimitChange(change);
    if (this.pg && !(await this.redis.exists(this.keys.account(accountId)))) return false;
    if (this.pg) await updateLimits(this.pg, accountId, change);
    const argv = (Object.entries(change) as [keyof LimitOverrides, number | null | undefined][])
      .filter(([, v]) => v !== undefined)
      .flatMap(([name, v]) => [LIMIT_FIELDS[name], v === null ? "" : String(v)]);
    const changed = (await SET_LIMITS.run<number>(this.redis, { account: this.keys.account(accountId) }, argv)) === 1;
    this.forgetLimits(accountId);
    if (changed) await this.redis.publish(this.keys.limitsChangedChannel(), accountId);
    return changed;
  }

  /**
   * The account's limit overrides (null when there is no such account): what the request path
   * needs of the account, without its balance. Remembered for the cache period.
   */
  async limits(accountId: string): Promise<LimitOverrides | null> {
    const known = this.knownLimits.get(accountId);
    if (known && known.until > Date.now()) return known.limits;
    const forgotten = this.forgotten;
    const fields = Object.values(LIMIT_FIELDS);
    const [id, ...values] = await this.redis.hmget(this.keys.account(accountId), "id", ...fields);
    if (!id) return null;
    const limits = overridesFromHash(Object.fromEntries(fields.map((f, i) => [f, values[i] ?? undefined])));
    if (this.cacheMs > 0 && forgotten === this.forgotten) {
      this.knownLimits.set(accountId, { limits, until: Date.now() + this.cacheMs });
    }
    return limits;
  }

  async list(): Promise<string[]> {
    return (await this.redis.smembers(this.keys.accounts())).sort();
  }

  /** Makes a new key for the account. The plaintext is returned once and never stored. */
  async createKey(accountId: string, label = "default", key = newApiKey()): Promise<{ key: string; info: KeyInfo }> {
    if (!API_KEY_PATTERN.test(key)) throw new Error("API keys start with sk_ and use letters, digits and _");
    const info: KeyInfo = { id: keyId(key), accountId, label, createdAt: new Date().toISOString(), revokedAt: null };
    const sha = hashKey(key);
    if (this.pg) await insertKey(this.pg, { sha256: sha, ...info });
    await this.redis
      .multi()
      .hset(this.keys.apiKey(sha), { accountId, id: info.id, label, createdAt: info.createdAt, revokedAt: "" })
      .sadd(this.keys.accountKeys(accountId), sha)
      .exec();
    return { key, info };
  }

  async listKeys(accountId: string): Promise<KeyInfo[]> {
    const shas = await this.redis.smembers(this.keys.accountKeys(accountId));
    const rows = await Promise.all(shas.map((sha) => this.redis.hgetall(this.keys.apiKey(sha))));
    return rows
      .filter((h) => h.accountId)
      .map((h) => ({ id: h.id!, accountId: h.accountId!, label: h.label ?? "", createdAt: h.createdAt!, revokedAt: h.revokedAt || null }));
  }

  /** Revokes the account's key whose public id (or full text) is given. */
  async revokeKey(accountId: string, idOrKey: string): Promise<boolean> {
    const shas = await this.redis.smembers(this.keys.accountKeys(accountId));
    for (const sha of shas) {
      const h = await this.redis.hgetall(this.keys.apiKey(sha));
      if (h.id === idOrKey || sha === hashKey(idOrKey)) {
        const at = new Date().toISOString();
        if (this.pg) await revokeKeyRow(this.pg, sha, at);
        await this.redis
          .multi()
          .hset(this.keys.apiKey(sha), "revokedAt", at)
          .publish(this.keys.keyRevokedChannel(), sha)
          .exec();
        this.forget(sha);
        return true;
      }
    }
    return false;
  }

  /** The account a key belongs to, or null for unknown or revoked keys. */
  async authenticate(key: string): Promise<string | null> {
    if (!API_KEY_PATTERN.test(key)) return null;
    const sha = hashKey(key);
    const known = this.validKeys.get(sha);
    if (known && known.until > Date.now()) return known.accountId;
    const forgotten = this.forgotten;
    const h = await this.redis.hgetall(this.keys.apiKey(sha));
    if (!h.accountId || h.revokedAt) return null;
    // The lookup is by hash; compare the stored hash in constant time all the same.
    const stored = Buffer.from(sha, "hex");
    if (!timingSafeEqual(stored, Buffer.from(hashKey(key), "hex"))) return null;
    if (this.cacheMs > 0 && forgotten === this.forgotten) {
      this.validKeys.set(sha, { accountId: h.accountId, until: Date.now() + this.cacheMs });
    }
    return h.accountId;
  }

  /**
   * Keeps this process's valid keys and known limits in step with changes made anywhere: forgets
   * each key revokeKey announces and each account's limits setLimits announces, and everything
   * whenever `subscriber` reconnects (announcements may have been missed while it was away).
   */
  async followChanges(subscriber: Redis): Promise<void> {
    const revoked = this.keys.keyRevokedChannel();
    const limitsChanged = this.keys.limitsChangedChannel();
    subscriber.on("message", (ch: string, message: string) => {
      if (ch === revoked) this.forget(message);
      else if (ch === limitsChanged) this.forgetLimits(message);
    });
    subscriber.on("ready", () => this.forget());
    await subscriber.subscribe(revoked, limitsChanged);
  }

  /** Forgets one key (by hash), or every key and every account's limits. */
  private forget(sha?: string): void {
    this.forgotten++;
    if (sha) {
      this.validKeys.delete(sha);
      return;
    }
    this.validKeys.clear();
    this.knownLimits.clear();
  }

  private forgetLimits(accountId: string): void {
    this.forgotten++;
    this.knownLimits.delete(accountId);
  }

  /**
   * Adds credits to the account's balance, with a ledger entry (its own id) appended to the stream in
   * the same step; with PostgreSQL the entry is written there at once too (the drainer would bring
   * it anyway, and adds nothing when it is there already).
   */
  async grant(accountId: string, credits: number, pack?: string): Promise<boolean> {
    if (!Number.isInteger(credits) || credits <= 0) throw new Error("credits must be a positive integer");
    const entry: StreamEntry = {
      type: "grant", credits, at: new Date().toISOString(), ...(pack ? { pack } : {}), accountId, grantId: `g_${randomBytes(9).toString("base64url")}`,
    };
    const r = await GRANT.run<number>(this.redis, { account: this.keys.account(accountId), ledger: this.keys.ledgerStream(), credits, entry: JSON.stringify(entry) });
    if (r !== 1) return false;
    if (this.pg) await insertLedgerEntries(this.pg, [entry]).catch(() => undefined);
    return true;
  }

  /**
   * The account's newest `limit` grants, charges and refunds, oldest first: from PostgreSQL, plus the
   * entries not yet drained into it (so a job settled a moment ago shows at once).
   */
  async ledger(accountId: string, limit = 100): Promise<LedgerEntry[]> {
    return readLedger(this.redis, this.keys, this.pg, accountId, limit);
  }

  /** Per endpoint: jobs completed, jobs failed and credits charged. */
  async usage(accountId: string): Promise<Record<string, { completed: number; failed: number; credits: number }>> {
    const h = await this.redis.hgetall(this.keys.usage(accountId));
    const out: Record<string, { completed: number; failed: number; credits: number }> = {};
    for (const [field, value] of Object.entries(h)) {
      const at = field.lastIndexOf(":");
      const endpoint = field.slice(0, at);
      const what = field.slice(at + 1) as "completed" | "failed" | "credits";
      (out[endpoint] ??= { completed: 0, failed: 0, credits: 0 })[what] = Number(value);
    }
    return out;
  }

  /**
   * Makes sure `key` exists. A new key gets a new account holding `credits`; a key that exists
   * already keeps its account and balance (a restart does not grant again).
   */
  async ensureKey(key: string, credits: number, name = "default"): Promise<{ accountId: string; created: boolean }> {
    const existing = await this.redis.hget(this.keys.apiKey(hashKey(key)), "accountId");
    if (existing) return { accountId: existing, created: false };
    const account = await this.create(name);
    await this.createKey(account.id, "from API_KEY", key);
    if (credits > 0) await this.grant(account.id, credits, "initial");
    return { accountId: account.id, created: true };
  }
}
