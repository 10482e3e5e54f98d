/**
 * Kept pages on each page store, end to end on the real API, Redis, BullMQ workers and the replay
 * upstream: a folder (RAW_PAGES_DIR) and an S3-compatible bucket (RAW_PAGES_S3_BUCKET, s3rver on
 * loopback). The worker writes the page's bytes there and only where they are to Redis; GET
 * /v1/jobs/{id}/html and output=html read them back through the store. A page gone from the store
 * (or an API that does not see the workers' folder) is a 404 that says why; the workers' sweeper
 * deletes pages past their retention, one process of the fleet at a time. Completed results are kept
 * beside the pages the same way (JOB_RESULT_STORE=page-store, the default): every surface reads the
 * result the live answer gave, and a result the API cannot read is a 404 or 503 that says so.
 */
import { randomBytes } from "node:crypto";
import { createServer, type AddressInfo } from "node:net";
import { existsSync, mkdtempSync, rmSync, unlinkSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { brotliDecompressSync } from "node:zlib";
import { pino } from "pino";
import request from "supertest";
import { loadEnv } from "@serp/api/env";
import { createApiRuntime } from "@serp/api/runtime";
import { RawPageStore, openPageBlobs, rawPagesEnv, type PageBlobs } from "@serp/store";
import { RawPageSweeper } from "@serp/worker/raw-page-sweeper";
import { startS3, type LocalS3 } from "../support/s3.js";
import { fixturesAvailable, startStack, type Stack } from "../support/stack.js";

const d = fixturesAvailable ? describe : describe.skip;
const LIVE = 30_000;

let s3: LocalS3;
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(() => s3.close());

type Backend = "folder" | "s3";
/** The stack's settings for a backend: the stack's own temporary folder, or its own prefix in the bucket. */
const settingsFor = (backend: Backend): Record<string, string> => (backend === "s3" ? s3.env(`t${randomBytes(4).toString("hex")}/raw/`) : {});
/** The bytes the page store holds at a location, read as a second process would. */
async function storedAt(stack: Stack, settings: Record<string, string>, loc: string): Promise<Buffer | null> {
  const blobs: PageBlobs = openPageBlobs(rawPagesEnv.parse({ RAW_PAGES_DIR: stack.rawPagesDir, ...settings }));
  try {
    return await blobs.get(loc);
  } finally {
    blobs.close();
  }
}

/** The result the result store holds at a location, read as a second process would. */
async function resultAt(stack: Stack, settings: Record<string, string>, loc: string): Promise<unknown> {
  const blobs: PageBlobs = openPageBlobs(rawPagesEnv.parse({ RAW_PAGES_DIR: stack.rawPagesDir, ...settings }), "results");
  try {
    const stored = await blobs.get(loc);
    return stored && JSON.parse(brotliDecompressSync(stored).toString("utf8"));
  } finally {
    blobs.close();
  }
}

d.each<Backend>(["folder", "s3"])("pages kept on the %s backend", (backend) => {
  let stack: Stack;
  let settings: Record<string, string>;
  beforeAll(async () => {
    settings = settingsFor(backend);
    stack = await startStack({ env: { LIVE_DEADLINE_MS: "15000", ...settings } });
  }, LIVE);
  afterAll(() => stack.close());
  const api = () => request(stack.api.app);

  test("GET /v1/jobs/{id}/html and output=html serve the page the worker put in the store; Redis holds only where it is", async () => {
    const { auth, key } = await stack.account(5);
    const res = await api().post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: "coffee" }, queue: "live" });
    expect(res.body.job.status).toBe("completed");
    const id = res.body.job.id as string;
    const page = await api().get(`/v1/jobs/${id}/html`).set("Authorization", auth).set("Accept-Encoding", "identity");
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    expect(page.text.length).toBeGreaterThan(50_000);

    const record = await stack.redis.hgetall(`${stack.prefix}:raw:${id}`);
    expect(Object.keys(record).sort()).toEqual(["at", "bytes", "endpoint", "loc", "type"]);
    expect(Number(await stack.redis.memory("USAGE", `${stack.prefix}:raw:${id}`))).toBeLessThan(512);
    const stored = (await storedAt(stack, settings, record.loc!))!;
    expect(brotliDecompressSync(stored).toString("utf8")).toBe(page.text);
    if (backend === "folder") expect(existsSync(join(stack.rawPagesDir!, record.loc!))).toBe(true);

    const viaOutput = await api().get("/search").query({ q: "coffee", output: "html", no_cache: "true", api_key: key });
    expect(viaOutput.status).toBe(200);
    expect(viaOutput.headers["content-type"]).toMatch(/^text\/html/);
    expect(viaOutput.text).toMatch(/<html/i);
    const archived = await api().get(`/searches/${id}`).query({ output: "html", api_key: key });
    expect(archived.status).toBe(200);
    expect(archived.text).toBe(page.text);
  }, LIVE);

  test("a page gone from the store is a 404 that says so, not a 500", async () => {
    const { auth } = await stack.account(5);
    const res = await api().post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-news", params: { query: "schloss johannisberg" }, queue: "live" });
    const id = res.body.job.id as string;
    expect((await api().get(`/v1/jobs/${id}/html`).set("Authorization", auth)).status).toBe(200);
    const loc = (await stack.redis.hget(`${stack.prefix}:raw:${id}`, "loc"))!;
    // Deleted under the service's feet: by hand, or a lifecycle rule shorter than the retention.
    const blobs = openPageBlobs(rawPagesEnv.parse({ RAW_PAGES_DIR: stack.rawPagesDir, ...settings }));
    if (backend === "folder") unlinkSync(join(stack.rawPagesDir!, loc));
    else await blobs.sweep(Date.now() + 2 * 3_600_000);
    blobs.close();
    const gone = await api().get(`/v1/jobs/${id}/html`).set("Authorization", auth);
    expect(gone.status).toBe(404);
    expect(gone.body.error).toMatchObject({ code: "not_found", message: expect.stringMatching(new RegExp(`^The page of job ${id} is gone from the page store`)) });
  }, LIVE);

  test("a completed result is in the result store and the job record holds only where; GET /v1/jobs/{id} and /searches/{id}.json read the live answer's result", async () => {
    const { auth, key } = await stack.account(5);
    const res = await api().post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: "coffee" }, queue: "live" });
    expect(res.body.job.status).toBe("completed");
    const id = res.body.job.id as string;
    const record = await stack.redis.hgetall(`${stack.prefix}:job:${id}`);
    expect(record.result).toBe("");
    expect(record.resultLoc).toMatch(new RegExp(`^\\d{4}-\\d{2}-\\d{2}/\\d{2}/${id}\\.[0-9a-f]{12}\\.json\\.br$`));
    expect(Number(await stack.redis.memory("USAGE", `${stack.prefix}:job:${id}`))).toBeLessThan(4_096);
    expect(await resultAt(stack, settings, record.resultLoc!)).toEqual(res.body.result);
    if (backend === "folder") expect(existsSync(join(stack.rawPagesDir!, "results", record.resultLoc!))).toBe(true);

    const read = await api().get(`/v1/jobs/${id}`).set("Authorization", auth);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(res.body);
    const archived = await api().get(`/searches/${id}.json`).query({ api_key: key });
    expect(archived.status).toBe(200);
    const organic = (res.body.result as { organic_results: { title: string }[] }).organic_results;
    expect(organic.length).toBeGreaterThan(0);
    expect((archived.body.organic_results as { title: string }[]).map((r) => r.title)).toEqual(organic.map((r) => r.title));
  }, LIVE);

  test("a result gone from the store is a 404 that says so on GET /v1/jobs/{id} and /searches/{id}.json, never the job without its result", async () => {
    const { auth, key } = await stack.account(5);
    const res = await api().post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-news", params: { query: "schloss johannisberg" }, queue: "live" });
    const id = res.body.job.id as string;
    const loc = (await stack.redis.hget(`${stack.prefix}:job:${id}`, "resultLoc"))!;
    const blobs = openPageBlobs(rawPagesEnv.parse({ RAW_PAGES_DIR: stack.rawPagesDir, ...settings }), "results");
    await blobs.delete([loc]);
    blobs.close();
    const gone = await api().get(`/v1/jobs/${id}`).set("Authorization", auth);
    expect(gone.status).toBe(404);
    expect(gone.body.error).toMatchObject({ code: "not_found", message: expect.stringMatching(new RegExp(`^The result of job ${id} is gone from the result store, so it cannot be served`)) });
    const compat = await api().get(`/searches/${id}.json`).query({ api_key: key });
    expect(compat.status).toBe(404);
    expect(compat.body.error).toMatch(new RegExp(`The result of job ${id} is gone`));
    // The job's page is still served: its route reads the record without its result.
    expect((await api().get(`/v1/jobs/${id}/html`).set("Authorization", auth)).status).toBe(200);
  }, LIVE);
});

