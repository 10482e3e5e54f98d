/**
 * The page store of kept upstream pages, each backend on its real medium: a temporary folder, and a
 * real S3-protocol server on loopback (s3rver in this process) through the AWS SDK. Pages are laid
 * out by their UTC hour, written whole or not at all, read back byte for byte, absent as null, and
 * swept past a cutoff partition by partition; the RawPageStore keeps the bytes there and only their
 * location in Redis (a real one, under a prefix of its own).
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { readdirSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { FolderPageBlobs, PageStoreUnavailableError, RawPageMissingError, compressPage, RawPageStore, S3PageBlobs, checkRawPagesEnv, keySpace, openPageBlobs, pageLocation, rawPagesEnv, type PageBlobs } from "@serp/store";
import { localStores } from "../../../test/support/s3.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const HOUR = 3_600_000;
/** 2026-11-27 03:20:00 UTC */
const NOW = Date.UTC(2026, 10, 27, 3, 20);
const bytes = (n: number) => randomBytes(n);

const { s3: localS3, tempDir } = localStores("pages-test");

const s3Blobs = (prefix = `t${randomBytes(4).toString("hex")}/raw/`) =>
  openPageBlobs(rawPagesEnv.parse({ ...localS3().env(prefix) })) as S3PageBlobs;

test("a page's location is its UTC hour's partition, then its job id; anything else is refused", () => {
  expect(pageLocation("job_01JABC", NOW)).toBe("2026-11-27/03/job_01JABC.html.br");
  expect(pageLocation("job_01JABC", Date.UTC(2026, 0, 1, 23, 59, 59))).toBe("2026-01-01/23/job_01JABC.html.br");
  for (const id of ["../etc/passwd", "job/1", "", "a".repeat(101)]) expect(() => pageLocation(id, NOW)).toThrow(/not a job id/);
});

test("the settings choose the folder unless a bucket is named, and refuse half a key pair or S3 settings without a bucket", () => {
  expect(openPageBlobs(rawPagesEnv.parse({})).where).toMatch(/\/\.raw-pages$/);
  expect(openPageBlobs(rawPagesEnv.parse({ RAW_PAGES_S3_BUCKET: "" })).kind).toBe("folder");
  const blobs = openPageBlobs(rawPagesEnv.parse({ RAW_PAGES_S3_BUCKET: "pages", RAW_PAGES_S3_ENDPOINT: "" }));
  expect([blobs.kind, blobs.where]).toEqual(["s3", "s3://pages/raw/"]);
  blobs.close();
  const checked = rawPagesEnv.superRefine(checkRawPagesEnv);
  expect(checked.safeParse({ RAW_PAGES_S3_BUCKET: "pages", RAW_PAGES_S3_ACCESS_KEY_ID: "k" }).error?.issues[0]?.path).toEqual(["RAW_PAGES_S3_ACCESS_KEY_ID"]);
  expect(checked.safeParse({ RAW_PAGES_S3_ENDPOINT: "http://127.0.0.1:9000" }).error?.issues[0]?.path).toEqual(["RAW_PAGES_S3_BUCKET"]);
  expect(rawPagesEnv.safeParse({ RAW_PAGES_S3_BUCKET: "Not_A_Bucket" }).success).toBe(false);
  expect(rawPagesEnv.safeParse({ RAW_PAGES_S3_PREFIX: "raw" }).success).toBe(false);
  expect(checked.safeParse({ ...localS3().env("raw/") }).success).toBe(true);
});

