/**
 * The result cache (issue 16): a completed result is kept CACHE_TTL_SECONDS under its search's key
 * (endpoint and normalised params), so an identical search is answered in milliseconds without the
 * upstream. Only completed results are written; a failure never is.
 *
 * Who does what:
 * - The API answers a live job from the cache before it enqueues anything (JobStore.createCached:
 *   the job is created completed, billed and written to the ledger in one step).
 * - Every other cache-enabled job is looked up by the worker that takes it, in one round trip that
 *   also claims the search's fill lock on a miss (`lookupOrClaim`). The first miss fetches; the
 *   identical misses that come while it runs find the lock held and wait for its fill, woken by an
 *   announcement on a channel (a slow poll covers a lost message), then are answered from the cache.
 *   A fetch that fails drops the lock and announces it too, so a waiter claims it and fetches itself;
 *   a holder that died leaves a lock that expires after `fillLockMs`. So concurrent identical misses
 *   make one upstream request, and no waiter waits longer than one fill (its live deadline still
 *   applies: the API fails a live job that runs past it).
 *
 * Whose searches a hit may come from is CACHE_SCOPE: `account` (the default) keys each account's
 * searches apart, so a hit, and its age, never tells one account what another searched; `global`
 * shares entries across accounts (fewer upstream requests, but `cached: true` then reveals that
 * someone searched the same thing within the hour, and roughly when).
 *
 * An entry is a hash: when it was fetched (`at`, ms), the job that fetched it, its upstream URL, and
 * the result without its `search_parameters` (each job that reads it gets its own), gzipped: a
 * results page's blocks shrink about 3× (bench/cache.ts measures the memory per cached search).
 */
import { createHash } from "node:crypto";
import { gunzipSync, gzipSync } from "node:zlib";
import type { Redis } from "ioredis";
import { searchParameters, type Endpoint, type JobParams, type JobResult } from "@serp/shared";
import type { KeySpace } from "./keys.js";
import { CLAIM, FILL, RELEASE } from "./lua/cache.js";

/** Bump when the key's normalisation or the entry's format changes: old entries are simply never read. */
const KEY_VERSION = 1;

/** A fill that takes longer than this is presumed dead: waiters claim the search and fetch themselves. */
export const DEFAULT_FILL_LOCK_MS = 30_000;
/** How often a waiter looks again when no announcement came (a message lost while reconnecting). */
const WAIT_POLL_MS = 250;

/** CACHE_SCOPE: a hit only from the same account's searches, or from anyone's. */
export const CACHE_SCOPES = ["account", "global"] as const;
export type CacheScope = (typeof CACHE_SCOPES)[number];

/**
 * The key of a search, and of the account whose searches alone may answer it (null: anyone's, the
 * global scope; ResultCache.keyOf decides from the scope). Its endpoint and its params with every
 * default filled (`withDefaults`), text normalised (Unicode NFC, whitespace trimmed and collapsed;
 * a location's spacing around commas and its case, which the upstream ignores), members in a fixed
 * order. The query keeps its case, as the model API keys on identical parameters.
 */
export function cacheKeyOf(endpoint: Endpoint, params: JobParams, account: string | null): string {
  const norm: Record<string, unknown> = {};
  for (const name of Object.keys(params).sort()) {
    let value = (params as unknown as Record<string, unknown>)[name];
    if (value === undefined) continue;
    if (typeof value === "string") {
      value = value.normalize("NFC").trim().replace(/\s+/g, " ");
      if (name === "location") value = (value as string).replace(/ ?, ?/g, ",").toLowerCase();
      if (name === "language" || name === "country") value = (value as string).toLowerCase();
    }
    norm[name] = value;
  }
  const search = account === null ? [KEY_VERSION, endpoint, norm] : [KEY_VERSION, endpoint, norm, account];
  return createHash("sha256").update(JSON.stringify(search)).digest("base64url");
}

/** A cached completed result. */
export interface CacheEntry {
  /** The result blocks, without `search_parameters`. */
  blocks: Record<string, unknown>;
  upstreamUrl: string | null;
  /** When it was fetched (ms since the epoch). */
  at: number;
  /** The job that fetched it. */
  jobId: string;
}

/** The result an entry gives the job it answers: the cached blocks under that job's own `search_parameters`. */
export function resultFromCache(entry: CacheEntry, endpoint: Endpoint, params: JobParams): JobResult {
  return { search_parameters: searchParameters(endpoint, params), ...entry.blocks } as JobResult;
}

export type Lookup =
  /** A result fresh enough: answer with it. */
  | { kind: "hit"; entry: CacheEntry }
  /** This job fetches and fills (or releases) the search. */
  | { kind: "claimed" }
  /** Waited a whole fill for another job in vain: fetch without the lock. */
  | { kind: "uncached" };

function decode(at: string, url: string, jobId: string, body: Buffer): CacheEntry {
  return { at: Number(at), upstreamUrl: url || null, jobId, blocks: JSON.parse(gunzipSync(body).toString("utf8")) as Record<string, unknown> };
}

/**
 * Wakes the jobs waiting for a search's fill: one subscription per process, on the channel every
 * fill and release is announced on.
 */