/** A second API on the stack's Redis and PostgreSQL, with page store settings of its own (another host's). */
async function otherApi(stack: Stack, pageSettings: Record<string, string>) {
  const env = loadEnv({ REDIS_URL: process.env.REDIS_URL, SERP_PREFIX: stack.prefix, LOG_LEVEL: "silent", ...(stack.databaseUrl ? { DATABASE_URL: stack.databaseUrl } : {}), ...pageSettings });
  return createApiRuntime(env, pino({ level: "silent" }));
}

d("an API whose bucket does not answer", () => {
  let stack: Stack;
  let settings: Record<string, string>;
  beforeAll(async () => {
    settings = settingsFor("s3");
    stack = await startStack({ env: settings, workerQueues: ["live"] });
  }, LIVE);
  afterAll(() => stack.close());

  test("answers 503 unavailable (try again), not a 404 or a 500", async () => {
    const { auth } = await stack.account(5);
    const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: "coffee" }, queue: "live" });
    const id = res.body.job.id as string;
    expect((await request(stack.api.app).get(`/v1/jobs/${id}/html`).set("Authorization", auth)).status).toBe(200);
    const closed = createServer();
    await new Promise<void>((ok) => closed.listen(0, "127.0.0.1", ok));
    const { port } = closed.address() as AddressInfo;
    await new Promise((ok) => closed.close(ok));
    const other = await otherApi(stack, { ...settings, RAW_PAGES_S3_ENDPOINT: `http://127.0.0.1:${port}` });
    try {
      const page = await request(other.app).get(`/v1/jobs/${id}/html`).set("Authorization", auth);
      expect(page.status).toBe(503);
      expect(page.body.error).toMatchObject({ code: "unavailable", message: "The page store is not answering; try again shortly" });
      const job = await request(other.app).get(`/v1/jobs/${id}`).set("Authorization", auth);
      expect(job.status).toBe(503);
      expect(job.headers["retry-after"]).toBe("2");
      expect(job.body.error).toMatchObject({ code: "unavailable", message: "The result store is not answering; try again shortly" });
    } finally {
      await other.closers.closeAll(10_000);
    }
  }, LIVE);
});

