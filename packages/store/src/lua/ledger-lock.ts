/** The ledger drainer's lock (pg/ledger.ts): one worker process drains the stream at a time. */
import { script } from "./script.js";

/** Takes the lock for `token`, or extends it when `token` holds it already: 1 when held. */
export const HOLD_LOCK = script(
  { name: "LedgerLockHold", keys: ["lock"], args: ["token", "ms"] },
  `
local v = redis.call('GET', lock)
if v == false then redis.call('SET', lock, token, 'PX', ms) return 1 end
if v == token then redis.call('PEXPIRE', lock, ms) return 1 end
return 0`,
);

/** Lets the lock go, only when `token` holds it. */
export const RELEASE_LOCK = script(
  { name: "LedgerLockRelease", keys: ["lock"], args: ["token"] },
  `
if redis.call('GET', lock) == token then return redis.call('DEL', lock) end
return 0`,
);
