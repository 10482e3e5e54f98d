/** The webhook store's scripts (webhooks.ts): a job's delivery record, beside the job and expiring with it. */
import { script } from "./script.js";

/**
 * Makes the delivery record `pending` unless it exists; returns its state. The record lives as
 * long as the job (PTTL of the job key), else for `retention` seconds.
 */
export const BEGIN = script(
  { name: "WebhookBegin", keys: ["job", "delivery"], args: ["url", "retention"] },
  `
local st = redis.call('HGET', delivery, 'state')
if st then return st end
redis.call('HSET', delivery, 'state', 'pending', 'url', url)
local ttl = redis.call('PTTL', job)
if ttl > 0 then redis.call('PEXPIRE', delivery, ttl) else redis.call('EXPIRE', delivery, retention) end
return 'pending'`,
);

/** Appends an attempt and sets the state, both expiring with the job. */
export const RECORD = script(
  { name: "WebhookRecord", keys: ["job", "delivery", "attempts"], args: ["attempt", "state", "nextAttemptAt", "retention", "url"] },
  `
redis.call('RPUSH', attempts, attempt)
redis.call('HSET', delivery, 'state', state, 'nextAttemptAt', nextAttemptAt, 'url', url)
local ttl = redis.call('PTTL', job)
for _, key in ipairs({ delivery, attempts }) do
  if ttl > 0 then redis.call('PEXPIRE', key, ttl) else redis.call('EXPIRE', key, retention) end
end
return 1`,
);

/** Marks a delivery `failed` if it is still pending (the queue gave up on it by itself). */
export const ABANDON = script(
  { name: "WebhookAbandon", keys: ["delivery"], args: [] },
  `
if redis.call('HGET', delivery, 'state') ~= 'pending' then return 0 end
redis.call('HSET', delivery, 'state', 'failed', 'nextAttemptAt', '')
return 1`,
);
