/**
 * The result cache end to end (issue 16): the real API, Redis, BullMQ workers and the replay
 * upstream, whose request log tells how often the upstream was really asked. /search.json uses the
 * cache by default (`no_cache=true` fetches afresh); POST /v1/jobs only with `cacheMaxAgeSeconds`.
 * A hit is a completed job billed CACHE_HIT_CREDITS (1, or 0) and marked in the ledger; failures
 * are never cached; concurrent identical misses make one upstream request. Under CACHE_SCOPE=account
 * (the default) one account's searches never answer another's; under `global` they do.
 */
import request from "supertest";
import { buildOpenApiDocument } from "../../apps/api/src/openapi/document.js";
import { CACHE_MAX_AGE_LIMIT_SECONDS } from "@serp/shared";
import { cacheKeyOf } from "@serp/store";
import { fixturesAvailable, pollUntilFinal, startStack, type Stack } from "../support/stack.js";

const d = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) console.warn("cache: captured pages not found; set SERP_FIXTURES_DIR. Skipping.");

const LIVE = 30_000;

d("result cache", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { LIVE_DEADLINE_MS: "8000" }, workerQueues: ["live", "fast"] });
  }, LIVE);
  afterAll(() => stack.close());
  afterEach(() => stack.replay.clearFaults());

  const api = () => request(stack.api.app);
  /** Upstream requests the replay saw for this query. */
  const fetched = (q: string) => stack.replay.requests().filter((r) => r.query.q === q).length;
  const ledgerOf = async (accountId: string, jobId: string) => (await stack.api.accounts.ledger(accountId)).filter((e) => e.jobId === jobId);

  describe("GET /search.json", () => {
    test("miss, then hit: the same results from one upstream request; the hit is a completed job billed 1 and marked in the ledger", async () => {
      const acct = await stack.account(10);
      const q = "central park new york";
      const first = await api().get("/search.json").query({ q, api_key: acct.key });
      expect(first.status).toBe(200);
      expect(first.body.search_metadata.cached).toBe(false);
      expect(fetched(q)).toBe(1);

      const second = await api().get("/search.json").query({ q, api_key: acct.key });
      expect(second.status).toBe(200);
      expect(second.body.search_metadata).toMatchObject({ status: "Success", cached: true, web_url: first.body.search_metadata.web_url });
      expect(second.body.search_metadata.id).not.toBe(first.body.search_metadata.id);
      expect(second.body.organic_results).toEqual(first.body.organic_results);
      expect(second.body.organic_results.length).toBeGreaterThan(0);
      expect(fetched(q)).toBe(1);

      const hit = await api().get(`/v1/jobs/${second.body.search_metadata.id}`).set("Authorization", acct.auth);
      expect(hit.body.job).toMatchObject({ status: "completed", credits: 1, cacheHit: true, cacheMaxAgeSeconds: 3600, attempts: 0, error: null });
      expect(hit.body.job.latencyMs).toBeLessThan(1000);
      expect(hit.body.result.search_parameters).toMatchObject({ engine: "web_search", query: q });
      expect(await ledgerOf(acct.accountId, second.body.search_metadata.id)).toEqual([expect.objectContaining({ type: "charge", credits: 1, cacheHit: true })]);
      expect((await ledgerOf(acct.accountId, first.body.search_metadata.id))[0]).not.toHaveProperty("cacheHit");
      expect(await stack.api.accounts.get(acct.accountId)).toMatchObject({ balance: 8, reserved: 0 });
      // The archive shows the hit as it was answered.
      const archived = await api().get(`/searches/${second.body.search_metadata.id}.json`).query({ api_key: acct.key });
      expect(archived.body.search_metadata.cached).toBe(true);
    }, LIVE);

    test("the key holds the engine, the params and their defaults: another page, device or country is a miss; spelled defaults are a hit", async () => {
      const acct = await stack.account(20);
      const q = "best running shoes";
      const get = async (extra: Record<string, string>) => (await api().get("/search.json").query({ q, api_key: acct.key, ...extra })).body.search_metadata.cached;
      expect(await get({})).toBe(false);
      expect(await get({ gl: "us", hl: "en", device: "desktop" })).toBe(true);
      expect(await get({ start: "10" })).toBe(false);
      expect(await get({ device: "mobile" })).toBe(false);
      expect(await get({ gl: "de" })).toBe(false);
      expect(await get({ tbm: "nws" })).toBe(false);
      expect(await get({ start: "10" })).toBe(true);
      expect(fetched(q)).toBe(5);
    }, LIVE);

    test("no_cache=true fetches afresh (billed as a search) and refreshes the cache", async () => {
      const acct = await stack.account(10);
      const q = "van gogh paintings";
      await api().get("/search.json").query({ q, api_key: acct.key });
      const fresh = await api().get("/search.json").query({ q, no_cache: "true", api_key: acct.key });
      expect(fresh.status).toBe(200);
      expect(fresh.body.search_metadata.cached).toBe(false);
      expect(fetched(q)).toBe(2);
      const job = (await stack.api.jobs.get(fresh.body.search_metadata.id))!;
      expect(job.job).toMatchObject({ cacheMaxAgeSeconds: 0, cacheHit: false, credits: 1 });
      // Its result is the one now cached.
      const entry = await stack.redis.hget(`${stack.prefix}:cache:${cacheKeyOf(job.job.endpoint, job.job.params, acct.accountId)}`, "job");
      expect(entry).toBe(fresh.body.search_metadata.id);
      const after = await api().get("/search.json").query({ q, api_key: acct.key });
      expect(after.body.search_metadata.cached).toBe(true);
      expect(fetched(q)).toBe(2);
    }, LIVE);

    test.each([
      ["async=true with no_cache=true", { async: "true", no_cache: "true" }, "`async` and `no_cache` parameters can't be used together."],
      ["async=1 with no_cache=True", { async: "1", no_cache: "True" }, "`async` and `no_cache` parameters can't be used together."],
      ["no_cache=maybe", { no_cache: "maybe" }, "`no_cache` parameter must be true or false."],
    ])("%s is a 400, nothing run or billed", async (_what, query, error) => {
      const acct = await stack.account(5);
      const before = stack.replay.requests().length;
      const res = await api().get("/search.json").query({ q: "coffee", api_key: acct.key, ...query });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error });
      expect(stack.replay.requests().length).toBe(before);
      expect(await stack.api.accounts.get(acct.accountId)).toMatchObject({ balance: 5, reserved: 0 });
    });

    test("async=true alone uses the cache: the archive reads the cached result", async () => {
      const acct = await stack.account(10);
      const q = "why is the sky blue";
      await api().get("/search.json").query({ q, api_key: acct.key });
      const queued = await api().get("/search.json").query({ q, async: "true", api_key: acct.key });
      expect(queued.status).toBe(200);
      const id = queued.body.search_metadata.id;
      const done = await pollUntilFinal(async () => {
        const r = await api().get(`/v1/jobs/${id}`).set("Authorization", acct.auth);
        return { status: r.status, body: r.body };
      });
      expect(done.body.job).toMatchObject({ status: "completed", cacheHit: true, credits: 1 });
      expect(fetched(q)).toBe(1);
    }, LIVE);

    test("failures are never cached: after a 502 the same search is fetched again", async () => {
      const acct = await stack.account(10);
      const q = "quantum field theory";
      stack.replay.setFaults({ mode: "server-error" });
      const failed = await api().get("/search.json").query({ q, api_key: acct.key });
      expect(failed.status).toBe(502);
      stack.replay.clearFaults();
      const tried = fetched(q);
      expect(tried).toBeGreaterThan(0);
      const job = (await stack.api.jobs.get((await stack.api.accounts.ledger(acct.accountId)).at(-1)!.jobId!))!;
      expect(await stack.redis.exists(`${stack.prefix}:cache:${cacheKeyOf(job.job.endpoint, job.job.params, acct.accountId)}`)).toBe(0);
      const again = await api().get("/search.json").query({ q, api_key: acct.key });
      expect(again.status).toBe(200);
      expect(again.body.search_metadata.cached).toBe(false);
      expect(fetched(q)).toBe(tried + 1);
    }, LIVE);

    test("the page layout is part of the search: a light search is never answered from a full one's entry, and each entry keeps its layout", async () => {
      const acct = await stack.account(10);
      const search = (engine: string, extra: Record<string, string> = {}) => api().get("/search.json").query({ engine, q: "hotels nyc", api_key: acct.key, ...extra });
      const full = await search("google", { no_cache: "true" });
      expect(full.body.search_metadata).toMatchObject({ cached: false, layout: "full" });
      const light = await search("google_light");
      expect(light.body.search_metadata).toMatchObject({ cached: false, layout: "light" });
      expect((await search("google_light")).body.search_metadata).toMatchObject({ cached: true, layout: "light" });
      expect((await search("google")).body.search_metadata).toMatchObject({ cached: true, layout: "full" });
      // The job's default layout and an explicit `full` are one search; `light` and `any` are others.
      const params = { query: "x", country: "us", language: "en", page: 1, device: "desktop" } as const;
      expect(cacheKeyOf("web-search", { ...params, layout: "full" }, null)).toBe(cacheKeyOf("web-search", { ...params, layout: "full" }, null));
      expect(new Set(["full", "light", "any"].map((layout) => cacheKeyOf("web-search", { ...params, layout: layout as "full" }, null))).size).toBe(3);
    }, LIVE);

    test("concurrent identical misses fetch once: the others wait for that fetch and are answered from the cache", async () => {
      const acct = await stack.account(20);
      const q = "hatsune miku";
      // A slow upstream, so all six are in flight together.
      stack.replay.setFaults({ latencyMs: 600 });
      const all = await Promise.all(Array.from({ length: 6 }, () => api().get("/search.json").query({ q, api_key: acct.key })));
      expect(all.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
      expect(fetched(q)).toBe(1);
      const cached = all.map((r) => r.body.search_metadata.cached).sort();
      expect(cached).toEqual([false, true, true, true, true, true]);
      for (const r of all) expect(r.body.organic_results).toEqual(all[0]!.body.organic_results);
      const charges = (await stack.api.accounts.ledger(acct.accountId)).filter((e) => e.type === "charge");
      expect(charges).toHaveLength(6);
      expect(charges.filter((e) => e.cacheHit)).toHaveLength(5);
      expect(await stack.api.accounts.get(acct.accountId)).toMatchObject({ balance: 14, reserved: 0 });
    }, LIVE);

    test("when the one fetch fails, a waiting miss fetches in its place; nothing failed is cached", async () => {
      const acct = await stack.account(20);
      const q = "tesla manifesto";
      // The first job's first attempt fails on each of its three rungs (slowly, so the others are waiting by then).
      stack.replay.setFaults({ mode: "server-error", latencyMs: 400, times: 3 });
      const all = await Promise.all(Array.from({ length: 3 }, () => api().get("/search.json").query({ q, api_key: acct.key })));
      expect(all.map((r) => r.status)).toEqual([200, 200, 200]);
      // Three failed requests, then one fetch by a waiter that took the search over; the rest read its result.
      expect(fetched(q)).toBe(4);
      expect(all.map((r) => r.body.search_metadata.cached).sort()).toEqual([false, true, true]);
      for (const r of all) expect(r.body.organic_results).toEqual(all[0]!.body.organic_results);
      const later = await api().get("/search.json").query({ q, api_key: acct.key });
      expect(later.body.search_metadata.cached).toBe(true);
      expect(fetched(q)).toBe(4);
    }, LIVE);
  });

  describe("POST /v1/jobs cacheMaxAgeSeconds", () => {
    const post = (auth: string, body: object) => api().post("/v1/jobs").set("Authorization", auth).send(body);

    test("without it a job never reads the cache and says nothing about it", async () => {
      const acct = await stack.account(10);
      const q = "klimt peintures";
      await api().get("/search.json").query({ q, api_key: acct.key });
      const res = await post(acct.auth, { endpoint: "web-search", params: { query: q }, queue: "live" });
      expect(res.status).toBe(200);
      expect(res.body.job).not.toHaveProperty("cacheHit");
      expect(res.body.job).not.toHaveProperty("cacheMaxAgeSeconds");
      expect(fetched(q)).toBe(2);
    }, LIVE);

    test("live: answered from the cache at once; a result older than the max age is a miss", async () => {
      const acct = await stack.account(10);
      const q = "louis vuitton bags";
      const first = await post(acct.auth, { endpoint: "web-search", params: { query: q }, queue: "live", cacheMaxAgeSeconds: 600 });
      expect(first.status).toBe(200);
      expect(first.body.job).toMatchObject({ status: "completed", cacheHit: false, cacheMaxAgeSeconds: 600, credits: 1 });
      // Spelled-out defaults and extra spaces are the same search.
      const hit = await post(acct.auth, { endpoint: "web-search", params: { query: `  ${q.replace(" ", "   ")} `, country: "us", page: 1 }, queue: "live", cacheMaxAgeSeconds: 600 });
      expect(hit.status).toBe(200);
      expect(hit.body.job).toMatchObject({ status: "completed", cacheHit: true, credits: 1 });
      expect(hit.body.result.organic_results).toEqual(first.body.result.organic_results);
      expect(fetched(q)).toBe(1);

      // Age the entry by 10 minutes: a 5-minute max age misses, a 1-hour one still hits.
      const key = `${stack.prefix}:cache:${cacheKeyOf("web-search", first.body.job.params, acct.accountId)}`;
      await stack.redis.hset(key, "at", String(Date.now() - 600_000));
      const young = await post(acct.auth, { endpoint: "web-search", params: { query: q }, queue: "live", cacheMaxAgeSeconds: 300 });
      expect(young.body.job).toMatchObject({ status: "completed", cacheHit: false });
      expect(fetched(q)).toBe(2);
      await stack.redis.hset(key, "at", String(Date.now() - 600_000));
      const old = await post(acct.auth, { endpoint: "web-search", params: { query: q }, queue: "live", cacheMaxAgeSeconds: 3600 });
      expect(old.body.job).toMatchObject({ status: "completed", cacheHit: true });
      expect(fetched(q)).toBe(2);
    }, LIVE);

    test("fast: queued as usual (202), answered from the cache by the worker", async () => {
      const acct = await stack.account(10);
      const q = "plombier paris";
      await post(acct.auth, { endpoint: "web-search", params: { query: q }, queue: "live", cacheMaxAgeSeconds: 600 });
      const res = await post(acct.auth, { endpoint: "web-search", params: { query: q }, queue: "fast", cacheMaxAgeSeconds: 600 });
      expect(res.status).toBe(202);
      expect(res.body.job).toMatchObject({ status: "pending", cacheHit: false, cacheMaxAgeSeconds: 600 });
      const done = await pollUntilFinal(async () => {
        const r = await api().get(`/v1/jobs/${res.body.job.id}`).set("Authorization", acct.auth);
        return { status: r.status, body: r.body };
      });
      expect(done.body.job).toMatchObject({ status: "completed", cacheHit: true, credits: 1 });
      expect(await ledgerOf(acct.accountId, res.body.job.id)).toEqual([expect.objectContaining({ type: "charge", credits: 1, cacheHit: true })]);
      expect(fetched(q)).toBe(1);
    }, LIVE);

    test.each([
      ["a string", "3600"],
      ["negative", -1],
      ["a fraction", 1.5],
      ["above the limit", CACHE_MAX_AGE_LIMIT_SECONDS + 1],
      ["null", null],
    ])("%s is a 400 naming cacheMaxAgeSeconds", async (_what, value) => {
      const acct = await stack.account(5);
      const res = await post(acct.auth, { endpoint: "web-search", params: { query: "coffee" }, queue: "live", cacheMaxAgeSeconds: value });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: "invalid_request" });
      expect(res.body.error.details).toEqual([
        { field: "cacheMaxAgeSeconds", message: `must be an integer number of seconds from 0 to ${CACHE_MAX_AGE_LIMIT_SECONDS}` },
      ]);
      expect(await stack.api.accounts.get(acct.accountId)).toMatchObject({ balance: 5, reserved: 0 });
    });

    test("a hit needs its price available: 402 without credits", async () => {
      const acct = await stack.account(1);
      const q = "rudsak";
      await post(acct.auth, { endpoint: "web-search", params: { query: q }, queue: "live", cacheMaxAgeSeconds: 600 });
      const res = await post(acct.auth, { endpoint: "web-search", params: { query: q }, queue: "live", cacheMaxAgeSeconds: 600 });
      expect(res.status).toBe(402);
      expect(await stack.api.accounts.get(acct.accountId)).toMatchObject({ balance: 0, reserved: 0 });
    }, LIVE);

    test("is documented in the OpenAPI request bodies", () => {
      const doc = buildOpenApiDocument() as unknown as { components: { schemas: Record<string, { properties?: Record<string, { description?: string; minimum?: number; maximum?: number }> }> } };
      const prop = doc.components.schemas.WebSearchJobRequest!.properties!.cacheMaxAgeSeconds!;
      expect(prop).toMatchObject({ minimum: 0, maximum: CACHE_MAX_AGE_LIMIT_SECONDS });
      expect(prop.description).toMatch(/cache/);
      const job = doc.components.schemas.Job!.properties!;
      expect(job.cacheHit?.description).toMatch(/cache/);
    });
  });
});

