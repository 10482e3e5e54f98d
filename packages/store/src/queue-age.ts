import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { script } from "./lua/script.js";

/** Priority bands read at most per call: fair priorities are an account's jobs in flight, so few are in use. */
const MAX_BANDS = 1_000;

/**
 * The enqueue time (BullMQ's `timestamp`, ms) of the oldest job waiting to be taken, or -1 when none
 * waits. Plain jobs wait in the `wait` list, oldest at its right end (BullMQ pushes left and takes
 * right); fair-priority jobs in the `prioritized` set, scored priority × 2^32 + arrival counter, so
 * each priority band is first-come first-served and its oldest member is the band's first. One
 * lookup per band in use, not a scan of the set: the oldest may sit in a low band (an account with
 * many jobs in flight), which is the job an age alert is for.
 */
const oldestWaiting = script(
  { name: "OldestWaiting", keys: ["wait", "prioritized"], args: ["jobPrefix", "maxBands"] },
  `
local oldest = -1
local function consider(id)
  local ts = tonumber(redis.call('HGET', jobPrefix .. id, 'timestamp'))
  if ts and (oldest < 0 or ts < oldest) then oldest = ts end
end
local tail = redis.call('LINDEX', wait, -1)
if tail then consider(tail) end
local band = 4294967296
local floor = 0
for _ = 1, tonumber(maxBands) do
  local first = redis.call('ZRANGEBYSCORE', prioritized, floor, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if #first == 0 then break end
  consider(first[1])
  floor = (math.floor(tonumber(first[2]) / band) + 1) * band
end
return oldest`,
);

/**
 * Seconds the oldest waiting (or prioritized) job of `queue` has waited since it was enqueued; 0 when
 * none waits. `redis` is a connection to the queue's Redis (the process's own).
 */
export async function oldestWaitingAgeSeconds(redis: Redis, queue: Pick<Queue, "keys" | "toKey">, now = Date.now()): Promise<number> {
  const oldest = await oldestWaiting.run<number>(redis, {
    wait: queue.keys.wait!,
    prioritized: queue.keys.prioritized!,
    jobPrefix: queue.toKey(""),
    maxBands: MAX_BANDS,
  });
  return oldest < 0 ? 0 : Math.max(0, (now - oldest) / 1_000);
}
