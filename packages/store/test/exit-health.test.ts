/** Exit health in Redis: the rules of exits/health.ts run atomically, one state for every worker. */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { keySpace, RedisExitHealth } from "../src/index.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const redis = new Redis(REDIS_URL);
/** A second connection, as another worker process has. */
const other = new Redis(REDIS_URL);
const keys = keySpace(`t${randomBytes(5).toString("hex")}`);
const o = { blockCooldownMs: 1_000, errorCooldownMs: 100, maxCooldownMs: 5_000, probeMs: 300 };
let now = 1_000_000;
const health = new RedisExitHealth(redis, keys, o, () => now);
const health2 = new RedisExitHealth(other, keys, o, () => now);

afterAll(async () => {
  const found = await redis.keys(`${keys.prefix}:*`);
  if (found.length) await redis.del(...found);
  redis.disconnect();
  other.disconnect();
});

test("a block rests the exit for every worker, doubling per block in a row up to the cap; reports while resting change nothing", async () => {
  expect(await health.claim("dc", "10.0.0.1:80")).toBe("free");
  expect(await health.report("dc", "10.0.0.1:80", "blocked")).toMatchObject({ strikes: 1, until: now + 1_000, reason: "blocked" });
  expect(await health2.claim("dc", "10.0.0.1:80")).toBe("resting");
  // Late answers of requests sent before the block.
  expect(await health2.report("dc", "10.0.0.1:80", "blocked")).toMatchObject({ strikes: 1, until: now + 1_000 });
  expect(await health2.report("dc", "10.0.0.1:80", "success")).toMatchObject({ strikes: 1 });
  const rests: number[] = [];
  for (let i = 0; i < 4; i++) {
    now += 10_000;
    const s = await health.report("dc", "10.0.0.1:80", "blocked");
    rests.push(s.until - now);
  }
  expect(rests).toEqual([2_000, 4_000, 5_000, 5_000]);
  const ttl = await redis.pttl(keys.exitHealth("dc", "10.0.0.1:80"));
  expect(ttl).toBeGreaterThan(5_000);
  expect(ttl).toBeLessThanOrEqual(10_000);
});

test("when a rest ends, exactly one of many concurrent callers across workers wins the probe; its success heals", async () => {
  await health.report("dc", "10.0.0.2:80", "proxy_error");
  now += 100;
  const verdicts = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? health : health2).claim("dc", "10.0.0.2:80")));
  expect(verdicts.filter((v) => v === "probe")).toHaveLength(1);
  expect(verdicts.filter((v) => v === "resting")).toHaveLength(39);
  // The probe's claim lapses if its answer never comes.
  now += 300;
  expect(await health2.claim("dc", "10.0.0.2:80")).toBe("probe");
  expect(await health2.report("dc", "10.0.0.2:80", "success")).toMatchObject({ strikes: 0 });
  expect(await health.claim("dc", "10.0.0.2:80")).toBe("free");
  expect(await redis.exists(keys.exitHealth("dc", "10.0.0.2:80"))).toBe(0);
});

test("statuses list the exits with a live record, for operators", async () => {
  await health.report("resi", "gateway", "proxy_error");
  const list = await health2.statuses();
  const mine = list.find((s) => s.pool === "resi" && s.exit === "gateway");
  expect(mine).toMatchObject({ strikes: 1, reason: "proxy_error", until: now + 100 });
  expect(list.find((s) => s.exit === "10.0.0.2:80")).toBeUndefined();
  // Past its expiry a record leaves the index.
  now += 60_000;
  expect((await health.statuses()).find((s) => s.pool === "resi")).toBeUndefined();
});
