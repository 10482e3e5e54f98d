import type { Redis } from "ioredis";
import { pendingJob, type Job, type JobResponse, type JobResult, type JobSubmission, type JobStatus, type ParseCoverage, type QueueName } from "@serp/shared";
import type { IdempotencyClaim } from "./idempotency.js";
import type { KeySpace } from "./keys.js";
import { jobFromHash, jobToHash } from "./job-hash.js";
import { jobOfResult, withStoredResult, type JobResults } from "./job-results.js";
import { CREATE_CACHED, FINALIZE, REQUEUE, START, SUBMIT } from "./lua/jobs.js";

/** A job as stored: the customer's view plus its owner and result. */
export interface JobRecord {
  job: Job;
  accountId: string;
  result: JobResult | null;
  upstreamUrl: string | null;
  /** A cache hit's source: the job that fetched the result it was answered with (never shown to customers). */
  cachedFrom?: string;
  /**
   * How much of its results page the parse understood (the page that made the result, or for a
   * failed job the best page tried): for operators, never in the customer's job JSON.
   */
  coverage?: ParseCoverage;
  /** The proxy pool, its tier and the country that served the job (never credentials): for operators only. */
  exit?: JobExit;
}

/** Which exit served a job (the upstream's ExitRecord). */
export interface JobExit {
  pool: string;
  tier: number;
  country: string;
  /** No pool lists the country: a pool without countries served it. */
  fallback?: true;
}

/** The job as its owner reads it (GET /v1/jobs/{id}, webhooks): the result only once completed. */
export function jobResponse(record: JobRecord): JobResponse {
  return { job: record.job, result: record.job.status === "completed" ? record.result : null };
}

/** A job to store: what its submission decided (its cache opt-in tells the worker to look the search up, and fill the cache), and whose it is. */
export type NewJob = JobSubmission & {
  accountId: string;
  /**
   * A channel on which the settled record is published whole, for the one API process that waits
   * for this job (live jobs), so it answers without reading the record back.
   */
  replyTo?: string;
};

export interface Final {
  status: Extract<JobStatus, "completed" | "failed">;
  credits: number;
  latencyMs: number | null;
  error: string | null;
  result: JobResult | null;
  completedAt: string;
  /** The upstream URL whose page made the result (kept for the compatibility endpoint). */
  upstreamUrl?: string;
  /** Answered from the result cache: the job says so, and so does its ledger entry. `credits` is then the cache-hit price. */
  cacheHit?: { from: string };
  /** The parse's coverage figure, kept on the record for operators. */
  coverage?: ParseCoverage;
  /** The exit that served it (or last tried, for a failed job), kept on the record for operators. */
  exit?: JobExit;
}

export type SubmitOutcome = "created" | "insufficient_credits" | "no_account" | "concurrency_limited" | "replay" | "key_reused";
const SUBMIT_OUTCOMES = {
  1: "created", 0: "insufficient_credits", [-1]: "no_account", [-2]: "concurrency_limited", [-3]: "replay", [-4]: "key_reused",
} as const satisfies Record<number, SubmitOutcome>;

/** A creation's answer; `replayOf`, for a replay, the job the idempotency key names. */
export type Created<O extends SubmitOutcome = SubmitOutcome> = { outcome: O; replayOf?: string };

/** The claim's script arguments: none ('' keys and args) without an idempotency key. */
function claimArgs(claim: IdempotencyClaim | undefined) {
  return { claim: claim?.key ?? "", claimBody: claim?.body ?? "", claimTtl: claim?.ttlSeconds ?? 0, staleJob: claim?.staleJob ?? "" };
}

