/**
 * The idempotency claim, as the creation scripts (jobs.ts) read and write it in the step that
 * creates the job: a claim and its job record are never apart (idempotency.ts).
 */

/** The claim's Lua arguments, after each script's own: its fingerprint, TTL, and a job it may name and still be free. */
export const CLAIM_ARGS = ["claimBody", "claimTtl", "staleJob"] as const;

/**
 * Lua: when `claim` (a key, or '' for none) is held for another live job, returns
 * {-3, 0, that job} for the same body (a replay) or {-4, 0} for another (a reused key).
 */
export const checkClaim = `
if claim ~= '' then
  local held = redis.call('GET', claim)
  if held then
    local c = cjson.decode(held)
    if c.jobId ~= staleJob then
      if c.body == claimBody then return {-3, 0, c.jobId} end
      return {-4, 0}
    end
  end
end`;

/** Lua: claims `claim` (when one) for `jobId`, the job just created. */
export const writeClaim = `
if claim ~= '' then
  redis.call('SET', claim, cjson.encode({ body = claimBody, jobId = jobId }), 'EX', claimTtl)
end`;
