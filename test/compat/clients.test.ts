/**
 * The official npm clients of the reference API, unchanged, pointed at this service on loopback
 * (reference §12.1, §12.2): `serpapi` 2.2.1 through `requestOptions.createConnection`, and
 * `google-search-results-nodejs` 2.1.0 through a patched `https.get`. Each engine returns its
 * block, and errors reach the caller the way each client reports them.
 */
import http from "node:http";
import https from "node:https";
import net from "node:net";
import type { AddressInfo } from "node:net";
import vm from "node:vm";
import gsr from "google-search-results-nodejs";
import { config, getAccount, getJson, getJsonBySearchId, getLocations, type EngineParameters } from "serpapi";
import { fixturesAvailable, geotargetsAvailable, startStack, type Stack } from "../support/stack.js";

const d = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) console.warn("compat clients: captured pages not found; set SERP_FIXTURES_DIR. Skipping.");

const BASE = "http://serp.example.test";
const LIVE = 30_000;

/** One query per engine that the replay upstream answers with a captured page. */
const ENGINES: [engine: string, q: string, block: string][] = [
  ["web", "coffee", "organic_results"],
  ["web_news", "schloss johannisberg", "news_results"],
  ["web_images", "hatsune miku", "images_results"],
  ["web_local", "coffee", "local_results"],
  ["web_shopping", "889894929969", "shopping_results"],
  ["web_autocomplete", "cheesecake", "suggestions"],
];

/** The serpapi client rejects a non-200 answer with the raw body text. */
async function rejection(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (err) {
    expect(typeof err).toBe("string");
    return JSON.parse(err as string);
  }
  throw new Error("the client resolved");
}