d("an API on another host than the workers, with a folder of its own", () => {
  let stack: Stack;
  const elsewhere = mkdtempSync(join(tmpdir(), "pages-elsewhere-"));
  beforeAll(async () => {
    stack = await startStack({ workerQueues: ["live"] });
  }, LIVE);
  afterAll(async () => {
    await stack.close();
    rmSync(elsewhere, { recursive: true, force: true });
  });

  test("answers a 404 naming the fix (share RAW_PAGES_DIR or use a bucket), while the workers' host serves the page", async () => {
    const { auth } = await stack.account(5);
    const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: "coffee" }, queue: "live" });
    const id = res.body.job.id as string;
    expect((await request(stack.api.app).get(`/v1/jobs/${id}/html`).set("Authorization", auth)).status).toBe(200);
    const other = await otherApi(stack, { RAW_PAGES_DIR: elsewhere });
    try {
      const page = await request(other.app).get(`/v1/jobs/${id}/html`).set("Authorization", auth);
      expect(page.status).toBe(404);
      expect(page.body.error.message).toBe(
        `The page of job ${id} is gone from the page store: the API and the workers must share RAW_PAGES_DIR, or keep pages in a bucket (RAW_PAGES_S3_BUCKET)`,
      );
      const job = await request(other.app).get(`/v1/jobs/${id}`).set("Authorization", auth);
      expect(job.status).toBe(404);
      expect(job.body.error.message).toBe(
        `The result of job ${id} is gone from the result store, so it cannot be served (the API and the workers must share RAW_PAGES_DIR, or keep results in a bucket: RAW_PAGES_S3_BUCKET)`,
      );
    } finally {
      await other.closers.closeAll(10_000);
    }
  }, LIVE);
});