d("CACHE_SCOPE=account (the default): the cache is no oracle across accounts", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { LIVE_DEADLINE_MS: "8000" }, workerQueues: ["live", "fast"] });
  }, LIVE);
  afterAll(() => stack.close());
  const api = () => request(stack.api.app);
  const fetched = (q: string) => stack.replay.requests().filter((r) => r.query.q === q).length;

  test("account B does not hit A's entry (API and worker paths), and its own fetch answers B next time, not A", async () => {
    const [a, b] = [await stack.account(10), await stack.account(10)];
    const q = "divorce lawyer near me";
    expect((await api().get("/search.json").query({ q, api_key: a.key })).body.search_metadata.cached).toBe(false);
    expect((await api().get("/search.json").query({ q, api_key: a.key })).body.search_metadata.cached).toBe(true);
    expect(fetched(q)).toBe(1);

    const other = await api().get("/search.json").query({ q, api_key: b.key });
    expect(other.status).toBe(200);
    expect(other.body.search_metadata.cached).toBe(false);
    expect(fetched(q)).toBe(2);
    // The worker's look-up is scoped too: a fast job of B's is answered from B's own entry, never A's.
    await stack.redis.del(`${stack.prefix}:cache:${cacheKeyOf("web-search", (await stack.api.jobs.get(other.body.search_metadata.id))!.job.params, b.accountId)}`);
    const queued = await api().post("/v1/jobs").set("Authorization", b.auth).send({ endpoint: "web-search", params: { query: q }, queue: "fast", cacheMaxAgeSeconds: 600 });
    expect(queued.status).toBe(202);
    const done = await pollUntilFinal(async () => {
      const r = await api().get(`/v1/jobs/${queued.body.job.id}`).set("Authorization", b.auth);
      return { status: r.status, body: r.body };
    });
    expect(done.body.job).toMatchObject({ status: "completed", cacheHit: false, credits: 1 });
    expect(fetched(q)).toBe(3);
    expect((await api().get("/search.json").query({ q, api_key: b.key })).body.search_metadata.cached).toBe(true);
    expect(fetched(q)).toBe(3);
  }, LIVE);
});

