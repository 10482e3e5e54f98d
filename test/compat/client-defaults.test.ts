/**
 * What a customer of the reference API reaches for first, end to end (real API, Redis, BullMQ
 * workers, the replay upstream): its engine names as aliases, `serp_api_key`, positions that continue
 * across pages (here and in job results), the product engine, `tbm=vid`, and async searches read
 * back from the archive. Then the npm clients' equivalents of what python-clients.test.ts runs:
 * their default engine, walking pages by `serpapi_pagination.next`, async and the product engine.
 */
import http from "node:http";
import https from "node:https";
import net from "node:net";
import type { AddressInfo } from "node:net";
import vm from "node:vm";
import request from "supertest";
import gsr from "google-search-results-nodejs";
import { config, getJson, getJsonBySearchId } from "serpapi";
import { ACCEPTED_ENGINES } from "../../apps/api/src/compat/engines.js";
import { fixturesAvailable, startStack, type Stack } from "../support/stack.js";

const d = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) console.warn("compat client defaults: captured pages not found; set SERP_FIXTURES_DIR. Skipping.");

const LIVE = 30_000;
const PRODUCT = "13239497633151178800";

/** The query of a link the service wrote, as the parameters a client sends for it. */
function paramsOf(link: string): Record<string, string> {
  return Object.fromEntries(new URL(link).searchParams);
}

