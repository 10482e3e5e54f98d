/**
 * Completed results kept beside the pages (job-results.ts), on each backend's real medium (a
 * temporary folder; s3rver on loopback through the AWS SDK) and a real Redis: the record keeps only
 * where its result is, every read gives the result back whole, a result the record does not name is
 * deleted, a store that refuses the write leaves the result in the record, and one that lost it is a
 * ResultMissingError, never a record without its result. The sweep follows the records.
 */
import { randomBytes } from "node:crypto";
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { newJobId, type JobParams, type JobResult } from "@serp/shared";
import {
  AccountStore, FolderPageBlobs, JobArchive, JobResults, JobStore, ResultMissingError, checkedLocation, keySpace, openJobResults, openPageBlobs,
  rawPagesEnv, recordFromFields, resultLocation, resultsPrefixOf, type Final, type PageBlobs,
} from "../src/index.js";
import { localStores } from "../../../test/support/s3.js";

const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
const keys = keySpace(`jr${randomBytes(4).toString("hex")}`);
const accounts = new AccountStore(redis, keys);
const params: JobParams = { query: "coffee", country: "us", language: "en", page: 1 };
const HOUR = 3_600_000;
/** 2026-11-27 03:20:00 UTC */
const NOW = Date.UTC(2026, 10, 27, 3, 20);

const { s3: localS3, tempDir } = localStores("results-test");
afterAll(async () => {
  const found = await redis.keys(`${keys.prefix}:*`);
  if (found.length) await redis.del(...found);
  redis.disconnect();
});

/** A result of a results page's size, with an inline thumbnail as the upstream sends them. */
function bigResult(query = "coffee"): JobResult {
  const thumbnail = `data:image/jpeg;base64,${randomBytes(3_000).toString("base64")}`;
  return {
    search_parameters: { query },
    organic_results: Array.from({ length: 10 }, (_, i) => ({ position: i + 1, title: `Result ${i} — café`, link: `https://example.com/${i}`, thumbnail })),
  } as unknown as JobResult;
}
async function pendingJob(jobs: JobStore): Promise<{ id: string; accountId: string }> {
  const a = await accounts.create("t");
  await accounts.grant(a.id, 10, "test");
  const id = newJobId();
  await jobs.create({ id, accountId: a.id, endpoint: "web-search", queue: "fast", params, createdAt: new Date().toISOString() }, 1);
  return { id, accountId: a.id };
}
const completed = (result: JobResult | null): Final => ({ status: "completed", credits: 1, latencyMs: 5, error: null, result, completedAt: new Date().toISOString() });

test("a result's location is its UTC hour's partition, its job id and a nonce; the bucket keeps results beside the pages' prefix, never inside it", () => {
  const loc = resultLocation("job_01JABC", NOW);
  expect(loc).toMatch(/^2026-11-27\/03\/job_01JABC\.[0-9a-f]{12}\.json\.br$/);
  expect(checkedLocation(loc)).toBe(loc);
  expect(resultLocation("job_01JABC", NOW)).not.toBe(loc);
  expect(() => checkedLocation("2026-11-27/03/job_01JABC.json.br")).toThrow(/not a page location/);
  expect(() => resultLocation("../x", NOW)).toThrow(/not a job id/);
  expect(resultsPrefixOf("raw/")).toBe("raw-results/");
  expect(resultsPrefixOf("team-a/raw/")).toBe("team-a/raw-results/");
  expect(resultsPrefixOf("")).toBe("results/");
  const dir = tempDir();
  expect(openPageBlobs(rawPagesEnv.parse({ RAW_PAGES_DIR: dir }), "results").where).toBe(join(dir, "results"));
  const bucket = openPageBlobs(rawPagesEnv.parse({ ...localS3().env("raw/") }), "results");
  expect(bucket.where).toBe(`s3://${localS3().bucket}/raw-results/`);
  bucket.close();
  expect(openJobResults(rawPagesEnv.parse({ JOB_RESULT_STORE: "redis" }), 60)).toBeUndefined();
  expect(rawPagesEnv.parse({}).JOB_RESULT_STORE).toBe("page-store");
  expect(rawPagesEnv.safeParse({ JOB_RESULT_STORE: "disk" }).success).toBe(false);
});

