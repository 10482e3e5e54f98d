import type { Redis } from "ioredis";
import type { Endpoint, Job, JobParams, JobResponse, JobResult, JobStatus, ParseCoverage, QueueName } from "@serp/shared";
import type { KeySpace } from "./keys.js";
import { xaddEntry } from "./ledger-stream.js";

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
}

/** The job as its owner reads it (GET /v1/jobs/{id}, webhooks): the result only once completed. */
export function jobResponse(record: JobRecord): JobResponse {
  return { job: record.job, result: record.job.status === "completed" ? record.result : null };
}

export interface NewJob {
  id: string;
  accountId: string;
  endpoint: Endpoint;
  queue: QueueName;
  params: JobParams;
  postbackUrl?: string;
  createdAt: string;
  /**
   * A channel on which the settled record is published whole, for the one API process that waits
   * for this job (live jobs), so it answers without reading the record back.
   */
  replyTo?: string;
  /** The job's cache opt-in (POST /v1/jobs `cacheMaxAgeSeconds`): the worker looks the search up, and fills the cache. */
  cacheMaxAgeSeconds?: number;
}

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
}

/**
 * Reserve one credit and create the job record in one step, so concurrent submissions can never
 * overdraw: available = balance - reserved. Every job not yet final holds exactly one reserved
 * credit, so `reserved` is also the account's jobs in flight, checked against its concurrency
 * limit (ARGV[3]; 0 = none) in the same step. Returns {code, reserved after}: code 1 created,
 * 0 insufficient credits, -1 no account, -2 over the concurrency limit. The record gets only the
 * fields a new job has; the ones still empty (latency, error, completion) come with its end.
 */
const SUBMIT = `
local acct = redis.call('HMGET', KEYS[1], 'balance', 'reserved')
if not acct[1] then return {-1, 0} end
local reserved = tonumber(acct[2] or '0')
local limit = tonumber(ARGV[3])
if limit > 0 and reserved >= limit then return {-2, reserved} end
if tonumber(acct[1]) - reserved < tonumber(ARGV[1]) then return {0, reserved} end
redis.call('HINCRBY', KEYS[1], 'reserved', ARGV[1])
redis.call('HSET', KEYS[2], 'status', 'pending', 'credits', '0', 'attempts', '0', unpack(ARGV, 4))
redis.call('EXPIRE', KEYS[2], ARGV[2])
return {1, reserved + tonumber(ARGV[1])}`;

/**
 * Make a job final and settle its credits, exactly once. A job already final is left as it is
 * (a late worker after a live timeout, a duplicate delivery): returns 0. The charge is capped so
 * it never eats credits reserved by the account's other pending jobs; the balance never drops
 * below zero. Every settlement is appended to the ledger stream (ledger-stream.ts) and announced on the final channel; a job
 * with a reply channel has its settled record (HGETALL, as a JSON array) published there too.
 * ARGV[12], when set, is the parse's coverage figure (JSON), kept for operators.
 */
const FINALIZE = `
local st = redis.call('HGET', KEYS[1], 'status')
if not st then return -1 end
if st == 'completed' or st == 'failed' then return 0 end
local bal = tonumber(redis.call('HGET', KEYS[2], 'balance') or '0')
local reserved = tonumber(redis.call('HGET', KEYS[2], 'reserved') or '0')
local price = tonumber(ARGV[2])
local cap = bal - reserved + 1
if cap < 0 then cap = 0 end
local charge = price
if charge > cap then charge = cap end
redis.call('HINCRBY', KEYS[2], 'reserved', -1)
if charge > 0 then redis.call('HINCRBY', KEYS[2], 'balance', -charge) end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'credits', charge, 'completedAt', ARGV[3],
  'latencyMs', ARGV[4], 'error', ARGV[5], 'result', ARGV[6], 'upstreamUrl', ARGV[10])
redis.call('EXPIRE', KEYS[1], ARGV[7])
local endpoint = redis.call('HGET', KEYS[1], 'endpoint')
local entry = { type = (ARGV[1] == 'completed') and 'charge' or 'refund', jobId = ARGV[8],
  endpoint = endpoint, credits = charge, at = ARGV[3], accountId = redis.call('HGET', KEYS[1], 'accountId') }
if charge < price then entry.uncharged = price - charge end
if ARGV[11] and ARGV[11] ~= '' then
  redis.call('HSET', KEYS[1], 'cacheHit', '1', 'cachedFrom', ARGV[11])
  entry.cacheHit = true
end
if ARGV[12] and ARGV[12] ~= '' then redis.call('HSET', KEYS[1], 'coverage', ARGV[12]) end
${xaddEntry("KEYS[3]", "entry")}
redis.call('HINCRBY', KEYS[4], endpoint .. ':' .. ARGV[1], 1)
redis.call('HINCRBY', KEYS[4], endpoint .. ':credits', charge)
-- The waiting process's reply first: it must find the record before the bare announcement.
local replyTo = redis.call('HGET', KEYS[1], 'replyTo')
if replyTo then redis.call('PUBLISH', replyTo, cjson.encode(redis.call('HGETALL', KEYS[1]))) end
redis.call('PUBLISH', ARGV[9], ARGV[8])
return 1`;

