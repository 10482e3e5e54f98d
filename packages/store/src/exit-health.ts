/**
 * Exit health in Redis, shared by every worker of the fleet: the rules of @serp/upstream's
 * exits/health.ts (`step`, `claimOf`: a block or proxy error sets the exit aside for a doubling
 * rest, a success heals, one probe across the fleet when a rest ends), each call one Lua script so
 * two workers never both win a probe. A record expires once it has been quiet for the longest rest
 * past its own; an index lists the live ones for `serp upstream proxies`.
 */
import type { Redis } from "ioredis";
import type { KeySpace } from "./keys.js";
import { script } from "./lua/script.js";

export interface RedisExitHealthOptions {
  blockCooldownMs: number;
  errorCooldownMs: number;
  maxCooldownMs: number;
  probeMs: number;
}

type Event = "blocked" | "proxy_error" | "success";
interface State {
  strikes: number;
  until: number;
  reason?: "blocked" | "proxy_error";
  probeUntil: number;
}

const REPORT = script(
  {
    name: "ExitReport",
    keys: ["key", "index"],
    args: ["member", "event", "now", "blockMs", "errorMs", "maxMs"],
  },
  `
local t = tonumber(now)
local strikes = tonumber(redis.call('HGET', key, 'strikes') or '0')
local rest_until = tonumber(redis.call('HGET', key, 'until') or '0')
local reason = redis.call('HGET', key, 'reason') or ''
-- Reports while the exit rests are answers to requests sent before the first block: no change.
if t < rest_until then return { tostring(strikes), tostring(rest_until), reason } end
if event == 'success' then
  redis.call('DEL', key)
  redis.call('ZREM', index, member)
  return { '0', '0', '' }
end
strikes = strikes + 1
local base = tonumber(blockMs)
if event == 'proxy_error' then base = tonumber(errorMs) end
local rest = math.min(tonumber(maxMs), base * 2 ^ math.min(strikes - 1, 40))
rest_until = t + rest
redis.call('HSET', key, 'strikes', strikes, 'until', tostring(rest_until), 'reason', event, 'probeUntil', '0')
redis.call('PEXPIRE', key, math.floor(rest + tonumber(maxMs)))
redis.call('ZADD', index, tostring(rest_until + tonumber(maxMs)), member)
return { tostring(strikes), tostring(rest_until), event }`,
);

const CLAIM = script(
  { name: "ExitClaim", keys: ["key"], args: ["now", "probeMs"] },
  `
local strikes = tonumber(redis.call('HGET', key, 'strikes') or '0')
if strikes == 0 then return 'free' end
local t = tonumber(now)
if t < tonumber(redis.call('HGET', key, 'until') or '0') or t < tonumber(redis.call('HGET', key, 'probeUntil') or '0') then return 'resting' end
redis.call('HSET', key, 'probeUntil', tostring(t + tonumber(probeMs)))
return 'probe'`,
);

export class RedisExitHealth {
  constructor(
    private readonly redis: Redis,
    private readonly keys: KeySpace,
    private readonly o: RedisExitHealthOptions,
    private readonly now: () => number = Date.now,
  ) {}

  async claim(pool: string, exit: string): Promise<"free" | "probe" | "resting"> {
    return CLAIM.run(this.redis, { key: this.keys.exitHealth(pool, exit), now: this.now(), probeMs: this.o.probeMs });
  }

  async report(pool: string, exit: string, event: Event): Promise<State> {
    const [strikes, until, reason] = await REPORT.run<[string, string, string]>(this.redis, {
      key: this.keys.exitHealth(pool, exit),
      index: this.keys.exitIndex(),
      member: `${pool}\n${exit}`,
      event,
      now: this.now(),
      blockMs: this.o.blockCooldownMs,
      errorMs: this.o.errorCooldownMs,
      maxMs: this.o.maxCooldownMs,
    });
    return { strikes: Number(strikes), until: Number(until), probeUntil: 0, ...(reason ? { reason: reason as State["reason"] } : {}) };
  }

  /** Every exit with a live record (resting now, or rested and not yet healed). */
  async statuses(): Promise<(State & { pool: string; exit: string })[]> {
    const index = this.keys.exitIndex();
    await this.redis.zremrangebyscore(index, "-inf", this.now());
    const members = await this.redis.zrange(index, 0, -1);
    const out: (State & { pool: string; exit: string })[] = [];
    for (const member of members) {
      const [pool, exit] = member.split("\n") as [string, string];
      const h = await this.redis.hgetall(this.keys.exitHealth(pool, exit));
      if (!h.strikes) continue;
      out.push({
        pool, exit, strikes: Number(h.strikes), until: Number(h.until ?? 0), probeUntil: Number(h.probeUntil ?? 0),
        ...(h.reason ? { reason: h.reason as State["reason"] } : {}),
      });
    }
    return out;
  }
}