describe.each([
  ["folder", () => openPageBlobs(rawPagesEnv.parse({ RAW_PAGES_DIR: tempDir() }), "results")],
  ["s3", () => openPageBlobs(rawPagesEnv.parse({ ...localS3().env(`t${randomBytes(4).toString("hex")}/raw/`) }), "results")],
])("results on the %s backend", (_kind, open) => {
  let blobs: PageBlobs;
  let results: JobResults;
  let jobs: JobStore;
  beforeEach(() => {
    blobs = open();
    // Kept a week at most, a minute past their records' hot window once no record names them.
    results = new JobResults(blobs, 7 * 24 * 3_600, 60);
    jobs = new JobStore(redis, keys, 600).keepResultsIn(results);
  });
  afterEach(() => blobs.close());

  test("a completed job's record keeps only where its result is; every read gives the result back whole", async () => {
    const { id, accountId } = await pendingJob(jobs);
    const result = bigResult();
    expect(await jobs.finalize(id, accountId, completed(result))).toBe(true);
    const h = await redis.hgetall(keys.job(id));
    expect(h.result).toBe("");
    expect(h.resultLoc).toMatch(new RegExp(`^\\d{4}-\\d{2}-\\d{2}/\\d{2}/${id}\\.[0-9a-f]{12}\\.json\\.br$`));
    expect(JSON.stringify(result).length).toBeGreaterThan(30_000);
    expect(Number(await redis.memory("USAGE", keys.job(id)))).toBeLessThan(2_048);
    expect((await jobs.get(id))!.result).toEqual(result);
    // Asked not to read it: the record without it.
    expect((await jobs.get(id, { result: false }))!).toMatchObject({ job: { id, status: "completed" }, result: null });
    // Another process reading the same store.
    const other = new JobStore(redis, keys, 600).keepResultsIn(new JobResults(blobs, 600));
    expect((await other.get(id))!.result).toEqual(result);
    expect(await jobs.resultsNamed([h.resultLoc!, resultLocation(id, Date.now())])).toEqual([true, false]);
  });

  test("a settlement the record refuses (already final) deletes the result it wrote; the first one's stays", async () => {
    const { id, accountId } = await pendingJob(jobs);
    const first = bigResult("first");
    expect(await jobs.finalize(id, accountId, completed(first))).toBe(true);
    const loc = (await redis.hget(keys.job(id), "resultLoc"))!;
    expect(await jobs.finalize(id, accountId, completed(bigResult("second")))).toBe(false);
    expect((await jobs.get(id))!.result).toEqual(first);
    const partition = loc.slice(0, loc.lastIndexOf("/"));
    const stored: string[] = [];
    for await (const batch of blobs.list(Date.now() + 2 * HOUR)) stored.push(...batch.filter((l) => l.startsWith(`${partition}/${id}.`)));
    expect(stored).toEqual([loc]);
  });

  test("a result gone from the store is a ResultMissingError naming the job, never the job without its result", async () => {
    const { id, accountId } = await pendingJob(jobs);
    await jobs.finalize(id, accountId, completed(bigResult()));
    await blobs.delete([(await redis.hget(keys.job(id), "resultLoc"))!]);
    const err = await jobs.get(id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ResultMissingError);
    expect(err).toMatchObject({ jobId: id, unreadable: false, where: blobs.where });
    // A process without the result store says so too.
    await expect(new JobStore(redis, keys, 600).get(id)).rejects.toBeInstanceOf(ResultMissingError);
  });

  test("the sweep deletes results past the retention, and past the hot window those no record names", async () => {
    const { id, accountId } = await pendingJob(jobs);
    await jobs.finalize(id, accountId, completed(bigResult()));
    const named = (await redis.hget(keys.job(id), "resultLoc"))!;
    const orphan = resultLocation(newJobId(), Date.now());
    await blobs.put(orphan, Buffer.from("x"));
    const sweep = (now: number) => results.sweep(now, (locations) => jobs.resultsNamed(locations));
    // Within the hot window: nothing goes.
    expect(await sweep(Date.now())).toBe(0);
    // Past it (the hour partition ended, then 60 s and a minute of grace): the orphan goes, the named one stays.
    expect(await sweep(Date.now() + 2 * HOUR + 120_000)).toBe(1);
    expect(await blobs.get(named)).not.toBeNull();
    expect(await blobs.get(orphan)).toBeNull();
    // Its record gone (expired after its hot window): it goes too.
    await redis.del(keys.job(id));
    expect(await sweep(Date.now() + 2 * HOUR + 120_000)).toBe(1);
    expect(await blobs.get(named)).toBeNull();
  });
});

test("without a hot window (no archive), only the retention deletes results, named or not", async () => {
  const blobs = new FolderPageBlobs(tempDir(), true);
  const results = new JobResults(blobs, 4 * 3_600);
  const loc = resultLocation(newJobId(), NOW - 2 * HOUR);
  await blobs.put(loc, Buffer.from("x"));
  expect(await results.sweep(NOW, async (l) => l.map(() => false))).toBe(0);
  expect(await results.sweep(NOW + 4 * HOUR)).toBe(1);
  expect(await blobs.get(loc)).toBeNull();
});

test("bytes that do not decompress are a ResultMissingError (unreadable)", async () => {
  const dir = tempDir();
  const results = new JobResults(new FolderPageBlobs(dir, true), 600);
  const jobs = new JobStore(redis, keys, 600).keepResultsIn(results);
  const { id, accountId } = await pendingJob(jobs);
  await jobs.finalize(id, accountId, completed(bigResult()));
  writeFileSync(join(dir, (await redis.hget(keys.job(id), "resultLoc"))!), "not brotli at all");
  await expect(jobs.get(id)).rejects.toMatchObject({ name: "ResultMissingError", unreadable: true, message: expect.stringMatching(/unreadable/) });
});