d("official clients against the service", () => {
  let stack: Stack;
  let server: http.Server;
  let port: number;
  let key: string;
  beforeAll(async () => {
    stack = await startStack({ env: { LIVE_DEADLINE_MS: "10000", PUBLIC_BASE_URL: BASE }, withGeotargets: true });
    ({ key } = await stack.account(1000));
    server = stack.api.app.listen(0, "127.0.0.1");
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    port = (server.address() as AddressInfo).port;
  }, LIVE);
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await stack.close();
  });
  afterEach(() => stack.replay.clearFaults());

  describe("serpapi 2.2.1", () => {
    beforeAll(() => {
      // The hostname is hard-coded; Node uses this socket instead (plain HTTP to loopback).
      config.requestOptions = { createConnection: () => net.connect(port, "127.0.0.1") };
      config.api_key = key;
    });
    afterAll(() => {
      config.requestOptions = {};
      config.api_key = null;
    });

    test.each(ENGINES)("engine %s (q=%s) returns %s", async (engine, q, block) => {
      const json = await getJson({ engine, q });
      expect(json[block].length).toBeGreaterThan(0);
      expect(json.search_parameters).toMatchObject({ engine, q });
      expect(json.search_metadata.status).toBe("Success");
      expect(json.search_metadata.json_endpoint).toBe(`${BASE}/searches/${json.search_metadata.id}.json`);
      expect(json.search_parameters).not.toHaveProperty("source");
    }, LIVE);

    test("the engine-first call form, tbm and start work as sent", async () => {
      const json = await getJson("web", { q: "coffee", tbm: "lcl", start: 20 });
      expect(json.local_results.length).toBeGreaterThan(0);
      expect(json.search_parameters).toMatchObject({ engine: "web", tbm: "lcl", start: 20 });
      expect(json.serpapi_pagination.next).toBe(`${BASE}/search.json?device=desktop&engine=web&gl=us&hl=en&q=coffee&start=40&tbm=lcl`);
    }, LIVE);

    test("a search read back by id, the account and the locations", async () => {
      const json = await getJson({ engine: "web", q: "coffee", location: "Austin, Texas" });
      expect(json.search_parameters.location_used).toBe("Austin,Texas,United States");
      const again = await getJsonBySearchId(json.search_metadata.id);
      expect(again.search_metadata.id).toBe(json.search_metadata.id);
      expect(again.organic_results).toEqual(json.organic_results);
      const account = await getAccount();
      expect(account.total_searches_left).toEqual(expect.any(Number));
      if (geotargetsAvailable) {
        const rows = await getLocations({ q: "Austin", limit: 3 });
        expect(rows.length).toBeGreaterThan(0);
        expect(rows[0]!.canonical_name).toMatch(/^Austin/);
      }
    }, LIVE);

    test.each([
      ["a missing q", { engine: "web", q: "" }, 400, "Missing query `q` parameter."],
      ["an unknown engine", { engine: "bing", q: "coffee" }, 400, expect.stringMatching(/^Unsupported `bing` search engine\. Supported engines: web, .*google/)],
      ["a bad start", { engine: "web_news", q: "coffee", start: 5 }, 400, "`start` parameter must be a multiple of 10 from 0 to 90 for engine `web_news`."],
      ["an unknown key", { engine: "web", q: "coffee", api_key: "sk_live_unknownunknownunknownunknown1" }, 401, undefined],
      ["no key", { engine: "web", q: "coffee", api_key: null }, 401, undefined],
    ])("rejects with the {error} body for %s", async (_what, params, _status, message) => {
      const body = await rejection(getJson(params as EngineParameters));
      expect(body).toEqual({ error: message ?? expect.any(String) });
    }, LIVE);

    test("no credits and an upstream that keeps failing reject with {error}; no results resolves with the error member", async () => {
      const broke = await stack.account(0);
      expect(await rejection(getJson({ engine: "web", q: "coffee", api_key: broke.key }))).toEqual({ error: expect.any(String) });
      stack.replay.setFaults({ mode: "server-error" });
      // no_cache: the earlier search's result would answer it from the result cache.
      expect(await rejection(getJson({ engine: "web_news", q: "schloss johannisberg", no_cache: true }))).toEqual({ error: "upstream returned an error" });
      stack.replay.clearFaults();
      const empty = await getJson({ engine: "web", q: "no results" });
      expect(empty.error).toBe("Web hasn't returned any results for this query.");
    }, LIVE);
  });

  describe("google-search-results-nodejs 2.1.0", () => {
    type Outcome = { ok: any } | { thrown: unknown };

    /**
     * Runs one call of the old client against the service. It calls `https.get("https://serpapi.com/…")`;
     * that is routed to loopback for the call's duration. On a non-200 answer it throws the body from
     * inside its response handler, which only a process 'uncaughtException' listener can see: the
     * host process's listeners are swapped for one that collects it, and put back after.
     */
    function oldClient(call: (done: (value: unknown) => void) => void): Promise<Outcome> {
      const host = vm.runInThisContext("process") as NodeJS.Process;
      const saved = host.listeners("uncaughtException");
      const realGet = https.get;
      return new Promise<Outcome>((resolve) => {
        host.removeAllListeners("uncaughtException");
        host.once("uncaughtException", (thrown) => resolve({ thrown }));
        https.get = ((url: string, cb: (res: http.IncomingMessage) => void) =>
          http.get(url.replace("https://serpapi.com", `http://127.0.0.1:${port}`), cb)) as unknown as typeof https.get;
        call((ok) => resolve({ ok }));
      }).finally(() => {
        https.get = realGet;
        host.removeAllListeners("uncaughtException");
        for (const listener of saved) host.on("uncaughtException", listener);
      });
    }

    const thrownBody = (outcome: Outcome) => {
      expect(outcome).toHaveProperty("thrown");
      const thrown = (outcome as { thrown: unknown }).thrown;
      expect(typeof thrown).toBe("string");
      return JSON.parse(thrown as string);
    };

    test.each(ENGINES)("engine %s (q=%s) returns %s", async (engine, q, block) => {
      const outcome = await oldClient((done) => new gsr.GoogleSearch(key).json({ engine, q }, done));
      expect(outcome).toHaveProperty("ok");
      const json = (outcome as { ok: Record<string, any> }).ok;
      expect(json[block].length).toBeGreaterThan(0);
      expect(json.search_parameters).toMatchObject({ engine, q });
    }, LIVE);

    test("a location sent with %20 spaces, then the archive, the account and the locations", async () => {
      const search = await oldClient((done) => new gsr.GoogleSearch(key).json({ engine: "web", q: "coffee", location: "Austin, Texas" }, done));
      const json = (search as { ok: Record<string, any> }).ok;
      expect(json.search_parameters).toMatchObject({ location_requested: "Austin, Texas", location_used: "Austin,Texas,United States" });
      const archived = await oldClient((done) => new gsr.GoogleSearch(key).search_archive(json.search_metadata.id, done));
      expect((archived as { ok: Record<string, any> }).ok.search_metadata.id).toBe(json.search_metadata.id);
      const account = await oldClient((done) => new gsr.GoogleSearch(key).account(done));
      expect((account as { ok: Record<string, any> }).ok.total_searches_left).toEqual(expect.any(Number));
      if (geotargetsAvailable) {
        const rows = await oldClient((done) => new gsr.GoogleSearch().location("Austin", 3, done));
        expect((rows as { ok: unknown[] }).ok.length).toBeGreaterThan(0);
      }
    }, LIVE);

    test.each([
      ["a missing q", () => ({ engine: "web", q: "" }), "Missing query `q` parameter."],
      ["an unknown engine", () => ({ engine: "bing", q: "coffee" }), expect.stringMatching(/^Unsupported `bing` search engine\. Supported engines: web, .*google/)],
      ["a bad device", () => ({ engine: "web", q: "coffee", device: "tablet" }), "Unsupported `tablet` device."],
    ])("throws the {error} body for %s", async (_what, params, message) => {
      const outcome = await oldClient((done) => new gsr.GoogleSearch(key).json(params(), done));
      expect(thrownBody(outcome)).toEqual({ error: message });
    }, LIVE);

    test("throws the {error} body for an unknown key, no credits and an upstream failure", async () => {
      const unknown = await oldClient((done) => new gsr.GoogleSearch("sk_live_unknownunknownunknownunknown1").json({ engine: "web", q: "coffee" }, done));
      expect(thrownBody(unknown)).toEqual({ error: expect.any(String) });
      const broke = await stack.account(0);
      const noCredits = await oldClient((done) => new gsr.GoogleSearch(broke.key).json({ engine: "web", q: "coffee" }, done));
      expect(thrownBody(noCredits)).toEqual({ error: expect.any(String) });
      stack.replay.setFaults({ mode: "server-error" });
      const failed = await oldClient((done) => new gsr.GoogleSearch(key).json({ engine: "web", q: "coffee", no_cache: true }, done));
      expect(thrownBody(failed)).toEqual({ error: "upstream returned an error" });
    }, LIVE);
  });
});
