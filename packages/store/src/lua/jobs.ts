/** The job store's scripts (jobs.ts): submission, start, requeue and settlement. */
import { xaddEntry } from "../ledger-stream.js";
import { CLAIM_ARGS, checkClaim, writeClaim } from "./idempotency.js";
import { script } from "./script.js";

/**
 * Reserve `reserve` credits and create the job record in one step, so concurrent submissions can
 * never overdraw: available = balance - reserved. Every job not yet final holds exactly one reserved
 * credit, so `reserved` is also the account's jobs in flight, checked against its concurrency
 * limit (`maxInFlight`; 0 = none) in the same step. Returns {code, reserved after}: code 1 created,
 * 0 insufficient credits, -1 no account, -2 over the concurrency limit, and with an idempotency
 * `claim` (lua/idempotency.ts) -3 a replay {-3, 0, the claim's job} or -4 the key reused with
 * another body. The claim is written here, with the record and its entry among the jobs not yet
 * known to be queued (`unqueued`, which the sweeper reads): none of them exists without the others.
 * The record gets only the fields a new job has (`fields`); the ones still empty (latency, error,
 * completion) come with its end. Run again for the same job (a command resent after a dropped
 * connection), it changes nothing.
 */
export const SUBMIT = script(
  {
    name: "Submit",
    keys: ["account", "job", "unqueued", "claim"],
    args: ["reserve", "retention", "maxInFlight", "jobId", "createdAtMs", ...CLAIM_ARGS],
    rest: "fields",
  },
  `
local acct = redis.call('HMGET', account, 'balance', 'reserved')
if redis.call('EXISTS', job) == 1 then return {1, tonumber(acct[2] or '0')} end
${checkClaim}
if not acct[1] then return {-1, 0} end
local reserved = tonumber(acct[2] or '0')
local limit = tonumber(maxInFlight)
if limit > 0 and reserved >= limit then return {-2, reserved} end
if tonumber(acct[1]) - reserved < tonumber(reserve) then return {0, reserved} end
redis.call('HINCRBY', account, 'reserved', reserve)
redis.call('HSET', job, 'status', 'pending', 'credits', '0', 'attempts', '0', unpack(fields))
redis.call('EXPIRE', job, retention)
redis.call('ZADD', unqueued, createdAtMs, jobId)
${writeClaim}
return {1, reserved + tonumber(reserve)}`,
);

/**
 * Make a job final and settle its credits, exactly once. A job already final is left as it is
 * (a late worker after a live timeout, a duplicate delivery): returns 0. The charge is capped so
 * it never eats credits reserved by the account's other pending jobs; the balance never drops
 * below zero. Every settlement is appended to the ledger stream (ledger-stream.ts) and announced on
 * `finalChannel`; a job with a reply channel has its settled record (HGETALL, as a JSON array)
 * published there too. `cachedFrom`, when set, marks a cache hit; `coverage`, when set, is the
 * parse's coverage figure (JSON), kept for operators. The job leaves `unqueued` (lua SUBMIT).
 * `resultLoc`, when set, is where `result` was written in the result store (job-results.ts): the
 * record keeps only that, and the reply carries the result itself.
 */
