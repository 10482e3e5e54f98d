/**
 * The Sentinel settings (packages/store env fragment and redisTargetOf) and the replica barrier of
 * REDIS_WAIT_REPLICAS (ReplicaBarrier), on a private primary and replica: a submission is answered
 * once its write is on the replica; with the replica gone it is answered after the timeout, then
 * at once while the replica stays away, and waited for again once it is back.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ChildProcess } from "node:child_process";
import { Redis } from "ioredis";
import { loadEnv } from "@serp/api/env";
import { createRedis, describeRedisTarget, redisTargetOf, ReplicaBarrier, waitReady } from "@serp/store";
import { spawnRedisNode, stablePort, stopRedisProcess } from "../support/redis-server.js";

describe("REDIS_SENTINELS", () => {
  test("host:port list, [v6]:port, the primary's name (default mymaster) and the URL's credentials", () => {
    const env = loadEnv({ REDIS_URL: "redis://app:s3cret@ignored:6379/2", REDIS_SENTINELS: "10.0.0.1:26379, sentinel-b:26380,[::1]:26381", REDIS_SENTINEL_PASSWORD: "sp" });
    expect(redisTargetOf(env)).toEqual({
      url: "redis://app:s3cret@ignored:6379/2",
      sentinels: [{ host: "10.0.0.1", port: 26379 }, { host: "sentinel-b", port: 26380 }, { host: "::1", port: 26381 }],
      name: "mymaster",
      sentinelPassword: "sp",
    });
    expect(describeRedisTarget(redisTargetOf(env))).toBe('primary "mymaster" of sentinels 10.0.0.1:26379,sentinel-b:26380,::1:26381');
    // Unset or empty: REDIS_URL alone, password hidden when shown.
    const plain = loadEnv({ REDIS_URL: "redis://app:s3cret@cache:6379", REDIS_SENTINELS: "" });
    expect(redisTargetOf(plain)).toBe("redis://app:s3cret@cache:6379");
    expect(describeRedisTarget(redisTargetOf(plain))).toBe("redis://app:***@cache:6379");
  });

  test.each([["10.0.0.1"], ["10.0.0.1:0"], ["a:26379,b"], ["a:99999"], [","]])("refused: %s", (value) => {
    expect(() => loadEnv({ REDIS_SENTINELS: value })).toThrow(/REDIS_SENTINELS/);
  });
});

describe("ReplicaBarrier (REDIS_WAIT_REPLICAS)", () => {
  let dir: string;
  let ports: { primary: number; replica: number };
  let primary: ChildProcess;
  let replica: ChildProcess | undefined;
  let app: Redis;
  let waiter: Redis;
  const stopReplica = async () => {
    const r = replica;
    replica = undefined;
    await stopRedisProcess(r, "SIGKILL");
  };
  const inSync = async () => {
    const probe = new Redis(ports.replica);
    for (let i = 0; i < 100 && !/master_link_status:up/.test(await probe.info("replication")); i++) await new Promise((r) => setTimeout(r, 100));
    probe.disconnect();
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "serp-barrier-"));
    ports = { primary: await stablePort(), replica: await stablePort() };
    primary = await spawnRedisNode(ports.primary, join(dir, "primary"));
    replica = await spawnRedisNode(ports.replica, join(dir, "replica"), ports.primary);
    await inSync();
    app = createRedis(`redis://127.0.0.1:${ports.primary}`, "command", "app");
    waiter = createRedis(`redis://127.0.0.1:${ports.primary}`, "command", "barrier");
    await Promise.all([waitReady(app), waitReady(waiter)]);
  }, 30_000);
  afterAll(async () => {
    app?.disconnect();
    waiter?.disconnect();
    for (const child of [replica, primary]) await stopRedisProcess(child);
    rmSync(dir, { recursive: true, force: true });
  });

  test("a write of another connection is on the replica when reached() says so; without the replica, false after the timeout, then at once", async () => {
    const barrier = new ReplicaBarrier(waiter, "t:replicated", 1, 300);
    const onReplica = new Redis(ports.replica);
    try {
      // Concurrent callers share rounds; each write made before its call is on the replica.
      const writes = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          await app.set(`t:w${i}`, String(i));
          return barrier.reached();
        }),
      );
      expect(writes.every(Boolean)).toBe(true);
      expect(await onReplica.mget(...Array.from({ length: 20 }, (_, i) => `t:w${i}`))).toEqual(Array.from({ length: 20 }, (_, i) => String(i)));

      await stopReplica();
      let t = performance.now();
      expect(await barrier.reached()).toBe(false);
      expect(performance.now() - t).toBeGreaterThanOrEqual(250);
      // Known short of replicas: answered at once while they stay away.
      t = performance.now();
      expect(await barrier.reached()).toBe(false);
      expect(performance.now() - t).toBeLessThan(100);

      replica = await spawnRedisNode(ports.replica, join(dir, "replica"), ports.primary);
      await inSync();
      // The background round that notices it is back, then waiting again.
      for (let i = 0; i < 20 && !(await barrier.reached()); i++) await new Promise((r) => setTimeout(r, 100));
      await app.set("t:after", "1");
      expect(await barrier.reached()).toBe(true);
      expect(await onReplica.get("t:after")).toBe("1");
    } finally {
      onReplica.disconnect();
    }
  }, 60_000);

  test("Redis unreachable: rejects (the API answers 503)", async () => {
    const gone = createRedis("redis://127.0.0.1:1", "command", "gone");
    gone.on("error", () => undefined);
    await expect(new ReplicaBarrier(gone, "t:replicated", 1, 100).reached()).rejects.toThrow();
    gone.disconnect();
  });
});