d("CACHE_SCOPE=global", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { LIVE_DEADLINE_MS: "8000", CACHE_SCOPE: "global" }, workerQueues: ["live", "fast"] });
  }, LIVE);
  afterAll(() => stack.close());
  const api = () => request(stack.api.app);
  const fetched = (q: string) => stack.replay.requests().filter((r) => r.query.q === q).length;

  test("account B hits A's entry, in the API and in the worker: one upstream request for both", async () => {
    const [a, b] = [await stack.account(10), await stack.account(10)];
    const q = "divorce lawyer near me";
    expect((await api().get("/search.json").query({ q, api_key: a.key })).body.search_metadata.cached).toBe(false);
    const other = await api().get("/search.json").query({ q, api_key: b.key });
    expect(other.body.search_metadata.cached).toBe(true);
    const queued = await api().post("/v1/jobs").set("Authorization", b.auth).send({ endpoint: "web-search", params: { query: q }, queue: "fast", cacheMaxAgeSeconds: 600 });
    const done = await pollUntilFinal(async () => {
      const r = await api().get(`/v1/jobs/${queued.body.job.id}`).set("Authorization", b.auth);
      return { status: r.status, body: r.body };
    });
    expect(done.body.job).toMatchObject({ status: "completed", cacheHit: true });
    expect(fetched(q)).toBe(1);
  }, LIVE);

  test("is refused when it names neither scope", async () => {
    const { loadEnv } = await import("@serp/api/env");
    expect(() => loadEnv({ CACHE_SCOPE: "everyone" })).toThrow(/CACHE_SCOPE/);
  });
});