d.each<Backend>(["folder", "s3"])("the sweeper of pages past their retention (%s)", (backend) => {
  let stack: Stack;
  let settings: Record<string, string>;
  beforeAll(async () => {
    settings = settingsFor(backend);
    stack = await startStack({ env: { RAW_HTML_RETENTION_SECONDS: "2", ...settings }, workerQueues: ["live"], rawPageSweep: { intervalMs: 300 } });
  }, LIVE);
  afterAll(() => stack.close());

  test("deletes a page from the store once its retention has run out, as Redis forgets its record", async () => {
    const { auth } = await stack.account(5);
    const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: "coffee" }, queue: "live" });
    const id = res.body.job.id as string;
    expect((await request(stack.api.app).get(`/v1/jobs/${id}/html`).set("Authorization", auth)).status).toBe(200);
    const loc = (await stack.redis.hget(`${stack.prefix}:raw:${id}`, "loc"))!;
    expect(await storedAt(stack, settings, loc)).not.toBeNull();
    // Swept a moment after its record expires (2 s of grace, and s3rver dates objects to the second), never before.
    const until = Date.now() + 15_000;
    let recordBeforeSwept: number | undefined;
    while (Date.now() < until) {
      // The record read first: a page found gone must have had its record gone a moment before.
      const record = await stack.redis.exists(`${stack.prefix}:raw:${id}`);
      if ((await storedAt(stack, settings, loc)) === null) {
        recordBeforeSwept = record;
        break;
      }
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(recordBeforeSwept).toBe(0);
    const gone = await request(stack.api.app).get(`/v1/jobs/${id}/html`).set("Authorization", auth);
    expect(gone.status).toBe(404);
    expect(gone.body.error.message).toMatch(/no longer kept/);
  }, LIVE);
});

d("the sweeper's lock", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ workerQueues: [] });
  }, LIVE);
  afterAll(() => stack.close());

  test("lets one process of the fleet sweep per interval", async () => {
    const keys = stack.api.keys;
    const pages = (dir: string) => new RawPageStore(stack.redis, keys, openPageBlobs(rawPagesEnv.parse({ RAW_PAGES_DIR: dir })), 1);
    const silent = pino({ level: "silent" });
    const a = new RawPageSweeper({ redis: stack.redis, keys, pages: pages(stack.rawPagesDir!), logger: silent }, { intervalMs: 60_000 });
    const b = new RawPageSweeper({ redis: stack.redis, keys, pages: pages(stack.rawPagesDir!), logger: silent }, { intervalMs: 60_000 });
    const store = pages(stack.rawPagesDir!);
    const keptAt = Date.now() - 5_000;
    await store.keep("job_sweptbylock", "web-search", { body: "<html>x</html>" }, keptAt);
    // As if written then (the folder's sweep goes by each file's time within the current hour).
    const path = join(stack.rawPagesDir!, (await stack.redis.hget(keys.rawPage("job_sweptbylock"), "loc"))!);
    utimesSync(path, new Date(keptAt), new Date(keptAt));
    expect(await a.sweepOnce()).toBe(1);
    expect(await b.sweepOnce()).toBeNull();
    expect(existsSync(path)).toBe(false);
  });
});
