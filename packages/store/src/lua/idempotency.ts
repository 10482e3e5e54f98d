/** The idempotency store's script (idempotency.ts). */
import { script } from "./script.js";

/** Deletes a claim only while it is still the one for `jobId` (never a later one). */
export const RELEASE_CLAIM = script(
  { name: "IdempotencyRelease", keys: ["claim"], args: ["jobId"] },
  `
local v = redis.call('GET', claim)
if v and cjson.decode(v).jobId == jobId then return redis.call('DEL', claim) end
return 0`,
);