d("result cache with CACHE_HIT_CREDITS=0", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ env: { LIVE_DEADLINE_MS: "8000", CACHE_HIT_CREDITS: "0" }, workerQueues: ["live", "fast"] });
  }, LIVE);
  afterAll(() => stack.close());

  test("a hit is free, in the API and in the worker, and still written to the ledger as a cache hit", async () => {
    const acct = await stack.account(2);
    const q = "coffee";
    const first = await request(stack.api.app).get("/search.json").query({ q, api_key: acct.key });
    expect(first.status).toBe(200);
    const hit = await request(stack.api.app).get("/search.json").query({ q, api_key: acct.key });
    expect(hit.status).toBe(200);
    expect(hit.body.search_metadata.cached).toBe(true);
    const queued = await request(stack.api.app).post("/v1/jobs").set("Authorization", acct.auth)
      .send({ endpoint: "web-search", params: { query: q }, queue: "fast", cacheMaxAgeSeconds: 600 });
    const done = await pollUntilFinal(async () => {
      const r = await request(stack.api.app).get(`/v1/jobs/${queued.body.job.id}`).set("Authorization", acct.auth);
      return { status: r.status, body: r.body };
    });
    expect(done.body.job).toMatchObject({ status: "completed", cacheHit: true, credits: 0 });
    const ledger = await stack.api.accounts.ledger(acct.accountId);
    expect(ledger.filter((e) => e.jobId === hit.body.search_metadata.id)).toEqual([expect.objectContaining({ type: "charge", credits: 0, cacheHit: true })]);
    expect(ledger.filter((e) => e.jobId === queued.body.job.id)).toEqual([expect.objectContaining({ type: "charge", credits: 0, cacheHit: true })]);
    // Only the miss was billed.
    expect(await stack.api.accounts.get(acct.accountId)).toMatchObject({ balance: 1, reserved: 0 });
  }, LIVE);
});