/**
 * A live job answered from the result cache (cache.ts), created final in one step: the record,
 * completed; the charge of the cache-hit price (ARGV[1]); the ledger entry, a charge marked
 * `cacheHit`; the usage counters and the final announcement, as FINALIZE writes them. Like SUBMIT it
 * refuses an unknown account (-1) and one without the price available (0: balance - reserved, so
 * it never eats credits other jobs hold); it reserves nothing and is not held to the concurrency
 * limit, since the job is never in flight. KEYS: account, job, ledger stream, usage. ARGV: price,
 * retention, job id, completedAt, final channel, endpoint, then the record's fields.
 */
const CREATE_CACHED = `
local acct = redis.call('HMGET', KEYS[1], 'balance', 'reserved')
if not acct[1] then return -1 end
local price = tonumber(ARGV[1])
if tonumber(acct[1]) - tonumber(acct[2] or '0') < price then return 0 end
if price > 0 then redis.call('HINCRBY', KEYS[1], 'balance', -price) end
redis.call('HSET', KEYS[2], 'status', 'completed', 'credits', price, 'attempts', '0', 'error', '', 'cacheHit', '1', unpack(ARGV, 7))
redis.call('EXPIRE', KEYS[2], ARGV[2])
local endpoint = ARGV[6]
${xaddEntry("KEYS[3]", "{ type = 'charge', jobId = ARGV[3], endpoint = endpoint, credits = price, at = ARGV[4], cacheHit = true, accountId = redis.call('HGET', KEYS[2], 'accountId') }")}
redis.call('HINCRBY', KEYS[4], endpoint .. ':completed', 1)
redis.call('HINCRBY', KEYS[4], endpoint .. ':credits', price)
redis.call('PUBLISH', ARGV[5], ARGV[3])
return 1`;

/**
 * pending|processing → processing, counting the attempt, and the record as it was: {1, fields}
 * when started, {0, fields} when already final, {-1} when unknown. One round trip where a worker
 * would otherwise read the record and then start it.
 */
const START = `
local h = redis.call('HGETALL', KEYS[1])
if #h == 0 then return {-1} end
local st = redis.call('HGET', KEYS[1], 'status')
if st == 'completed' or st == 'failed' then return {0, h} end
redis.call('HSET', KEYS[1], 'status', 'processing', 'attempts', ARGV[1])
return {1, h}`;

/** processing → pending after a transient fault, so the next attempt can take it. */
const REQUEUE = `
local st = redis.call('HGET', KEYS[1], 'status')
if st ~= 'processing' then return 0 end
redis.call('HSET', KEYS[1], 'status', 'pending')
return 1`;

type Script = (...args: (string | number)[]) => Promise<number>;
type SubmitScript = (...args: (string | number)[]) => Promise<[number, number]>;
type StartScript = (...args: (string | number)[]) => Promise<[number, string[]?]>;

/**
 * The scripts as commands of the connection: ioredis sends EVALSHA and falls back to EVAL once,
 * so the script text does not travel with every job (measured: bench/submissions.ts).
 */
