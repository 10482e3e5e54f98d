/** The result cache's scripts (cache.ts): look up or claim a search, fill it, give it up. */
import { script } from "./script.js";

/**
 * One round trip: a fresh entry ({1, at, url, job, body}); else the fill lock for this job ({2}, or
 * its own lock again after a retry); else the job holding it ({3, holder}). `freshSince`: the
 * oldest `at` that is fresh enough.
 */
export const CLAIM = script(
  { name: "CacheClaim", keys: ["entry", "fill"], args: ["jobId", "lockMs", "freshSince"] },
  `
local e = redis.call('HMGET', entry, 'at', 'url', 'job', 'body')
if e[1] and e[4] and tonumber(e[1]) >= tonumber(freshSince) then return {1, e[1], e[2] or '', e[3] or '', e[4]} end
if redis.call('SET', fill, jobId, 'NX', 'PX', lockMs) then return {2} end
local holder = redis.call('GET', fill)
if holder == jobId then
  redis.call('PEXPIRE', fill, lockMs)
  return {2}
end
return {3, holder or ''}`,
);

/**
 * Writes an entry (unless a newer one is there), drops the fill lock when this job holds it, and
 * announces the fill (the search's key, on `channel`).
 */
export const FILL = script(
  { name: "CacheFill", keys: ["entry", "fill"], args: ["at", "url", "jobId", "body", "ttl", "channel", "searchKey"] },
  `
local cur = redis.call('HGET', entry, 'at')
if not cur or tonumber(cur) <= tonumber(at) then
  redis.call('HSET', entry, 'at', at, 'url', url, 'job', jobId, 'body', body)
  redis.call('EXPIRE', entry, ttl)
end
if redis.call('GET', fill) == jobId then redis.call('DEL', fill) end
redis.call('PUBLISH', channel, searchKey)
return 1`,
);

/** Drops the fill lock when this job holds it and announces it, so a waiter fetches. */
export const RELEASE = script(
  { name: "CacheRelease", keys: ["fill"], args: ["jobId", "channel", "searchKey"] },
  `
if redis.call('GET', fill) == jobId then redis.call('DEL', fill) end
redis.call('PUBLISH', channel, searchKey)
return 1`,
);