describe.each([
  ["folder", () => new FolderPageBlobs(tempDir()) as PageBlobs],
  ["s3", () => s3Blobs() as PageBlobs],
])("%s backend", (_kind, open) => {
  let blobs: PageBlobs;
  beforeEach(() => {
    blobs = open();
  });
  afterEach(() => blobs.close());

  test("reads back the bytes it was given, and null for a page it does not have", async () => {
    const data = bytes(200_000);
    const loc = pageLocation("job_a", NOW);
    await blobs.put(loc, data);
    expect((await blobs.get(loc))!.equals(data)).toBe(true);
    expect(await blobs.get(pageLocation("job_b", NOW))).toBeNull();
    // A second write of the same page replaces it.
    const again = bytes(10);
    await blobs.put(loc, again);
    expect((await blobs.get(loc))!.equals(again)).toBe(true);
  });

  test("refuses a location that is not a page's (read back from Redis, it could name any path or key)", async () => {
    await expect(blobs.get("../../etc/passwd")).rejects.toThrow(/not a page location/);
    await expect(blobs.put("2026-11-27/03/../../x.html.br", bytes(1))).rejects.toThrow(/not a page location/);
  });

  test("a sweep deletes whole partitions past the cutoff and the older pages of the cutoff's hour, and stops at the first newer partition", async () => {
    const cutoff = NOW - 30 * 60_000; // 02:50
    const at = { dayBefore: NOW - 26 * HOUR, hourBefore: NOW - 2 * HOUR, cutoffHour: cutoff - 10 * 60_000, now: NOW };
    for (const [name, t] of Object.entries(at)) await blobs.put(pageLocation(`job_${name}`, t), bytes(100));
    // In the cutoff's hour (02:xx) a page written after the cutoff stays: written now, here.
    await blobs.put(pageLocation("job_cutoffHourLater", cutoff), bytes(100));
    if (blobs instanceof FolderPageBlobs) {
      // The folder goes by each file's time of writing in the cutoff's hour: this one as if written at 02:40.
      const path = join(blobs.where, pageLocation("job_cutoffHour", at.cutoffHour));
      utimesSync(path, new Date(at.cutoffHour), new Date(at.cutoffHour));
      const laterPath = join(blobs.where, pageLocation("job_cutoffHourLater", cutoff));
      utimesSync(laterPath, new Date(cutoff + 60_000), new Date(cutoff + 60_000));
    }
    const deleted = await blobs.sweep(cutoff);
    // s3rver stamps each object with the real time of its writing (after the cutoff): only whole partitions go there.
    const expected = blobs.kind === "folder" ? ["job_dayBefore", "job_hourBefore", "job_cutoffHour"] : ["job_dayBefore", "job_hourBefore"];
    expect(deleted).toBe(expected.length);
    for (const [name, t] of [...Object.entries(at), ["cutoffHourLater", cutoff] as const]) {
      const id = `job_${name}`;
      expect([id, (await blobs.get(pageLocation(id, t))) !== null]).toEqual([id, !expected.includes(id)]);
    }
    expect(await blobs.sweep(cutoff)).toBe(0);
    if (blobs instanceof FolderPageBlobs) expect(readdirSync(blobs.where).sort()).toEqual(["2026-11-27"]);
  });
});

test("the folder writes through a temporary file renamed into place, and leaves none behind", async () => {
  const dir = tempDir();
  const blobs = new FolderPageBlobs(dir);
  await Promise.all(Array.from({ length: 20 }, (_, i) => blobs.put(pageLocation(`job_${i}`, NOW), bytes(50_000))));
  expect(readdirSync(join(dir, "2026-11-27", "03")).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `job_${i}.html.br`).sort());
  // A write that cannot land (its partition is a file) fails and leaves nothing.
  const blocked = new FolderPageBlobs(join(dir, "2026-11-27", "03", "job_0.html.br"));
  await expect(blocked.put(pageLocation("job_x", NOW), bytes(10))).rejects.toThrow();
});

test("a bucket nobody answers for is PageStoreUnavailableError (a 503 to the API), not a missing page", async () => {
  const closed = createServer();
  await new Promise<void>((ok) => closed.listen(0, "127.0.0.1", ok));
  const { port } = closed.address() as AddressInfo;
  await new Promise((ok) => closed.close(ok));
  const blobs = openPageBlobs(rawPagesEnv.parse({ ...localS3().env("raw/"), RAW_PAGES_S3_ENDPOINT: `http://127.0.0.1:${port}` }));
  const err = await blobs.get(pageLocation("job_a", NOW)).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(PageStoreUnavailableError);
  expect((err as Error).message).toMatch(/ECONNREFUSED/);
  blobs.close();
});

test("a bucket refuses an unknown access key: the settings' credentials are the ones sent (s3rver checks the key id, not V4 signatures)", async () => {
  const blobs = openPageBlobs(rawPagesEnv.parse({ ...localS3().env("raw/"), RAW_PAGES_S3_ACCESS_KEY_ID: "NOT-S3RVER" }));
  await expect(blobs.put(pageLocation("job_a", NOW), bytes(10))).rejects.toThrow(/Access Key Id you provided does not exist/);
  blobs.close();
});