function scripts(redis: Redis): { submit: SubmitScript; finalize: Script; start: StartScript; requeue: Script; createCached: Script } {
  const r = redis as unknown as Record<string, Script | undefined>;
  if (!r.serpCreateCached) redis.defineCommand("serpCreateCached", { numberOfKeys: 4, lua: CREATE_CACHED });
  if (!r.serpSubmit) {
    redis.defineCommand("serpSubmit", { numberOfKeys: 2, lua: SUBMIT });
    redis.defineCommand("serpFinalize", { numberOfKeys: 4, lua: FINALIZE });
    redis.defineCommand("serpStart", { numberOfKeys: 1, lua: START });
    redis.defineCommand("serpRequeue", { numberOfKeys: 1, lua: REQUEUE });
  }
  const bind = (name: string) => (r[name] as Script).bind(redis);
  return {
    submit: bind("serpSubmit") as unknown as SubmitScript, finalize: bind("serpFinalize"), start: bind("serpStart") as unknown as StartScript,
    requeue: bind("serpRequeue"), createCached: bind("serpCreateCached"),
  };
}

export type SubmitOutcome = "created" | "insufficient_credits" | "no_account" | "concurrency_limited";
const SUBMIT_OUTCOMES = { 1: "created", 0: "insufficient_credits", [-1]: "no_account", [-2]: "concurrency_limited" } as const;

export class JobStore {
  private readonly lua: ReturnType<typeof scripts>;

  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
    /** Seconds a job record and its result are kept. */
    readonly retentionSeconds: number,
  ) {
    this.lua = scripts(redis);
  }

  /**
   * Reserves `reserve` credits and stores the new pending job. `inFlight` is the account's jobs
   * pending or processing once this submission is through (counting this job when created).
   */
  async create(job: NewJob, reserve: number, maxInFlight = 0): Promise<{ outcome: SubmitOutcome; inFlight: number }> {
    const argv = [
      String(reserve), String(this.retentionSeconds), String(maxInFlight),
      "id", job.id, "accountId", job.accountId, "endpoint", job.endpoint, "queue", job.queue,
      "params", JSON.stringify(job.params), "createdAt", job.createdAt,
    ];
    if (job.postbackUrl) argv.push("postbackUrl", job.postbackUrl);
    if (job.replyTo) argv.push("replyTo", job.replyTo);
    if (job.cacheMaxAgeSeconds !== undefined) argv.push("cacheMaxAge", String(job.cacheMaxAgeSeconds));
    const [code, inFlight] = await this.lua.submit(this.keys.account(job.accountId), this.keys.job(job.id), ...argv);
    return { outcome: SUBMIT_OUTCOMES[code as 1 | 0 | -1 | -2], inFlight };
  }

  /**
   * Creates a live job already answered from the result cache: completed, billed `hit.credits`
   * (the cache-hit price), in the ledger as a cache hit. Nothing is reserved or enqueued.
   */
  async createCached(
    job: NewJob,
    hit: { credits: number; latencyMs: number; result: JobResult; upstreamUrl: string | null; completedAt: string; from: string },
  ): Promise<Exclude<SubmitOutcome, "concurrency_limited">> {
    const argv = [
      String(hit.credits), String(this.retentionSeconds), job.id, hit.completedAt, this.keys.finalChannel(), job.endpoint,
      "id", job.id, "accountId", job.accountId, "endpoint", job.endpoint, "queue", job.queue,
      "params", JSON.stringify(job.params), "createdAt", job.createdAt, "completedAt", hit.completedAt,
      "latencyMs", String(hit.latencyMs), "result", JSON.stringify(hit.result), "upstreamUrl", hit.upstreamUrl ?? "",
      "cachedFrom", hit.from, "cacheMaxAge", String(job.cacheMaxAgeSeconds ?? 0),
    ];
    const code = await this.lua.createCached(this.keys.account(job.accountId), this.keys.job(job.id), this.keys.ledgerStream(), this.keys.usage(job.accountId), ...argv);
    return code === 1 ? "created" : code === 0 ? "insufficient_credits" : "no_account";
  }

  /** Only the status (null for an unknown or expired job): cheap enough to poll. */
  async status(id: string): Promise<JobStatus | null> {
    return ((await this.redis.hget(this.keys.job(id), "status")) as JobStatus | null) ?? null;
  }

  async get(id: string): Promise<JobRecord | null> {
    const h = await this.redis.hgetall(this.keys.job(id));
    if (!h.id) return (await this.archive?.get(id)) ?? null;
    return fromHash(h);
  }

  /** Where get() looks for a job past its hot window in Redis (pg/archive.ts): reads stay the same for every caller. */
  private archive: { get(id: string): Promise<JobRecord | null> } | undefined;
  readFromArchive(archive: { get(id: string): Promise<JobRecord | null> }): this {
    this.archive = archive;
    return this;
  }

  /**
   * Marks the job processing for attempt `attempt` and returns its record: `started` false when it
   * was already final (the record says how it ended); null when it is unknown or expired.
   */
  async start(id: string, attempt: number): Promise<{ started: boolean; record: JobRecord } | null> {
    const [code, flat] = await this.lua.start(this.keys.job(id), String(attempt));
    if (code === -1 || !flat) return null;
    const h: Record<string, string> = {};
    for (let i = 0; i < flat.length; i += 2) h[flat[i]!] = flat[i + 1]!;
    if (code === 1) Object.assign(h, { status: "processing", attempts: String(attempt) });
    return { started: code === 1, record: fromHash(h) };
  }

  async requeue(id: string): Promise<boolean> {
    return (await this.lua.requeue(this.keys.job(id))) === 1;
  }

  /** Makes the job final and settles it. False when it already was final (nothing changes). */
  async finalize(id: string, accountId: string, f: Final): Promise<boolean> {
    const r = await this.lua.finalize(
      this.keys.job(id),
      this.keys.account(accountId),
      this.keys.ledgerStream(),
      this.keys.usage(accountId),
      f.status,
      String(f.status === "completed" ? f.credits : 0),
      f.completedAt,
      f.latencyMs === null ? "" : String(f.latencyMs),
      f.error ?? "",
      f.result ? JSON.stringify(f.result) : "",
      String(this.retentionSeconds),
      id,
      this.keys.finalChannel(),
      f.upstreamUrl ?? "",
      f.cacheHit?.from ?? "",
      f.coverage ? JSON.stringify(f.coverage) : "",
    );
    return r === 1;
  }
}