export class CacheFills {
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(
    private readonly subscriber: Redis,
    private readonly channel: string,
  ) {
    subscriber.on("message", (ch: string, key: string) => {
      if (ch !== this.channel) return;
      for (const wake of this.waiters.get(key) ?? []) wake();
    });
  }

  async start(): Promise<void> {
    await this.subscriber.subscribe(this.channel);
  }

  /** Resolves at the next announcement for `key`, or after `ms`. Register before looking, so none is missed. */
  next(key: string, ms: number): { done: Promise<void>; cancel: () => void } {
    let finish!: () => void;
    const done = new Promise<void>((resolve) => {
      const timer = setTimeout(() => finish(), ms);
      finish = () => {
        clearTimeout(timer);
        const set = this.waiters.get(key);
        set?.delete(finish);
        if (set?.size === 0) this.waiters.delete(key);
        resolve();
      };
    });
    this.waiters.set(key, (this.waiters.get(key) ?? new Set()).add(finish));
    return { done, cancel: finish };
  }
}

export interface ResultCacheOptions {
  /** CACHE_TTL_SECONDS: how long an entry is kept; 0 turns the cache off (nothing read or written). */
  ttlSeconds: number;
  /** CACHE_SCOPE: whose searches may answer a job. Default `account`. */
  scope?: CacheScope;
  /** Wakes waiting jobs (workers); without it a waiter only polls. */
  fills?: CacheFills;
  fillLockMs?: number;
}

export class ResultCache {
  readonly ttlSeconds: number;
  readonly scope: CacheScope;
  private readonly fills?: CacheFills;
  private readonly fillLockMs: number;

  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
    opts: ResultCacheOptions,
  ) {
    this.ttlSeconds = opts.ttlSeconds;
    this.scope = opts.scope ?? "account";
    this.fills = opts.fills;
    this.fillLockMs = opts.fillLockMs ?? DEFAULT_FILL_LOCK_MS;
  }

  get enabled(): boolean {
    return this.ttlSeconds > 0;
  }

  /** The key `accountId`'s search is looked up and filled under: its own under the account scope. */
  keyOf(endpoint: Endpoint, params: JobParams, accountId: string): string {
    return cacheKeyOf(endpoint, params, this.scope === "account" ? accountId : null);
  }

  /** An entry at most `maxAgeSeconds` old, or null (also when the cache is off or `maxAgeSeconds` is 0). */
  async get(key: string, maxAgeSeconds: number): Promise<CacheEntry | null> {
    if (!this.enabled || maxAgeSeconds <= 0) return null;
    const [at, url, job, body] = await this.redis.hmgetBuffer(this.keys.cacheEntry(key), "at", "url", "job", "body");
    if (!at || !body || Number(at.toString()) < Date.now() - maxAgeSeconds * 1000) return null;
    return decode(at.toString(), url?.toString() ?? "", job?.toString() ?? "", body);
  }

  /**
   * A fresh entry, or the fill lock for `jobId`; while another job holds it, waits for its fill or
   * release and looks again, for at most one fill lock's time.
   */
  async lookupOrClaim(key: string, jobId: string, maxAgeSeconds: number): Promise<Lookup> {
    const until = Date.now() + this.fillLockMs;
    for (;;) {
      const wake = this.fills?.next(key, WAIT_POLL_MS);
      let reply: (Buffer | number)[];
      try {
        // The Buffer form: the entry's body is gzip, not text.
        reply = await CLAIM.runBuffer<(Buffer | number)[]>(this.redis, {
          entry: this.keys.cacheEntry(key), fill: this.keys.cacheFill(key), jobId, lockMs: this.fillLockMs, freshSince: Date.now() - maxAgeSeconds * 1000,
        });
      } catch (err) {
        wake?.cancel();
        throw err;
      }
      const code = Number(reply[0]);
      if (code === 1) {
        wake?.cancel();
        const [, at, url, job, body] = reply as Buffer[];
        return { kind: "hit", entry: decode(at!.toString(), url!.toString(), job!.toString(), body!) };
      }
      if (code === 2) {
        wake?.cancel();
        return { kind: "claimed" };
      }
      if (Date.now() >= until) {
        wake?.cancel();
        return { kind: "uncached" };
      }
      await (wake?.done ?? new Promise((r) => setTimeout(r, WAIT_POLL_MS)));
    }
  }

  /** Keeps a completed result for the search, hands over the fill lock and wakes the waiters. */
  async fill(key: string, jobId: string, result: JobResult, upstreamUrl: string | null): Promise<void> {
    if (!this.enabled) return;
    const { search_parameters: _own, ...blocks } = result as unknown as Record<string, unknown>;
    const body = gzipSync(JSON.stringify(blocks));
    await FILL.run(this.redis, {
      entry: this.keys.cacheEntry(key), fill: this.keys.cacheFill(key),
      at: Date.now(), url: upstreamUrl ?? "", jobId, body, ttl: this.ttlSeconds, channel: this.keys.cacheFilledChannel(), searchKey: key,
    });
  }

  /** Gives the search up after a failed fetch: its waiters claim it and fetch themselves. Nothing is cached. */
  async release(key: string, jobId: string): Promise<void> {
    await RELEASE.run(this.redis, { fill: this.keys.cacheFill(key), jobId, channel: this.keys.cacheFilledChannel(), searchKey: key });
  }
}