describe.each([
  ["folder", () => new FolderPageBlobs(tempDir()) as PageBlobs],
  ["s3", () => s3Blobs() as PageBlobs],
])("RawPageStore on the %s backend", (_kind, open) => {
  let redis: Redis;
  let blobs: PageBlobs;
  const keys = keySpace(`rp${randomBytes(4).toString("hex")}`);
  beforeAll(() => {
    redis = new Redis(REDIS_URL);
  });
  beforeEach(() => {
    blobs = open();
  });
  afterEach(() => blobs.close());
  afterAll(async () => {
    const all = await redis.keys(`${keys.prefix}:*`);
    if (all.length) await redis.del(...all);
    redis.disconnect();
  });

  test("keeps the bytes in the page store and only where they are in Redis, expiring with the retention", async () => {
    const store = new RawPageStore(redis, keys, blobs, 600);
    const body = `<html><body>${"<p>coffee</p>".repeat(20_000)}</body></html>`;
    const size = (await store.keep("job_keep", "web-search", { body }))!;
    expect(size.bytes).toBe(Buffer.byteLength(body));
    const record = await redis.hgetall(keys.rawPage("job_keep"));
    expect(record).toEqual({ loc: expect.stringMatching(/^\d{4}-\d{2}-\d{2}\/\d{2}\/job_keep\.html\.br$/), endpoint: "web-search", type: "text/html; charset=utf-8", bytes: String(size.bytes), at: expect.any(String) });
    expect(await redis.ttl(keys.rawPage("job_keep"))).toBeGreaterThan(590);
    expect(Number(await redis.memory("USAGE", keys.rawPage("job_keep")))).toBeLessThan(512);
    expect((await blobs.get(record.loc!))!.length).toBe(size.compressedBytes);
    const read = (await store.read("job_keep"))!;
    expect(read.body).toBe(body);
    expect(await store.since(Date.now() - 60_000)).toContain("job_keep");
    expect(await store.compressed("job_never")).toBeNull();
  });

  test("a record whose bytes are gone is a RawPageMissingError naming the store, not a page or a crash", async () => {
    const store = new RawPageStore(redis, keys, blobs, 600);
    await store.keep("job_gone", "web-news", { body: "<html>news</html>" });
    // The whole store swept (as if its partition had gone): the record is still in Redis.
    await blobs.sweep(Date.now() + 2 * HOUR);
    const err = await store.compressed("job_gone").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RawPageMissingError);
    expect((err as RawPageMissingError).where).toBe(blobs.where);
  });

  test("still reads a page kept by a worker from before the page store (the bytes in its Redis record)", async () => {
    const store = new RawPageStore(redis, keys, blobs, 600);
    const data = await compressPage("<html>kept the old way</html>");
    await redis.hset(keys.rawPage("job_legacy"), { data, endpoint: "web-news", type: "text/html; charset=utf-8", bytes: "29", at: String(Date.now()) });
    expect(await store.read("job_legacy")).toMatchObject({ endpoint: "web-news", bytes: 29, body: "<html>kept the old way</html>" });
  });

  test("a retention of 0 keeps nothing anywhere", async () => {
    const store = new RawPageStore(redis, keys, blobs, 0);
    expect(await store.keep("job_off", "web-search", { body: "<html></html>" })).toBeUndefined();
    expect(await redis.exists(keys.rawPage("job_off"))).toBe(0);
    expect(await blobs.get(pageLocation("job_off", Date.now()))).toBeNull();
  });
});

test("a folder another host cannot see reads as missing (the API on another host than the workers)", async () => {
  const redis = new Redis(REDIS_URL);
  const keys = keySpace(`rp${randomBytes(4).toString("hex")}`);
  try {
    const workerSide = new RawPageStore(redis, keys, new FolderPageBlobs(tempDir()), 600);
    const apiSide = new RawPageStore(redis, keys, new FolderPageBlobs(tempDir()), 600);
    await workerSide.keep("job_elsewhere", "web-search", { body: "<html>x</html>" });
    expect((await workerSide.read("job_elsewhere"))!.body).toBe("<html>x</html>");
    await expect(apiSide.compressed("job_elsewhere")).rejects.toBeInstanceOf(RawPageMissingError);
  } finally {
    await redis.del(keys.rawPage("job_elsewhere"), keys.rawPages());
    redis.disconnect();
  }
});