/** A record from its fields as HGETALL lists them flat (a reply channel's message, parsed). */
export function recordFromFields(flat: readonly string[]): JobRecord {
  const h: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) h[flat[i]!] = flat[i + 1]!;
  return fromHash(h);
}

/** A record from its Redis hash, as HGETALL returns it (the archive reads records this way too). */
export function fromHash(h: Record<string, string>): JobRecord {
  const job: Job = {
    id: h.id!,
    endpoint: h.endpoint as Endpoint,
    queue: h.queue as QueueName,
    status: h.status as JobStatus,
    params: JSON.parse(h.params ?? "{}") as JobParams,
    credits: Number(h.credits ?? 0),
    latencyMs: h.latencyMs ? Number(h.latencyMs) : null,
    error: h.error || null,
    attempts: Number(h.attempts ?? 0),
    createdAt: h.createdAt!,
    completedAt: h.completedAt || null,
  };
  if (h.postbackUrl) job.postbackUrl = h.postbackUrl;
  if (h.cacheMaxAge !== undefined) {
    job.cacheMaxAgeSeconds = Number(h.cacheMaxAge);
    job.cacheHit = h.cacheHit === "1";
  }
  const record: JobRecord = {
    job,
    accountId: h.accountId!,
    result: h.result ? (JSON.parse(h.result) as JobResult) : null,
    upstreamUrl: h.upstreamUrl || null,
  };
  if (h.cachedFrom) record.cachedFrom = h.cachedFrom;
  if (h.coverage) record.coverage = JSON.parse(h.coverage) as ParseCoverage;
  return record;
}