export const FINALIZE = script(
  {
    name: "Finalize",
    keys: ["job", "account", "ledger", "usage", "unqueued"],
    args: ["status", "price", "completedAt", "latencyMs", "error", "result", "resultLoc", "retention", "jobId", "finalChannel", "upstreamUrl", "cachedFrom", "coverage", "exit"],
  },
  `
redis.call('ZREM', unqueued, jobId)
local st = redis.call('HGET', job, 'status')
if not st then return -1 end
if st == 'completed' or st == 'failed' then return 0 end
local bal = tonumber(redis.call('HGET', account, 'balance') or '0')
local reserved = tonumber(redis.call('HGET', account, 'reserved') or '0')
local full = tonumber(price)
local cap = bal - reserved + 1
if cap < 0 then cap = 0 end
local charge = full
if charge > cap then charge = cap end
redis.call('HINCRBY', account, 'reserved', -1)
if charge > 0 then redis.call('HINCRBY', account, 'balance', -charge) end
local kept = result
if resultLoc ~= '' then
  kept = ''
  redis.call('HSET', job, 'resultLoc', resultLoc)
end
redis.call('HSET', job, 'status', status, 'credits', charge, 'completedAt', completedAt,
  'latencyMs', latencyMs, 'error', error, 'result', kept, 'upstreamUrl', upstreamUrl)
redis.call('EXPIRE', job, retention)
local endpoint = redis.call('HGET', job, 'endpoint')
local entry = { type = (status == 'completed') and 'charge' or 'refund', jobId = jobId,
  endpoint = endpoint, credits = charge, at = completedAt, accountId = redis.call('HGET', job, 'accountId') }
if charge < full then entry.uncharged = full - charge end
if cachedFrom ~= '' then
  redis.call('HSET', job, 'cacheHit', '1', 'cachedFrom', cachedFrom)
  entry.cacheHit = true
end
if coverage ~= '' then redis.call('HSET', job, 'coverage', coverage) end
if exit ~= '' then redis.call('HSET', job, 'exit', exit) end
${xaddEntry("ledger", "entry")}
redis.call('HINCRBY', usage, endpoint .. ':' .. status, 1)
redis.call('HINCRBY', usage, endpoint .. ':credits', charge)
-- The waiting process's reply first: it must find the record before the bare announcement.
local replyTo = redis.call('HGET', job, 'replyTo')
if replyTo then
  local fields = redis.call('HGETALL', job)
  if resultLoc ~= '' then
    fields[#fields + 1] = 'result'
    fields[#fields + 1] = result
  end
  redis.call('PUBLISH', replyTo, cjson.encode(fields))
end
redis.call('PUBLISH', finalChannel, jobId)
return 1`,
);

/**
 * A live job answered from the result cache (cache.ts), created final in one step: the record,
 * completed; the charge of the cache-hit `price`; the ledger entry, a charge marked `cacheHit`;
 * the usage counters and the final announcement, as FINALIZE writes them. Like SUBMIT it refuses
 * an unknown account (-1) and one without the price available (0: balance - reserved, so it never
 * eats credits other jobs hold), answers a held idempotency claim (-3 replay, -4 reused) and writes
 * the claim with the record; it reserves nothing and is not held to the concurrency limit, since
 * the job is never in flight. Returns {code} or {-3, 0, the claim's job}; run again, it changes nothing.
 */
export const CREATE_CACHED = script(
  {
    name: "CreateCached",
    keys: ["account", "job", "ledger", "usage", "claim"],
    args: ["price", "retention", "jobId", "completedAt", "finalChannel", "endpoint", ...CLAIM_ARGS],
    rest: "fields",
  },
  `
if redis.call('EXISTS', job) == 1 then return {1} end
${checkClaim}
local acct = redis.call('HMGET', account, 'balance', 'reserved')
if not acct[1] then return {-1} end
local charge = tonumber(price)
if tonumber(acct[1]) - tonumber(acct[2] or '0') < charge then return {0} end
if charge > 0 then redis.call('HINCRBY', account, 'balance', -charge) end
redis.call('HSET', job, 'status', 'completed', 'credits', charge, 'attempts', '0', 'error', '', 'cacheHit', '1', unpack(fields))
redis.call('EXPIRE', job, retention)
${xaddEntry("ledger", "{ type = 'charge', jobId = jobId, endpoint = endpoint, credits = charge, at = completedAt, cacheHit = true, accountId = redis.call('HGET', job, 'accountId') }")}
redis.call('HINCRBY', usage, endpoint .. ':completed', 1)
redis.call('HINCRBY', usage, endpoint .. ':credits', charge)
${writeClaim}
redis.call('PUBLISH', finalChannel, jobId)
return {1}`,
);

/**
 * pending|processing → processing, counting the attempt, and the record as it was: {1, fields}
 * when started, {0, fields} when already final, {-1} when unknown. One round trip where a worker
 * would otherwise read the record and then start it.
 */
export const START = script(
  { name: "Start", keys: ["job"], args: ["attempt"] },
  `
local h = redis.call('HGETALL', job)
if #h == 0 then return {-1} end
local st = redis.call('HGET', job, 'status')
if st == 'completed' or st == 'failed' then return {0, h} end
redis.call('HSET', job, 'status', 'processing', 'attempts', attempt)
return {1, h}`,
);

/** processing → pending after a transient fault, so the next attempt can take it. */
export const REQUEUE = script(
  { name: "Requeue", keys: ["job"], args: [] },
  `
local st = redis.call('HGET', job, 'status')
if st ~= 'processing' then return 0 end
redis.call('HSET', job, 'status', 'pending')
return 1`,
);