export class JobStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
    /** Seconds a job record and its result are kept. */
    readonly retentionSeconds: number,
  ) {}

  /**
   * Reserves `reserve` credits and stores the new pending job, with its idempotency `claim` when it
   * has one (lua/jobs.ts SUBMIT). `inFlight` is the account's jobs pending or processing once this
   * submission is through (counting this job when created).
   */
  async create(job: NewJob, reserve: number, maxInFlight = 0, claim?: IdempotencyClaim): Promise<Created & { inFlight: number }> {
    // The very job the submission answers with (202), read back by fromHash.
    const fields = [...jobToHash(pendingJob(job)), "accountId", job.accountId];
    if (job.replyTo) fields.push("replyTo", job.replyTo);
    const [code, inFlight, replayOf] = await SUBMIT.run<[number, number, string?]>(
      this.redis,
      {
        account: this.keys.account(job.accountId), job: this.keys.job(job.id), unqueued: this.keys.unqueued(), reserve, retention: this.retentionSeconds,
        maxInFlight, jobId: job.id, createdAtMs: Date.parse(job.createdAt), ...claimArgs(claim),
      },
      fields,
    );
    return { outcome: SUBMIT_OUTCOMES[code as keyof typeof SUBMIT_OUTCOMES], inFlight, ...(replayOf ? { replayOf } : {}) };
  }

  /**
   * Creates a live job already answered from the result cache: completed, billed `hit.credits`
   * (the cache-hit price), in the ledger as a cache hit, with its idempotency `claim` when it has
   * one. Nothing is reserved or enqueued.
   */
  async createCached(
    job: NewJob,
    hit: { credits: number; latencyMs: number; result: JobResult; upstreamUrl: string | null; completedAt: string; from: string },
    claim?: IdempotencyClaim,
  ): Promise<Created<Exclude<SubmitOutcome, "concurrency_limited">>> {
    const stored = await this.storeResult(job.id, hit.result);
    const fields = [
      "id", job.id, "accountId", job.accountId, "endpoint", job.endpoint, "queue", job.queue,
      "params", JSON.stringify(job.params), "createdAt", job.createdAt, "completedAt", hit.completedAt,
      "latencyMs", String(hit.latencyMs), ...stored.fields, "upstreamUrl", hit.upstreamUrl ?? "",
      "cachedFrom", hit.from, "cacheMaxAge", String(job.cacheMaxAgeSeconds ?? 0),
    ];
    const [code, , replayOf] = await CREATE_CACHED.run<[number, number?, string?]>(
      this.redis,
      {
        account: this.keys.account(job.accountId), job: this.keys.job(job.id), ledger: this.keys.ledgerStream(), usage: this.keys.usage(job.accountId),
        price: hit.credits, retention: this.retentionSeconds, jobId: job.id, completedAt: hit.completedAt, finalChannel: this.keys.finalChannel(),
        endpoint: job.endpoint, ...claimArgs(claim),
      },
      fields,
    );
    // Refused or a replay: this result is nobody's.
    if (code !== 1 || replayOf) await stored.discard();
    return { outcome: SUBMIT_OUTCOMES[code as 1 | 0 | -1 | -3 | -4], ...(replayOf ? { replayOf } : {}) };
  }

  /** The job is on its queue (or was): it leaves the jobs the sweeper checks. */
  async queued(id: string): Promise<void> {
    await this.redis.zrem(this.keys.unqueued(), id);
  }

  /**
   * Jobs stored before `beforeMs` and not yet known to be on their queue, oldest first (at most
   * `limit`): what the sweeper checks. Each stays listed until `queued` or its settlement.
   */
  async unqueuedBefore(beforeMs: number, limit: number): Promise<string[]> {
    return this.redis.zrangebyscore(this.keys.unqueued(), "-inf", beforeMs, "LIMIT", 0, limit);
  }

  /** A job's queue and status (null for an unknown or expired job), read from Redis alone. */
  async placeOf(id: string): Promise<{ queue: QueueName; status: JobStatus } | null> {
    const [queue, status] = await this.redis.hmget(this.keys.job(id), "queue", "status");
    return queue && status ? { queue: queue as QueueName, status: status as JobStatus } : null;
  }

  /** Only the status (null for an unknown or expired job): cheap enough to poll. */
  async status(id: string): Promise<JobStatus | null> {
    return ((await this.redis.hget(this.keys.job(id), "status")) as JobStatus | null) ?? null;
  }

  /**
   * The job, its result read from the result store when kept there. Throws ResultMissingError
   * (job-results.ts) when the record names a result the store does not have, and
   * PageStoreUnavailableError when the store does not answer: never a record without its result.
   * `{ result: false }`, for a caller that uses only the job's other fields: the result store is not
   * read, and a result kept there is null.
   */
  async get(id: string, o: { result?: false } = {}): Promise<JobRecord | null> {
    const h = await this.redis.hgetall(this.keys.job(id));
    if (!h.id) return (await this.archive?.get(id)) ?? null;
    return fromHash(o.result === false ? h : await withStoredResult(h, this.results));
  }

  /**
   * Where completed results are kept (JOB_RESULT_STORE=page-store): written there before their
   * settlement, the record keeps where. Unset: in the record itself. Records of either kind are read.
   */
  results: JobResults | undefined;
  keepResultsIn(results: JobResults | undefined): this {
    this.results = results;
    return this;
  }

  /**
   * A result's fields for the record: where it was written in the result store (durably, before the
   * record names it), or the result itself when there is no store or the store refused the write (a
   * job never fails for want of its store: its record is then as big as before).
   */
  private async storeResult(id: string, result: JobResult | null): Promise<{ fields: string[]; json: string; loc: string; discard: () => Promise<void> }> {
    const json = result ? JSON.stringify(result) : "";
    const inline = { fields: ["result", json], json, loc: "", discard: async () => undefined };
    if (!result || !this.results) return inline;
    const results = this.results;
    try {
      const loc = await results.put(id, json);
      // Unless the record names it after all: a command resent after a dropped connection finds its own first run.
      const discard = async () => {
        const named = await this.redis.hget(this.keys.job(id), "resultLoc").catch(() => loc);
        if (named !== loc) await results.discard(loc);
      };
      return { fields: ["result", "", "resultLoc", loc], json, loc, discard };
    } catch (err) {
      this.onResultNotStored?.(id, err as Error);
      return inline;
    }
  }

  /** For each result location, whether a job record in Redis names it (JobResults.sweep: the others are nobody's). */
  async resultsNamed(locations: readonly string[]): Promise<boolean[]> {
    const pipe = this.redis.pipeline();
    for (const loc of locations) pipe.hget(this.keys.job(jobOfResult(loc)), "resultLoc");
    const replies = (await pipe.exec()) ?? [];
    return locations.map((loc, i) => {
      const [err, named] = replies[i] ?? [new Error("no reply")];
      if (err) throw err;
      return named === loc;
    });
  }

  /** Told when a result could not be written to the result store and went into its record instead (the workers log it). */
  onResultNotStored: ((jobId: string, err: Error) => void) | undefined;

  /** Where get() looks for a job past its hot window in Redis (pg/archive.ts): reads stay the same for every caller. */
  private archive: { get(id: string): Promise<JobRecord | null> } | undefined;
  readFromArchive(archive: { get(id: string): Promise<JobRecord | null> }): this {
    this.archive = archive;
    return this;
  }

  /**
   * Marks the job processing for attempt `attempt` and returns its record: `started` false when it
   * was already final (the record says how it ended; its result is not read from the result store);
   * null when it is unknown or expired.
   */
  async start(id: string, attempt: number): Promise<{ started: boolean; record: JobRecord } | null> {
    const [code, flat] = await START.run<[number, string[]?]>(this.redis, { job: this.keys.job(id), attempt });
    if (code === -1 || !flat) return null;
    const h: Record<string, string> = {};
    for (let i = 0; i < flat.length; i += 2) h[flat[i]!] = flat[i + 1]!;
    if (code === 1) Object.assign(h, { status: "processing", attempts: String(attempt) });
    return { started: code === 1, record: fromHash(h) };
  }

  async requeue(id: string): Promise<boolean> {
    return (await REQUEUE.run<number>(this.redis, { job: this.keys.job(id) })) === 1;
  }

  /**
   * Makes the job final and settles it. False when it already was final (nothing changes). A result
   * goes to the result store first; the record is published to a waiting API process with the result
   * in it, so a live answer never reads the store back.
   */
  async finalize(id: string, accountId: string, f: Final): Promise<boolean> {
    const stored = await this.storeResult(id, f.result);
    const r = await FINALIZE.run<number>(this.redis, {
      job: this.keys.job(id),
      account: this.keys.account(accountId),
      ledger: this.keys.ledgerStream(),
      usage: this.keys.usage(accountId),
      unqueued: this.keys.unqueued(),
      status: f.status,
      price: f.status === "completed" ? f.credits : 0,
      completedAt: f.completedAt,
      latencyMs: f.latencyMs === null ? "" : String(f.latencyMs),
      error: f.error ?? "",
      result: stored.json,
      resultLoc: stored.loc,
      retention: this.retentionSeconds,
      jobId: id,
      finalChannel: this.keys.finalChannel(),
      upstreamUrl: f.upstreamUrl ?? "",
      cachedFrom: f.cacheHit?.from ?? "",
      coverage: f.coverage ? JSON.stringify(f.coverage) : "",
      exit: f.exit ? JSON.stringify(f.exit) : "",
    });
    // Already final: this result is nobody's (after a failed call the sweeper takes it, since the script may have run).
    if (r !== 1) await stored.discard();
    return r === 1;
  }
}

/** A record from its fields as HGETALL lists them flat (a reply channel's message, parsed). */
export function recordFromFields(flat: readonly string[]): JobRecord {
  const h: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) h[flat[i]!] = flat[i + 1]!;
  return fromHash(h);
}

/** A record from its Redis hash, as HGETALL returns it (the archive reads records this way too); its job as job-hash.ts reads it. */
export function fromHash(h: Record<string, string>): JobRecord {
  const job = jobFromHash(h);
  const record: JobRecord = {
    job,
    accountId: h.accountId!,
    result: h.result ? (JSON.parse(h.result) as JobResult) : null,
    upstreamUrl: h.upstreamUrl || null,
  };
  if (h.cachedFrom) record.cachedFrom = h.cachedFrom;
  if (h.coverage) record.coverage = JSON.parse(h.coverage) as ParseCoverage;
  if (h.exit) record.exit = JSON.parse(h.exit) as JobExit;
  return record;
}