test("a store that refuses the write leaves the result in the record (the job completes, said once), and the job reads the same", async () => {
  const dir = tempDir();
  // The partition cannot be made: the store's folder is a file.
  writeFileSync(join(dir, "results"), "");
  const jobs = new JobStore(redis, keys, 600).keepResultsIn(new JobResults(new FolderPageBlobs(join(dir, "results"), true), 600));
  const told: string[] = [];
  jobs.onResultNotStored = (jobId) => told.push(jobId);
  const { id, accountId } = await pendingJob(jobs);
  const result = bigResult();
  expect(await jobs.finalize(id, accountId, completed(result))).toBe(true);
  expect(told).toEqual([id]);
  const h = await redis.hgetall(keys.job(id));
  expect(h.resultLoc).toBeUndefined();
  expect(JSON.parse(h.result!)).toEqual(result);
  expect((await jobs.get(id))!.result).toEqual(result);
});

test("the live reply carries the result though the record keeps only its location", async () => {
  const results = new JobResults(new FolderPageBlobs(tempDir(), true), 600);
  const jobs = new JobStore(redis, keys, 600).keepResultsIn(results);
  const a = await accounts.create("t");
  await accounts.grant(a.id, 5, "test");
  const id = newJobId();
  const channel = `${keys.prefix}:reply:test`;
  await jobs.create({ id, accountId: a.id, endpoint: "web-search", queue: "live", params, createdAt: new Date().toISOString(), replyTo: channel }, 1);
  const sub = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379");
  try {
    await sub.subscribe(channel);
    const message = new Promise<string>((ok) => sub.on("message", (_c, m: string) => ok(m)));
    const result = bigResult();
    await jobs.finalize(id, a.id, completed(result));
    const record = recordFromFields(JSON.parse(await message) as string[]);
    expect(record.result).toEqual(result);
    expect(await redis.hget(keys.job(id), "result")).toBe("");
  } finally {
    sub.disconnect();
  }
});

test("a live job answered from the cache keeps its result in the store too; a replay's result is deleted", async () => {
  const dir = tempDir();
  const jobs = new JobStore(redis, keys, 600).keepResultsIn(new JobResults(new FolderPageBlobs(join(dir, "results"), true), 600));
  const a = await accounts.create("t");
  await accounts.grant(a.id, 5, "test");
  const id = newJobId();
  const job = { id, accountId: a.id, endpoint: "web-search" as const, queue: "live" as const, params, createdAt: new Date().toISOString(), cacheMaxAgeSeconds: 60 };
  const result = bigResult();
  const hit = { credits: 1, latencyMs: 3, result, upstreamUrl: null, completedAt: new Date().toISOString(), from: "job_source" };
  expect((await jobs.createCached(job, hit)).outcome).toBe("created");
  expect(await redis.hget(keys.job(id), "resultLoc")).toMatch(/\.json\.br$/);
  expect((await jobs.get(id))!).toMatchObject({ result, cachedFrom: "job_source", job: { status: "completed", cacheHit: true } });
  const claim = { key: `${keys.prefix}:idem:test`, body: "b", ttlSeconds: 60, staleJob: "" };
  const second = { ...job, id: newJobId() };
  expect((await jobs.createCached(second, hit, claim)).outcome).toBe("created");
  const third = { ...job, id: newJobId() };
  expect(await jobs.createCached(third, hit, claim)).toEqual({ outcome: "replay", replayOf: second.id });
  const files = readdirSync(join(dir, "results"), { recursive: true }).map(String).filter((f) => f.endsWith(".json.br"));
  expect(files.some((f) => f.includes(third.id))).toBe(false);
  expect(files.filter((f) => f.includes(second.id))).toHaveLength(1);
});

test("the archive's drain reads each record's result from the store, and leaves out one whose result is gone", async () => {
  const dir = tempDir();
  const results = new JobResults(new FolderPageBlobs(dir, true), 600);
  const jobs = new JobStore(redis, keys, 600).keepResultsIn(results);
  const kept = await pendingJob(jobs);
  const lost = await pendingJob(jobs);
  const result = bigResult();
  await jobs.finalize(kept.id, kept.accountId, completed(result));
  await jobs.finalize(lost.id, lost.accountId, completed(bigResult()));
  await results.blobs.delete([(await redis.hget(keys.job(lost.id), "resultLoc"))!]);
  // Only recordsOf is used here: it reads Redis and the result store, not PostgreSQL.
  const archive = new JobArchive(undefined as never, redis, keys, 60, 600).readResultsFrom(results);
  const records = await archive.recordsOf([kept.id, lost.id]);
  expect(records.map((r) => [r.job.id, r.result])).toEqual([[kept.id, result]]);
});
