/**
 * GET /search.json and /search end to end: the real API, Redis, BullMQ workers and the replay
 * upstream. Parameter rules and errors, each engine's block, tbm switching, start → page, hl and
 * location handling, billing, links from PUBLIC_BASE_URL, and the routes around the search
 * (archive, locations, account).
 */
import type { RequestHandler } from "express";
import request from "supertest";
import { ApiError } from "@serp/shared";
import { createApp } from "../../apps/api/src/app.js";
import { fixturesAvailable, geotargetsAvailable, startStack, type Stack } from "../support/stack.js";

const d = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) console.warn("compat: captured pages not found; set SERP_FIXTURES_DIR. Skipping.");

const BASE = "https://serp.example.test/api";
const REFERENCE_TIME = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/;
/** Generous per-test limit: each live search waits for a worker, and CI machines may be busy. */
const LIVE = 30_000;

d("GET /search.json", () => {
  let stack: Stack;
  let key: string;
  beforeAll(async () => {
    stack = await startStack({ env: { LIVE_DEADLINE_MS: "8000", PUBLIC_BASE_URL: `${BASE}/` }, withGeotargets: true });
    ({ key } = await stack.account(1000));
  }, LIVE);
  afterAll(() => stack.close());
  afterEach(() => stack.replay.clearFaults());

  const api = () => request(stack.api.app);
  const search = (query: Record<string, string>) => api().get("/search.json").query({ api_key: key, ...query });
  const balance = async (accountId: string) => (await stack.api.accounts.get(accountId))!.balance;
  /** The stored job behind a response, as the job endpoints show it. */
  const jobOf = async (id: string) => (await stack.api.jobs.get(id))!;

  test("HEAD runs no search and bills nothing", async () => {
    const { key: own, accountId } = await stack.account(5);
    for (const path of ["/search.json", "/search"]) {
      const res = await api().head(path).query({ api_key: own, q: "coffee" });
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe("GET");
    }
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 5, reserved: 0 });
    expect(await stack.api.accounts.ledger(accountId)).toHaveLength(1);
  });

  describe("parameter rules", () => {
    test.each([
      ["missing q", {}, "Missing query `q` parameter."],
      ["q=\"\"", { q: "" }, "Missing query `q` parameter."],
      ["q over 500 characters", { q: "a".repeat(501) }, "`q` parameter must be at most 500 characters."],
      ["q of only control characters", { q: " \u0000\u0001\t" }, "`q` parameter must not contain control characters."],
      ["unsupported engine", { q: "coffee", engine: "yahoo" }, "Unsupported `yahoo` search engine. Supported engines: web, web_light, web_shopping, web_news, web_images, web_local, web_autocomplete, google, google_light, google_news, google_images, google_shopping, google_local, google_autocomplete, web_product, google_product."],
      ["unsupported device", { q: "coffee", device: "tablet" }, "Unsupported `tablet` device."],
      ["unsupported gl", { q: "coffee", gl: "zz" }, "Unsupported `zz` country - gl parameter."],
      ["unsupported hl", { q: "coffee", hl: "e" }, "Unsupported `e` interface language - hl parameter."],
      ["start off the step", { q: "coffee", start: "15" }, "`start` parameter must be a multiple of 10 from 0 to 90 for engine `web`."],
      ["start out of range", { q: "coffee", start: "181" }, "`start` parameter must be an integer from 0 to 180."],
      ["local start off the step", { q: "coffee", engine: "web_local", start: "50" }, "`start` parameter must be a multiple of 20 from 0 to 180 for engine `web_local`."],
      ["unsupported tbm", { q: "coffee", tbm: "pts" }, "Unsupported `pts` value - tbm parameter (use nws (news), isch (images), shop (shopping) or lcl (local))."],
      ["unknown location", { q: "coffee", location: "Zzzyx Nowhere Land" }, "Unsupported `Zzzyx Nowhere Land` location - location parameter."],
      ["location with uule", { q: "coffee", location: "Austin, Texas", uule: "w+CAIQICIaQXVzdGluLFRleGFzLFVuaXRlZCBTdGF0ZXM" }, "`location` and `uule` parameters can't be used together."],
      ["malformed uule", { q: "coffee", uule: "x" }, "Unsupported `x` value - uule parameter."],
    ])("400 for %s, body exactly {error}, nothing run or billed", async (_what, query, message) => {
      const acct = await stack.account(5);
      const res = await api().get("/search.json").query({ api_key: acct.key, ...query });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: message });
      expect(await stack.api.accounts.get(acct.accountId)).toMatchObject({ balance: 5, reserved: 0 });
      expect(await stack.api.accounts.ledger(acct.accountId)).toEqual([expect.objectContaining({ type: "grant" })]);
    }, LIVE);

    test("a repeated parameter is a 400, never a 500", async () => {
      const res = await api().get(`/search.json?q=a&q=b&api_key=${key}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: "`q` parameter must be given once." });
    }, LIVE);

    test("what real clients add (/search, output, source, num, domain, safe, no_cache, async) is accepted and ignored", async () => {
      const res = await api().get(
        `/search?engine=web&q=coffee&output=json&source=nodejs%4020.0.0%2Cserpapi%402.2.1&num=100&google_domain=google.com&safe=active&no_cache=true&async=false&api_key=${key}`,
      );
      expect(res.status).toBe(200);
      expect(res.body.search_parameters).toEqual({ engine: "web", q: "coffee", hl: "en", gl: "us", device: "desktop" });
      expect(res.body.organic_results.length).toBeGreaterThan(0);
    }, LIVE);

    test.each([
      ["%20", "central%20park%20new%20york"],
      ["+", "central+park+new+york"],
    ])("spaces sent as %s reach the job as spaces", async (_how, encoded) => {
      const res = await api().get(`/search?q=${encoded}&api_key=${key}`);
      expect(res.status).toBe(200);
      expect(res.body.search_parameters.q).toBe("central park new york");
      expect((await jobOf(res.body.search_metadata.id)).job.params.query).toBe("central park new york");
    }, LIVE);

    test("hl=en-GB searches in en and echoes en-GB", async () => {
      const res = await search({ q: "coffee", hl: "en-GB" });
      expect(res.status).toBe(200);
      expect(res.body.search_parameters.hl).toBe("en-GB");
      expect((await jobOf(res.body.search_metadata.id)).job.params.language).toBe("en");
      expect(res.body.search_metadata.web_url).toContain("hl=en");
    }, LIVE);

    test.each([
      ["web", "20", 3, "20"],
      ["web_news", "10", 2, "10"],
      ["web_local", "40", 3, "40"],
    ])("engine %s start=%s runs page %d and asks the upstream for start=%s", async (engine, start, page, upstreamStart) => {
      const q = engine === "web_news" ? "schloss johannisberg" : "coffee";
      const res = await search({ engine, q, start });
      expect(res.status).toBe(200);
      expect(res.body.search_parameters.start).toBe(Number(start));
      expect(res.body.search_information.page_number).toBe(page);
      const record = await jobOf(res.body.search_metadata.id);
      expect(record.job.params.page).toBe(page);
      expect(new URL(record.upstreamUrl!).searchParams.get("start")).toBe(upstreamStart);
    }, LIVE);

    test("device=mobile runs a mobile web search", async () => {
      const res = await search({ q: "coffee", device: "mobile" });
      expect(res.status).toBe(200);
      expect(res.body.search_parameters.device).toBe("mobile");
      expect((await jobOf(res.body.search_metadata.id)).job.params.device).toBe("mobile");
    }, LIVE);

    test("location without a country gets the gl country; without gl the location's country is used", async () => {
      const a = await search({ q: "coffee", location: "Austin, Texas" });
      expect(a.status).toBe(200);
      expect(a.body.search_parameters).toMatchObject({ location_requested: "Austin, Texas", location_used: "Austin,Texas,United States", gl: "us" });
      const url = new URL(a.body.search_metadata.web_url);
      expect(url.searchParams.get("uule")).toBe("w+CAIQICIaQXVzdGluLFRleGFzLFVuaXRlZCBTdGF0ZXM");
      expect((await jobOf(a.body.search_metadata.id)).job.params).toMatchObject({ location: "Austin,Texas,United States", country: "us" });

      const t = await search({ q: "coffee", location: "Toronto, Ontario, Canada" });
      expect(t.body.search_parameters).toMatchObject({ location_used: "Toronto,Ontario,Canada", gl: "ca" });
      expect((await jobOf(t.body.search_metadata.id)).job.params.country).toBe("ca");

      const l = await search({ q: "coffee", location: "London, England", gl: "uk" });
      expect(l.body.search_parameters).toMatchObject({ location_used: "London,England,United Kingdom", gl: "uk" });
      expect((await jobOf(l.body.search_metadata.id)).job.params.country).toBe("gb");
    }, LIVE);
  });

  describe("engines", () => {
    test.each([
      // engine, q, block, state key
      ["web", "coffee", "organic_results", "organic_results_state"],
      ["web_news", "schloss johannisberg", "news_results", "news_results_state"],
      ["web_images", "hatsune miku", "images_results", "images_results_state"],
      ["web_shopping", "889894929969", "shopping_results", "shopping_results_state"],
      ["web_autocomplete", "cheesecake", "suggestions", "autocomplete_results_state"],
      ["web_local", "coffee", "local_results", "local_results_state"],
    ])("engine %s (q=%s) returns %s", async (engine, q, block, stateKey) => {
      const res = await search({ engine, q });
      expect(res.status).toBe(200);
      expect(res.body).not.toHaveProperty("error");
      expect(Array.isArray(res.body[block])).toBe(true);
      expect(res.body[block].length).toBeGreaterThan(0);
      expect(res.body.search_parameters).toMatchObject({ engine, q });
      expect(res.body.search_information[stateKey]).toBe("Results for exact spelling");
      expect(res.body.search_metadata).toMatchObject({ status: "Success", web_url: expect.stringContaining(stack.replay.url) });
      if (engine !== "web") expect(res.body.search_metadata[`${engine}_url`]).toBe(res.body.search_metadata.web_url);
      for (const k of ["api_key", "output", "source"]) expect(res.body.search_parameters).not.toHaveProperty(k);
    }, LIVE);

    test("engine web carries the page's blocks: organic, local pack {places}, related questions, knowledge graph, search information", async () => {
      const res = await search({ q: "coffee" });
      const b = res.body;
      expect(b.organic_results[0]).toMatchObject({ position: 1, title: expect.any(String), link: expect.stringMatching(/^https?:/) });
      expect(b.local_results.places.length).toBeGreaterThan(0);
      expect(b.related_questions.length).toBeGreaterThan(0);
      expect(b.knowledge_graph.title).toEqual(expect.any(String));
      expect(b.search_information).toMatchObject({ organic_results_state: "Results for exact spelling", query_displayed: "coffee" });
      expect(b).not.toHaveProperty("search_information.page_number");
      // Top-level order of the reference API.
      expect(Object.keys(b).slice(0, 3)).toEqual(["search_metadata", "search_parameters", "search_information"]);
    }, LIVE);

    test("web_local answers local_results as an array of SPEC §2.5 items", async () => {
      const res = await search({ engine: "web_local", q: "coffee" });
      expect(res.body.local_results[0]).toMatchObject({ position: 1, title: expect.any(String) });
      expect(res.body.serpapi_pagination.next).toBe(`${BASE}/search.json?engine=web_local&gl=us&hl=en&q=coffee&start=20`);
    }, LIVE);

    test.each([
      ["nws", "schloss johannisberg", "news_results", "web-news"],
      ["isch", "hatsune miku", "images_results", "web-images"],
      ["shop", "889894929969", "shopping_results", "web-shopping-search"],
      ["lcl", "coffee", "local_results", "web-local"],
    ])("engine web with tbm=%s (q=%s) answers %s from a %s job", async (tbm, q, block, endpoint) => {
      const res = await search({ q, tbm });
      expect(res.status).toBe(200);
      expect(res.body[block].length).toBeGreaterThan(0);
      expect(res.body).not.toHaveProperty("organic_results");
      expect(res.body.search_parameters).toMatchObject({ engine: "web", tbm, device: "desktop" });
      expect((await jobOf(res.body.search_metadata.id)).job.endpoint).toBe(endpoint);
    }, LIVE);
  });

  describe("envelope and links", () => {
    test("search_metadata: job id, Success, json_endpoint on PUBLIC_BASE_URL, reference times, web_url, total_time_taken", async () => {
      const res = await search({ q: "coffee" });
      const meta = res.body.search_metadata;
      expect(meta.id).toMatch(/^job_[0-9A-Z]{26}$/);
      expect(meta).toMatchObject({
        status: "Success",
        json_endpoint: `${BASE}/searches/${meta.id}.json`,
        created_at: expect.stringMatching(REFERENCE_TIME),
        processed_at: expect.stringMatching(REFERENCE_TIME),
        total_time_taken: expect.any(Number),
      });
      const record = await jobOf(meta.id);
      expect(meta.web_url).toBe(record.upstreamUrl);
      expect(record.job).toMatchObject({ endpoint: "web-search", queue: "live", status: "completed", credits: 1 });
    }, LIVE);

    test("pagination links point at PUBLIC_BASE_URL, sorted, + for spaces, never the key", async () => {
      const res = await api()
        .get("/search")
        .set("Host", "serpapi.com:443")
        .query({ q: "central park new york", api_key: key, location: "Austin, Texas", start: "10" });
      expect(res.status).toBe(200);
      const next = `${BASE}/search.json?device=desktop&engine=web&gl=us&hl=en&location=Austin%2C+Texas&q=central+park+new+york&start=20`;
      const previous = `${BASE}/search.json?device=desktop&engine=web&gl=us&hl=en&location=Austin%2C+Texas&q=central+park+new+york`;
      expect(res.body.serpapi_pagination).toMatchObject({ current: 2, next_link: next, next, previous_link: previous, previous });
      expect(res.body.pagination).toMatchObject({ current: 2, next, previous });
      expect(Object.keys(res.body.serpapi_pagination.other_pages)).toEqual(["1", "3", "4", "5", "6", "7", "8", "9", "10"]);
      const text = JSON.stringify(res.body);
      expect(text).not.toContain(key);
      expect(text).not.toContain("api_key");
      expect(text).not.toContain("serpapi.com");
    }, LIVE);

    test("following serpapi_pagination.next (with the key added) gives the next page", async () => {
      const first = await search({ q: "coffee" });
      const next = new URL(first.body.serpapi_pagination.next);
      const res = await api().get(`/search.json${next.search}&api_key=${key}`);
      expect(res.status).toBe(200);
      expect(res.body.search_parameters.start).toBe(10);
      expect(res.body.serpapi_pagination.current).toBe(2);
    }, LIVE);
  });

  describe("errors and billing", () => {
    test("a successful search costs 1 credit, written to the ledger with its job id", async () => {
      const acct = await stack.account(3);
      const res = await api().get("/search.json").query({ q: "coffee" }).set("Authorization", acct.auth);
      expect(res.status).toBe(200);
      expect(await balance(acct.accountId)).toBe(2);
      expect(await stack.api.accounts.ledger(acct.accountId)).toContainEqual(
        expect.objectContaining({ type: "charge", credits: 1, jobId: res.body.search_metadata.id }),
      );
    }, LIVE);

    test("no results: 200, envelope, Fully empty and the reference API's error text; billed as a completed search", async () => {
      const acct = await stack.account(3);
      const res = await api().get("/search.json").query({ q: "no results", api_key: acct.key });
      expect(res.status).toBe(200);
      expect(res.body.error).toBe("Web hasn't returned any results for this query.");
      expect(res.body.search_metadata.status).toBe("Success");
      expect(res.body.search_information.organic_results_state).toBe("Fully empty");
      expect(res.body).not.toHaveProperty("serpapi_pagination");
      expect(await balance(acct.accountId)).toBe(2);
    }, LIVE);

    test("502 {error} when the upstream fails every attempt, and the search is free", async () => {
      const acct = await stack.account(3);
      stack.replay.setFaults({ mode: "server-error" });
      // no_cache: an earlier test's result would answer it from the result cache (test/compat/cache.test.ts).
      const res = await api().get("/search.json").query({ q: "coffee", no_cache: "true", api_key: acct.key });
      expect(res.status).toBe(502);
      expect(res.body).toEqual({ error: "upstream returned an error" });
      expect(await stack.api.accounts.get(acct.accountId)).toMatchObject({ balance: 3, reserved: 0 });
      expect(await stack.api.accounts.ledger(acct.accountId)).toContainEqual(expect.objectContaining({ type: "refund", credits: 0 }));
    }, LIVE);

    test("502 carries the job's own error (blocked upstream)", async () => {
      stack.replay.setFaults({ mode: "captcha" });
      const res = await search({ q: "coffee", no_cache: "true" });
      expect(res.status).toBe(502);
      expect(res.body).toEqual({ error: "upstream blocked the request" });
    }, LIVE);

    test("402 {error} for an account with no credits", async () => {
      const acct = await stack.account(0);
      const res = await api().get("/search.json").query({ q: "coffee", api_key: acct.key });
      expect(res.status).toBe(402);
      expect(res.body).toEqual({ error: expect.any(String) });
    }, LIVE);

    test.each([
      ["no key at all", {}, {}],
      ["an unknown api_key", { api_key: "sk_live_unknownunknownunknownunknown1" }, {}],
      ["a malformed api_key", { api_key: "nope" }, {}],
      ["an unknown Bearer key", {}, { Authorization: "Bearer sk_live_unknownunknownunknownunknown1" }],
      ["a malformed Authorization header", {}, { Authorization: "Basic abc" }],
    ])("401 {error} for %s", async (_what, query, headers) => {
      const res = await api().get("/search.json").query({ q: "coffee", ...query }).set(headers);
      expect(res.status).toBe(401);
      expect(res.body).toEqual({ error: expect.any(String) });
    }, LIVE);

    test("a revoked key is refused", async () => {
      const acct = await stack.account(3);
      await stack.api.accounts.revokeKey(acct.accountId, acct.key);
      const res = await api().get("/search").query({ q: "coffee", api_key: acct.key });
      expect(res.status).toBe(401);
    }, LIVE);

    test("the Bearer header works as well as api_key", async () => {
      const acct = await stack.account(3);
      const res = await api().get("/search").query({ q: "coffee" }).set("Authorization", acct.auth);
      expect(res.status).toBe(200);
    }, LIVE);
  });

  describe("the rate limit", () => {
    /** The same app with a stand-in limiter, refusing the ways a limiter may. */
    const limited = (rateLimit: RequestHandler) => createApp({ ...stack.api.ctx, rateLimit });

    test("429 {error} with Retry-After and the limiter's headers when it reports an ApiError", async () => {
      const app = limited((_req, res, next) => {
        res.setHeader("RateLimit-Limit", "1");
        next(new ApiError("rate_limited", "Too many requests: slow down", undefined, 7));
      });
      const acct = await stack.account(3);
      const res = await request(app).get("/search.json").query({ q: "coffee", api_key: acct.key });
      expect(res.status).toBe(429);
      expect(res.body).toEqual({ error: "Too many requests: slow down" });
      expect(res.headers["retry-after"]).toBe("7");
      expect(res.headers["ratelimit-limit"]).toBe("1");
      expect(await balance(acct.accountId)).toBe(3);
    }, LIVE);

    // A limiter refuses by throwing (or next(err)): the router's own error middleware words it, no body is rewritten.
    test("429 in this endpoint's shape when the limiter refuses with a Retry-After of its own", async () => {
      const app = limited(() => {
        throw new ApiError("rate_limited", "Rate limit exceeded", undefined, 3);
      });
      const res = await request(app).get("/search").query({ q: "coffee", api_key: key });
      expect(res.status).toBe(429);
      expect(res.body).toEqual({ error: "Rate limit exceeded" });
      expect(res.headers["retry-after"]).toBe("3");
    }, LIVE);

    test("the service's own limiter: 429 {error} with Retry-After and RateLimit headers, counted before the parameters", async () => {
      const small = await startStack({ env: { RATE_LIMIT_PER_MINUTE: "2" }, workerQueues: [] });
      try {
        const acct = await small.account(5);
        const get = () => request(small.api.app).get("/search.json").query({ api_key: acct.key });
        expect((await get()).status).toBe(400);
        expect((await get()).status).toBe(400);
        const res = await get();
        expect(res.status).toBe(429);
        expect(res.body).toEqual({ error: expect.stringContaining("Rate limit") });
        expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
        expect(res.headers["ratelimit"]).toEqual(expect.any(String));
        expect(await small.api.accounts.get(acct.accountId)).toMatchObject({ balance: 5, reserved: 0 });
      } finally {
        await small.close();
      }
    }, LIVE);

    test("the limiter sees the authenticated account", async () => {
      const seen: (string | undefined)[] = [];
      const app = limited((req, _res, next) => {
        seen.push(req.accountId);
        next();
      });
      const acct = await stack.account(3);
      const res = await request(app).get("/search").query({ q: "coffee", api_key: acct.key });
      expect(res.status).toBe(200);
      expect(seen).toEqual([acct.accountId]);
    }, LIVE);
  });

  describe("around the search", () => {
    test("GET /searches/<id>.json and /searches/<id> return the caller's search; others get 404", async () => {
      const first = await search({ q: "coffee", start: "10" });
      const id = first.body.search_metadata.id;
      for (const path of [`/searches/${id}.json`, `/searches/${id}`]) {
        const res = await api().get(path).query({ api_key: key });
        expect(res.status).toBe(200);
        expect(res.body.search_metadata).toEqual(first.body.search_metadata);
        expect(res.body.organic_results).toEqual(first.body.organic_results);
        expect(res.body.search_parameters).toEqual({ engine: "web", q: "coffee", hl: "en", gl: "us", device: "desktop", start: 10 });
        expect(res.body.serpapi_pagination).toEqual(first.body.serpapi_pagination);
      }
      const other = await stack.account(3);
      for (const [path, k] of [
        [`/searches/${id}.json`, other.key],
        ["/searches/job_01JZZZZZZZZZZZZZZZZZZZZZZZ.json", key],
        ["/searches/not-an-id", key],
      ]) {
        const res = await api().get(path!).query({ api_key: k });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: expect.any(String) });
      }
      expect((await api().get(`/searches/${id}.json`)).status).toBe(401);
    }, LIVE);

    test("a failed search shows in the archive with status Error and its error", async () => {
      stack.replay.setFaults({ mode: "server-error" });
      const failed = await search({ q: "coffee", no_cache: "true" });
      expect(failed.status).toBe(502);
      stack.replay.clearFaults();
      const ledger = await stack.api.accounts.ledger((await stack.api.accounts.authenticate(key))!);
      const jobId = ledger.at(-1)!.jobId!;
      const res = await api().get(`/searches/${jobId}.json`).query({ api_key: key });
      expect(res.status).toBe(200);
      expect(res.body.search_metadata.status).toBe("Error");
      expect(res.body.error).toBe("upstream returned an error");
    }, LIVE);

    const withList = geotargetsAvailable ? test : test.skip;
    withList("GET /locations.json answers a bare array from the location list, without a key", async () => {
      const res = await api().get("/locations.json").query({ q: "Austin", limit: "3" });
      expect(res.status).toBe(200);
      expect(Array.isArray(res.body)).toBe(true);
      expect(res.body.length).toBeGreaterThan(0);
      expect(res.body.length).toBeLessThanOrEqual(3);
      expect(res.body[0]).toMatchObject({ canonical_name: expect.stringMatching(/^Austin/), country_code: expect.any(String), target_type: expect.any(String) });
      expect((await api().get("/locations.json")).body).toEqual([]);
      const bad = await api().get("/locations.json").query({ q: "Austin", limit: "lots" });
      expect(bad.status).toBe(400);
      expect(bad.body).toEqual({ error: "`limit` parameter must be an integer from 1 to 100." });
    }, LIVE);

    test("GET /search.html answers the upstream page of the search (test/compat/raw-pages.test.ts has the rest)", async () => {
      const res = await api().get("/search.html").query({ q: "coffee", api_key: key });
      expect(res.status).toBe(200);
      expect(res.headers["content-type"]).toMatch(/^text\/html/);
    }, LIVE);

    test("GET /account and /account.json show the caller's searches left", async () => {
      const acct = await stack.account(7);
      for (const path of ["/account", "/account.json"]) {
        const res = await api().get(path).query({ api_key: acct.key });
        expect(res.status).toBe(200);
        expect(res.body).toMatchObject({ account_id: acct.accountId, total_searches_left: 7, plan_searches_left: 7, credits_balance: 7 });
        expect(JSON.stringify(res.body)).not.toContain(acct.key);
      }
      const anon = await api().get("/account");
      expect(anon.status).toBe(401);
      expect(anon.body).toEqual({ error: expect.any(String) });
    }, LIVE);

    test.each([
      ["post", "/search.json"],
      ["delete", "/search"],
      ["put", "/search.html"],
      ["post", "/searches/job_01JZZZZZZZZZZZZZZZZZZZZZZZ.json"],
      ["delete", "/searches/job_01JZZZZZZZZZZZZZZZZZZZZZZZ"],
      ["post", "/account"],
      ["patch", "/account.json"],
      ["post", "/locations.json"],
    ] as const)("%s %s is a 405 {error} with Allow: GET, and runs nothing", async (method, path) => {
      const acct = await stack.account(5);
      const res = await api()[method](path).query({ api_key: acct.key, q: "coffee" }).send({ q: "coffee" });
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe("GET");
      expect(res.body).toEqual({ error: `Method ${method.toUpperCase()} is not allowed on ${path}: use GET.` });
      expect(await stack.api.accounts.get(acct.accountId)).toMatchObject({ balance: 5, reserved: 0 });
    });

    test("a path the endpoint does not serve is still a 404", async () => {
      const res = await api().post("/search.xml").query({ api_key: key });
      expect(res.status).toBe(404);
    });
  });
});
