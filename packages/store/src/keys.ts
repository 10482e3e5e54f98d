/**
 * Every Redis key the service owns, in one place. `prefix` isolates deployments and test runs.
 * BullMQ's own keys live under `{prefix}` (a hash tag, so a queue's keys share a Cluster slot).
 */
export function keySpace(prefix: string) {
  return {
    prefix,
    bullPrefix: `{${prefix}}`,
    job: (id: string) => `${prefix}:job:${id}`,
    account: (id: string) => `${prefix}:acct:${id}`,
    /**
     * Every ledger entry (grants, charges, refunds of all accounts), appended by the settlement
     * scripts and drained into PostgreSQL's `ledger` table, then trimmed (pg/ledger.ts).
     */
    ledgerStream: () => `${prefix}:ledger`,
    /** Held by the one worker process draining the ledger stream at a time. */
    ledgerDrainLock: () => `${prefix}:ledger:drainer`,
    usage: (id: string) => `${prefix}:acct:${id}:usage`,
    accountKeys: (id: string) => `${prefix}:acct:${id}:keys`,
    accounts: () => `${prefix}:accounts`,
    apiKey: (sha256: string) => `${prefix}:key:${sha256}`,
    /** The query a compatibility search (/search.json) was asked with, by its job id: its archive echoes it. */
    compatQuery: (jobId: string) => `${prefix}:compat:query:${jobId}`,
    /**
     * Jobs stored but not yet known to be on their queue, scored by their submission (ms): added with
     * the record, removed once enqueued or settled. The sweeper (apps/worker/src/sweeper.ts) settles
     * the ones that stay here past a grace: ghosts, which would never run.
     */
    unqueued: () => `${prefix}:jobs:unqueued`,
    /** Held by the one worker process sweeping ghosts, for one pass. */
    sweepLock: () => `${prefix}:jobs:sweeper`,
    /** An account's idempotency key (hashed) of POST /v1/jobs: the job it made. */
    idempotency: (accountId: string, sha256: string) => `${prefix}:acct:${accountId}:idem:${sha256}`,
    /** Pub/sub channel on which every job that becomes final is announced (its id). */
    finalChannel: () => `${prefix}:events:final`,
    /** Pub/sub channel on which one API process (`instance`) is sent the settled records of the live jobs it waits for. */
    replyChannel: (instance: string) => `${prefix}:events:final:${instance}`,
    /** Pub/sub channel on which every key revocation is announced (the key's hash). */
    keyRevokedChannel: () => `${prefix}:events:key-revoked`,
    /** Pub/sub channel on which every change to an account's limit overrides is announced (its id). */
    limitsChangedChannel: () => `${prefix}:events:limits-changed`,
    /** A cached completed result, by its search's key (cache.ts): what identical searches are answered with. */
    cacheEntry: (id: string) => `${prefix}:cache:${id}`,
    /** The job fetching a search's result for the cache: identical misses wait for it instead of fetching too. */
    cacheFill: (id: string) => `${prefix}:cache:${id}:fill`,
    /** Pub/sub channel on which each cache fill, or a fetch given up, is announced (the search's key), waking its waiters. */
    cacheFilledChannel: () => `${prefix}:events:cache-filled`,
    /** One worker process's view of the upstream (profiles, breakers, canary), expiring unless refreshed. */
    upstreamStatus: (instance: string) => `${prefix}:upstream:status:${instance}`,
    /** The upstream page a completed job was parsed from, compressed (raw-pages.ts). */
    rawPage: (jobId: string) => `${prefix}:raw:${jobId}`,
    /** Job ids with a kept page, scored by when it was kept (ms): what `reparse` walks. */
    rawPages: () => `${prefix}:raw-pages`,
    /** Held by the one worker process deleting pages past their retention from the page store, for one pass. */
    rawSweepLock: () => `${prefix}:raw-pages:sweeper`,
    /** An exit's health (exit-health.ts): strikes, rest and probe, shared by every worker. */
    exitHealth: (pool: string, exit: string) => `${prefix}:exit:${pool}:${exit}`,
    /** The exits with a health record, scored by when it expires (ms): what `upstream proxies` lists. */
    exitIndex: () => `${prefix}:exits`,
  };
}
export type KeySpace = ReturnType<typeof keySpace>;