d("the reference API's defaults", () => {
  let stack: Stack;
  let server: http.Server;
  let base: string;
  let port: number;
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    server = http.createServer();
    server.listen(0, "127.0.0.1");
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    port = (server.address() as AddressInfo).port;
    base = `http://127.0.0.1:${port}`;
    stack = await startStack({ env: { LIVE_DEADLINE_MS: "10000", PUBLIC_BASE_URL: base } });
    server.on("request", stack.api.app);
    ({ key, accountId } = await stack.account(1000));
  }, LIVE);
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await stack?.close();
  });
  afterEach(() => stack.replay.clearFaults());

  const api = () => request(stack.api.app);
  const search = (query: Record<string, string>) => api().get("/search.json").query({ api_key: key, ...query });
  const balance = async (id = accountId) => (await stack.api.accounts.get(id))!.balance;

  describe("engine names", () => {
    test.each([
      ["google", "coffee", "organic_results"],
      ["google_news", "schloss johannisberg", "news_results"],
      ["google_images", "hatsune miku", "images_results"],
      ["google_local", "coffee", "local_results"],
      ["google_shopping", "889894929969", "shopping_results"],
      ["google_autocomplete", "cheesecake", "suggestions"],
    ])("%s is an alias: the same results, echoed as sent and kept in the links", async (engine, q, block) => {
      const res = await search({ engine, q });
      expect(res.status).toBe(200);
      expect(res.body.search_parameters.engine).toBe(engine);
      expect(res.body[block].length).toBeGreaterThan(0);
      const next = res.body.serpapi_pagination?.next as string | undefined;
      if (next) expect(paramsOf(next).engine).toBe(engine);
      // The upstream URL under the engine's own name, as the reference writes `google_news_url`.
      if (engine !== "google") expect(res.body.search_metadata[`${engine}_url`]).toBe(res.body.search_metadata.web_url);
    }, LIVE);

    test("an unknown engine is a 400 that lists every accepted one, and runs nothing", async () => {
      const before = await balance();
      const res = await search({ engine: "bing", q: "coffee" });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: `Unsupported \`bing\` search engine. Supported engines: ${ACCEPTED_ENGINES.join(", ")}.` });
      expect(ACCEPTED_ENGINES).toEqual(expect.arrayContaining(["web", "google", "google_news", "google_autocomplete", "web_product", "google_product"]));
      expect(await balance()).toBe(before);
    }, LIVE);

    test("tbm works on the google alias; tbm=vid is a 400 naming what is supported", async () => {
      const news = await search({ engine: "google", q: "schloss johannisberg", tbm: "nws" });
      expect(news.status).toBe(200);
      expect(news.body.search_parameters).toMatchObject({ engine: "google", tbm: "nws" });
      expect(news.body.news_results.length).toBeGreaterThan(0);
      const vid = await search({ engine: "google", q: "coffee", tbm: "vid" });
      expect(vid.status).toBe(400);
      expect(vid.body).toEqual({
        error: "Video results (`tbm=vid`) are not supported - tbm parameter (use nws (news), isch (images), shop (shopping) or lcl (local)).",
      });
    }, LIVE);
  });

  describe("the key as serp_api_key", () => {
    test("is accepted like api_key, never echoed; api_key wins when both are sent", async () => {
      const other = await stack.account(10);
      const res = await api().get("/search.json").query({ serp_api_key: key, q: "coffee" });
      expect(res.status).toBe(200);
      expect(JSON.stringify(res.body)).not.toContain(key);
      const both = await api().get("/search.json").query({ api_key: other.key, serp_api_key: key, q: "coffee" });
      expect(both.status).toBe(200);
      expect(await balance(other.accountId)).toBe(9);
      const account = await api().get("/account.json").query({ serp_api_key: key });
      expect(account.body.account_id).toBe(accountId);
      const wrong = await api().get("/search.json").query({ serp_api_key: "sk_live_unknownunknownunknownunknown1", q: "coffee" });
      expect(wrong.status).toBe(401);
      expect(wrong.body).toEqual({ error: expect.any(String) });
    }, LIVE);
  });

  describe("positions continue across pages", () => {
    test.each([
      ["web-search", { query: "coffee", page: 2 }, "organic_results", 11],
      ["web-news", { query: "schloss johannisberg", page: 3 }, "news_results", 21],
      ["web-local", { query: "coffee", page: 2 }, "local_results", 21],
    ])("in job results: %s %o starts at %s", async (endpoint, params, block, first) => {
      const res = await api().post("/v1/jobs").set("Authorization", `Bearer ${key}`).send({ endpoint, params, queue: "live" });
      expect(res.status).toBe(200);
      const list = res.body.result[block as string] as { position: number }[];
      expect(list.length).toBeGreaterThan(0);
      expect(list.map((r) => r.position)).toEqual(list.map((_, i) => (first as number) + i));
    }, LIVE);

    test("in /search.json: start=10 begins at 11, start=0 at 1; the page's other blocks keep their own numbering", async () => {
      const [one, two] = await Promise.all([search({ q: "coffee" }), search({ q: "coffee", start: "10" })]);
      expect(one.body.organic_results[0].position).toBe(1);
      expect(two.body.organic_results.map((r: { position: number }) => r.position)).toEqual(one.body.organic_results.map((r: { position: number }) => r.position + 10));
      expect(two.body.organic_results.map((r: { link: string }) => r.link)).toEqual(one.body.organic_results.map((r: { link: string }) => r.link));
      if (two.body.local_results?.places?.length) expect(two.body.local_results.places[0].position).toBe(1);
    }, LIVE);
  });

  describe("the product engine", () => {
    test("offers=1: the sellers in the legacy shape, billed per 10 sellers; their links are never the click redirect", async () => {
      const { key: own, accountId: ownId } = await stack.account(10);
      const res = await api().get("/search.json").query({ api_key: own, engine: "web_product", product_id: PRODUCT, gl: "br", offers: "true" });
      expect(res.status).toBe(200);
      expect(res.body.search_parameters).toEqual({ engine: "web_product", product_id: PRODUCT, hl: "en", gl: "br", offers: "true" });
      expect(res.body.search_information).toEqual({ sellers_results_state: "Results for exact spelling" });
      const sellers = res.body.sellers_results.online_sellers as { link?: string; tracking_link?: string }[];
      expect(sellers.length).toBeGreaterThan(0);
      for (const seller of sellers) {
        if (seller.link !== undefined) expect(seller.link).not.toMatch(/\/aclk\?/);
        expect(seller.tracking_link).toMatch(/^https:\/\/www\.google\.com\/aclk\?/);
      }
      expect(res.body).not.toHaveProperty("sellers");
      expect(res.body.search_metadata.web_product_url).toBe(res.body.search_metadata.web_url);
      const job = (await stack.api.jobs.get(res.body.search_metadata.id))!.job;
      expect(job).toMatchObject({ endpoint: "web-shopping-product", credits: Math.max(1, Math.ceil(sellers.length / 10)) });
      expect(await balance(ownId)).toBe(10 - job.credits);
    }, LIVE);

    test("details: product_results without specs unless specs=1 asks for specs_results; the archive answers the same", async () => {
      const plain = await search({ engine: "google_product", product_id: PRODUCT, gl: "br" });
      expect(plain.status).toBe(200);
      expect(plain.body.product_results).toMatchObject({ product_id: PRODUCT, title: expect.any(String) });
      expect(plain.body.product_results).not.toHaveProperty("specs");
      expect(plain.body).not.toHaveProperty("specs_results");
      const specs = await search({ engine: "google_product", product_id: PRODUCT, gl: "br", specs: "1" });
      expect(specs.body.search_parameters).toEqual({ engine: "google_product", product_id: PRODUCT, hl: "en", gl: "br", specs: "1" });
      expect(Object.keys(specs.body.specs_results.details).length).toBeGreaterThan(0);
      expect((await stack.api.jobs.get(specs.body.search_metadata.id))!.job.endpoint).toBe("web-shopping-product-info");
      const archived = await api().get(`/searches/${specs.body.search_metadata.id}.json`).query({ api_key: key });
      expect(archived.body).toEqual(specs.body);
    }, LIVE);

    test("a product job made through POST /v1/jobs reads back through the archive as the product engine", async () => {
      const job = await api().post("/v1/jobs").set("Authorization", `Bearer ${key}`)
        .send({ endpoint: "web-shopping-product", params: { product_id: PRODUCT, country: "br" }, queue: "live" });
      expect(job.status).toBe(200);
      const archived = await api().get(`/searches/${job.body.job.id}.json`).query({ api_key: key });
      expect(archived.body.search_parameters).toEqual({ engine: "web_product", product_id: PRODUCT, hl: "en", gl: "br" });
      expect(archived.body.sellers_results.online_sellers).toEqual(job.body.result.sellers);
    }, LIVE);

    test.each([
      ["no product_id", { engine: "web_product" }, "Missing `product_id` parameter."],
      ["offers and specs together", { engine: "google_product", product_id: PRODUCT, offers: "1", specs: "1" }, expect.stringMatching(/^`offers` and `specs` parameters can't be used together/)],
      ["a bad offers value", { engine: "web_product", product_id: PRODUCT, offers: "yes" }, "`offers` parameter must be true or false."],
      ["a product_id over 100 characters", { engine: "web_product", product_id: "9".repeat(101) }, "`product_id` parameter must be at most 100 characters."],
    ])("%s is a 400", async (_what, query, error) => {
      const res = await search(query as Record<string, string>);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error });
    }, LIVE);
  });

  // Each async search asks for a query no other test here asks for: a cached result would be ready at once.
  describe("async=true", () => {
    test("answers at once with Processing on the fast queue; the archive reads Processing until the result is ready", async () => {
      stack.replay.setFaults({ latencyMs: 600, times: 1 });
      const started = Date.now();
      const first = await search({ engine: "google", q: "tesla manifesto", async: "true" });
      expect(Date.now() - started).toBeLessThan(500);
      expect(first.status).toBe(200);
      const id = first.body.search_metadata.id as string;
      expect(first.body.search_metadata).toMatchObject({
        id, status: "Processing", json_endpoint: `${base}/searches/${id}.json`, created_at: expect.any(String), processed_at: null, total_time_taken: 0,
      });
      expect(first.body.search_parameters).toEqual({ engine: "google", q: "tesla manifesto", hl: "en", gl: "us", device: "desktop" });
      expect(first.body).not.toHaveProperty("organic_results");
      const pending = await api().get(`/searches/${id}.json`).query({ api_key: key });
      expect(pending.body.search_metadata.status).toBe("Processing");
      let done = pending;
      for (const until = Date.now() + 15_000; done.body.search_metadata.status === "Processing" && Date.now() < until; ) {
        await new Promise((r) => setTimeout(r, 50));
        done = await api().get(`/searches/${id}.json`).query({ api_key: key });
      }
      expect(done.body.search_metadata.status).toBe("Success");
      expect(done.body.organic_results.length).toBeGreaterThan(0);
      expect(done.body.search_parameters.engine).toBe("google");
      expect((await stack.api.jobs.get(id))!.job).toMatchObject({ queue: "fast", credits: 1 });
    }, LIVE);

    test.each([["false"], ["0"]])("async=%s runs live", async (value) => {
      const res = await search({ q: "coffee", async: value });
      expect(res.body.search_metadata.status).toBe("Success");
      expect((await stack.api.jobs.get(res.body.search_metadata.id))!.job.queue).toBe("live");
    }, LIVE);

    test("a value other than true or false is a 400", async () => {
      const res = await search({ q: "coffee", async: "soon" });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: "`async` parameter must be true or false." });
    });
  });

  describe("npm serpapi 2.2.1", () => {
    beforeAll(() => {
      config.requestOptions = { createConnection: () => net.connect(port, "127.0.0.1") };
      config.api_key = key;
    });
    afterAll(() => {
      config.requestOptions = {};
      config.api_key = null;
    });

    test("engine google; three pages by following serpapi_pagination.next, positions 1, 11, 21", async () => {
      const pages = [await getJson({ engine: "google", q: "coffee" })];
      while (pages.length < 3) pages.push(await getJson(paramsOf(pages.at(-1)!.serpapi_pagination.next)));
      expect(pages.map((p) => [p.search_parameters.engine, p.serpapi_pagination.current, p.organic_results[0].position])).toEqual([
        ["google", 1, 1],
        ["google", 2, 11],
        ["google", 3, 21],
      ]);
    }, LIVE);

    test("async: Processing at once, then the result by getJsonBySearchId; the product engine with offers", async () => {
      const first = await getJson({ engine: "google", q: "donald trump", async: true });
      expect(first.search_metadata.status).toBe("Processing");
      let got = await getJsonBySearchId(first.search_metadata.id);
      for (const until = Date.now() + 15_000; got.search_metadata.status === "Processing" && Date.now() < until; ) {
        await new Promise((r) => setTimeout(r, 50));
        got = await getJsonBySearchId(first.search_metadata.id);
      }
      expect(got.search_metadata.status).toBe("Success");
      expect(got.organic_results.length).toBeGreaterThan(0);
      const product = await getJson({ engine: "google_product", product_id: PRODUCT, gl: "br", offers: 1 });
      expect(product.sellers_results.online_sellers.length).toBeGreaterThan(0);
    }, LIVE);
  });

  describe("npm google-search-results-nodejs 2.1.0", () => {
    /** One call of the old client, its `https.get("https://serpapi.com/…")` routed to loopback (see clients.test.ts). */
    function oldClient(call: (done: (value: any) => void) => void): Promise<any> {
      const host = vm.runInThisContext("process") as NodeJS.Process;
      const saved = host.listeners("uncaughtException");
      const realGet = https.get;
      return new Promise<any>((resolve, reject) => {
        host.removeAllListeners("uncaughtException");
        host.once("uncaughtException", (thrown) => reject(new Error(`the client threw: ${String(thrown)}`)));
        https.get = ((url: string, cb: (res: http.IncomingMessage) => void) =>
          http.get(url.replace("https://serpapi.com", base), cb)) as unknown as typeof https.get;
        call(resolve);
      }).finally(() => {
        https.get = realGet;
        host.removeAllListeners("uncaughtException");
        for (const listener of saved) host.on("uncaughtException", listener);
      });
    }

    test("its default engine (google) works; pages by next; the archive of an async search", async () => {
      const first = await oldClient((done) => new gsr.GoogleSearch(key).json({ q: "coffee" }, done));
      expect(first.search_parameters.engine).toBe("google");
      const pages = [first];
      while (pages.length < 3) {
        const next = paramsOf(pages.at(-1).serpapi_pagination.next);
        pages.push(await oldClient((done) => new gsr.GoogleSearch(key).json(next, done)));
      }
      expect(pages.map((p) => p.organic_results[0].position)).toEqual([1, 11, 21]);
      const queued = await oldClient((done) => new gsr.GoogleSearch(key).json({ q: "hotels nyc", async: "true" }, done));
      expect(queued.search_metadata.status).toBe("Processing");
      let got = queued;
      for (const until = Date.now() + 15_000; got.search_metadata.status === "Processing" && Date.now() < until; ) {
        await new Promise((r) => setTimeout(r, 50));
        got = await oldClient((done) => new gsr.GoogleSearch(key).search_archive(queued.search_metadata.id, done));
      }
      expect(got.search_metadata.status).toBe("Success");
      expect(got.search_parameters.engine).toBe("google");
    }, LIVE);
  });
});
