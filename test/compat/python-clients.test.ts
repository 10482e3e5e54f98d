/**
 * The reference API's two public Python clients, unchanged (../shared/clients, see its README), run
 * the way a customer runs them: python3 subprocesses with the client's folder first on the path and
 * its base URL pointed at this service on loopback. First with their defaults (`engine=google`,
 * `source=python`, `serp_api_key`), then everything each one offers: pagination, the archive, the
 * account, locations, async searches and the product engine.
 */
import { execFile } from "node:child_process";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { promisify } from "node:util";
import { CLIENTS_DIR, clientsAvailable } from "../../packages/upstream/test/fixtures-dir.js";
import { fixturesAvailable, geotargetsAvailable, startStack, type Stack } from "../support/stack.js";

const run = promisify(execFile);
const ready = clientsAvailable && fixturesAvailable;
const d = ready ? describe : describe.skip;
if (!clientsAvailable) console.warn(`python clients: ${CLIENTS_DIR} not found; set SERP_CLIENTS_DIR. Skipping.`);
else if (!fixturesAvailable) console.warn("python clients: captured pages not found; set SERP_FIXTURES_DIR. Skipping.");

const LIVE = 60_000;
const PRODUCT = "13239497633151178800";

type Client = "google-search-results-python" | "serpapi-python";

/** Each script starts with its client imported, pointed at `BASE`, and `out(value)` printing the answer as JSON. */
const PRELUDE: Record<Client, string> = {
  "google-search-results-python": `
import json, os
from serpapi import GoogleSearch
GoogleSearch.BACKEND = os.environ["BASE"]
KEY = os.environ["KEY"]
def out(value): print(json.dumps(value))
`,
  "serpapi-python": `
import json, os, time
import serpapi
serpapi.http.HTTPClient.BASE_DOMAIN = os.environ["BASE"]
KEY = os.environ["KEY"]
client = serpapi.Client(api_key=KEY)
def out(value): print(json.dumps(value))
`,
};

d("the reference API's Python clients against the service", () => {
  let stack: Stack;
  let server: http.Server;
  let base: string;
  let key: string;
  let accountId: string;

  /** Runs a script with one client (its own process: both install a module named `serpapi`); its last line of output, parsed. */
  async function python(client: Client, script: string, env: Record<string, string> = {}): Promise<any> {
    const { stdout } = await run("python3", ["-B", "-c", PRELUDE[client] + script], {
      // -B and PYTHONDONTWRITEBYTECODE: nothing is written into the read-only clients folder.
      env: { ...process.env, PYTHONPATH: join(CLIENTS_DIR, "python", client), PYTHONDONTWRITEBYTECODE: "1", BASE: base, KEY: key, ...env },
      timeout: LIVE,
      maxBuffer: 32 * 1024 * 1024,
    });
    return JSON.parse(stdout.trim().split("\n").at(-1)!);
  }

  beforeAll(async () => {
    // Listen first, so the links the service writes (PUBLIC_BASE_URL) are the address the clients call.
    server = http.createServer();
    server.listen(0, "127.0.0.1");
    await new Promise<void>((resolve) => server.once("listening", () => resolve()));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    stack = await startStack({ env: { LIVE_DEADLINE_MS: "10000", PUBLIC_BASE_URL: base }, withGeotargets: true });
    server.on("request", stack.api.app);
    ({ key, accountId } = await stack.account(1000));
  }, LIVE);
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    await stack?.close();
  });

  const balance = async (id = accountId) => (await stack.api.accounts.get(id))!.balance;
  afterEach(() => stack.replay.clearFaults());

  describe("google-search-results-python (GoogleSearch)", () => {
    test("get_dict() with its defaults: engine=google is the web engine, echoed as sent; source and output are not echoed", async () => {
      const before = await balance();
      const { params, result } = await python(
        "google-search-results-python",
        `
s = GoogleSearch({"q": "coffee", "api_key": KEY})
result = s.get_dict()
out({"params": {k: v for k, v in s.params_dict.items() if k != "api_key"}, "result": result})
`,
      );
      expect(params).toEqual({ q: "coffee", engine: "google", source: "python", output: "json" });
      expect(result.search_metadata.status).toBe("Success");
      expect(result.search_parameters).toEqual({ engine: "google", q: "coffee", hl: "en", gl: "us", device: "desktop" });
      expect(result.organic_results.length).toBeGreaterThan(0);
      expect(result.organic_results.map((r: { position: number }) => r.position)).toEqual(result.organic_results.map((_: unknown, i: number) => i + 1));
      expect(result.serpapi_pagination.next).toBe(`${base}/search.json?device=desktop&engine=google&gl=us&hl=en&q=coffee&start=10`);
      expect(await balance()).toBe(before - 1);
    }, LIVE);

    test("pagination() walks pages 1, 2, 3 through serpapi_pagination.next, positions continuing (1, 11, 21)", async () => {
      const pages = await python(
        "google-search-results-python",
        `
pages = GoogleSearch({"q": "coffee", "api_key": KEY}).pagination(limit=3)
out([{"id": p["search_metadata"]["id"], "start": p["search_parameters"].get("start"), "current": p["serpapi_pagination"]["current"],
      "positions": [r["position"] for r in p["organic_results"]]} for p in pages])
`,
      );
      expect(pages.map((p: any) => [p.current, p.start ?? 0, p.positions[0]])).toEqual([
        [1, 0, 1],
        [2, 10, 11],
        [3, 20, 21],
      ]);
      expect(new Set(pages.map((p: any) => p.id)).size).toBe(3);
      for (const p of pages) expect(p.positions).toEqual(p.positions.map((_: unknown, i: number) => p.positions[0] + i));
    }, LIVE);

    test("pagination() ends at the last page the service offers (no next link past start=90)", async () => {
      const walked = await python(
        "google-search-results-python",
        `
s = GoogleSearch({"q": "coffee", "start": 70, "api_key": KEY})
out({"pages": [p["serpapi_pagination"]["current"] for p in s.pagination()], "start": s.params_dict["start"]})
`,
      );
      // The client yields a page only when it has a next one: 8 and 9; page 10 (start=90) was fetched and ended the walk.
      expect(walked).toEqual({ pages: [8, 9], start: "90" });
    }, LIVE);

    test("GoogleSearch.SERP_API_KEY sends the key as serp_api_key, accepted like api_key and billed to its account", async () => {
      const before = await balance();
      const { sent, result, wrong } = await python(
        "google-search-results-python",
        `
GoogleSearch.SERP_API_KEY = KEY
s = GoogleSearch({"q": "coffee"})
result = s.get_dict()
sent = sorted(s.params_dict)
GoogleSearch.SERP_API_KEY = "sk_live_unknownunknownunknownunknown1"
wrong = GoogleSearch({"q": "coffee"}).get_dict()
out({"sent": sent, "result": result, "wrong": wrong})
`,
      );
      expect(sent).toEqual(["engine", "output", "q", "serp_api_key", "source"]);
      expect(result.search_metadata.status).toBe("Success");
      expect(result.organic_results.length).toBeGreaterThan(0);
      expect(JSON.stringify(result)).not.toContain(key);
      expect(wrong).toEqual({ error: expect.stringMatching(/invalid|revoked/i) });
      expect(await balance()).toBe(before - 1);
    }, LIVE);

    test("get_search_archive(), get_account() and get_location()", async () => {
      const { first, archived, account, locations } = await python(
        "google-search-results-python",
        `
s = GoogleSearch({"q": "schloss johannisberg", "tbm": "nws", "api_key": KEY})
first = s.get_dict()
archived = s.get_search_archive(first["search_metadata"]["id"])
account = GoogleSearch({"api_key": KEY}).get_account()
locations = GoogleSearch({}).get_location("Austin", 3)
out({"first": first, "archived": archived, "account": account, "locations": locations})
`,
      );
      expect(first.news_results.length).toBeGreaterThan(0);
      expect(archived.search_metadata).toEqual(first.search_metadata);
      expect(archived.search_parameters).toEqual(first.search_parameters);
      expect(archived.search_parameters).toMatchObject({ engine: "google", tbm: "nws" });
      expect(archived.news_results).toEqual(first.news_results);
      expect(account).toMatchObject({ account_id: accountId, total_searches_left: await balance() });
      expect(Array.isArray(locations)).toBe(true);
      if (geotargetsAvailable) expect(locations[0].canonical_name).toMatch(/^Austin,/);
    }, LIVE);
  });

  describe("serpapi-python (serpapi.Client)", () => {
    test("search(engine='google') and search() without an engine; next_page() continues positions", async () => {
      const { google, plain, next } = await python(
        "serpapi-python",
        `
google = client.search(q="coffee", engine="google")
plain = client.search(q="coffee")
nxt = google.next_page()
out({"google": google.as_dict(), "plain": plain.as_dict()["search_parameters"], "next": nxt.as_dict()})
`,
      );
      expect(google.search_parameters.engine).toBe("google");
      expect(google.organic_results[0].position).toBe(1);
      expect(plain.engine).toBe("web");
      expect(next.search_parameters).toMatchObject({ engine: "google", start: 10 });
      expect(next.search_information.page_number).toBe(2);
      expect(next.organic_results[0].position).toBe(11);
      expect(next.serpapi_pagination.previous).toBe(`${base}/search.json?device=desktop&engine=google&gl=us&hl=en&q=coffee`);
    }, LIVE);

    test("yield_pages() gives 3 pages in order", async () => {
      const pages = await python(
        "serpapi-python",
        `
first = client.search(q="schloss johannisberg", engine="google_news")
out([[p["serpapi_pagination"]["current"], p["news_results"][0]["position"], p["search_parameters"]["engine"]] for p in first.yield_pages(max_pages=3)])
`,
      );
      expect(pages).toEqual([
        [1, 1, "google_news"],
        [2, 11, "google_news"],
        [3, 21, "google_news"],
      ]);
    }, LIVE);

    test("account(), locations() and search_archive()", async () => {
      const { first, archived, account, locations } = await python(
        "serpapi-python",
        `
first = client.search(q="coffee", engine="google_local")
archived = client.search_archive(search_id=first["search_metadata"]["id"])
out({"first": first.as_dict(), "archived": archived.as_dict(), "account": client.account(), "locations": client.locations(q="Austin", limit=3)})
`,
      );
      expect(first.local_results.length).toBeGreaterThan(0);
      expect(archived.search_metadata).toEqual(first.search_metadata);
      expect(archived.search_parameters).toEqual({ engine: "google_local", q: "coffee", hl: "en", gl: "us" });
      expect(archived.local_results).toEqual(first.local_results);
      expect(account).toMatchObject({ account_id: accountId, total_searches_left: await balance() });
      expect(Array.isArray(locations)).toBe(true);
      if (geotargetsAvailable) {
        expect(locations.length).toBeGreaterThan(0);
        expect(locations.length).toBeLessThanOrEqual(3);
      }
    }, LIVE);

    // A query no other test here asks for: a cached result would be ready at once.
    test("async=True answers at once with Processing; search_archive() gives Processing, then the result", async () => {
      // The upstream answers late, so the search is still running when the client first reads it back.
      stack.replay.setFaults({ latencyMs: 800, times: 1 });
      const { first, seen, final } = await python(
        "serpapi-python",
        `
first = client.search({"q": "movement", "engine": "google", "async": True})
seen = []
deadline = time.time() + 30
while True:
    got = client.search_archive(search_id=first["search_metadata"]["id"])
    seen.append(got["search_metadata"]["status"])
    if got["search_metadata"]["status"] != "Processing" or time.time() > deadline:
        break
    time.sleep(0.05)
out({"first": first.as_dict(), "seen": seen, "final": got.as_dict()})
`,
      );
      expect(first.search_metadata).toMatchObject({ status: "Processing", processed_at: null, json_endpoint: `${base}/searches/${first.search_metadata.id}.json` });
      expect(first).not.toHaveProperty("organic_results");
      expect(seen[0]).toBe("Processing");
      expect(seen.at(-1)).toBe("Success");
      expect(new Set(seen.slice(0, -1))).toEqual(new Set(["Processing"]));
      expect(final.search_metadata.id).toBe(first.search_metadata.id);
      expect(final.search_parameters).toEqual({ engine: "google", q: "movement", hl: "en", gl: "us", device: "desktop" });
      expect(final.organic_results.length).toBeGreaterThan(0);
      expect((await stack.api.jobs.get(first.search_metadata.id))!.job).toMatchObject({ queue: "fast", status: "completed", credits: 1 });
    }, LIVE);

    test("the product engine: sellers with offers=1, details and specs with specs=1", async () => {
      const { sellers, details } = await python(
        "serpapi-python",
        `
sellers = client.search(engine="google_product", product_id="${PRODUCT}", gl="br", hl="pt-BR", offers=1)
details = client.search(engine="google_product", product_id="${PRODUCT}", gl="br", hl="pt-BR", specs=1)
out({"sellers": sellers.as_dict(), "details": details.as_dict()})
`,
      );
      expect(sellers.search_parameters).toEqual({ engine: "google_product", product_id: PRODUCT, hl: "pt-BR", gl: "br", offers: "1" });
      expect(sellers.product_results).toMatchObject({ product_id: PRODUCT, title: expect.any(String) });
      expect(sellers.sellers_results.online_sellers.length).toBeGreaterThan(0);
      expect(sellers.sellers_results.online_sellers[0]).toMatchObject({ position: 1, name: expect.any(String), base_price: expect.any(String) });
      expect(details.product_results).toMatchObject({ product_id: PRODUCT, title: expect.any(String) });
      expect(details.product_results).not.toHaveProperty("specs");
      expect(Object.keys(details.specs_results.details).length).toBeGreaterThan(0);
    }, LIVE);

    test("errors raise serpapi.HTTPError with the status and the {error} message", async () => {
      const errors = await python(
        "serpapi-python",
        `
def failure(**params):
    try:
        client.search(**params)
    except serpapi.HTTPError as e:
        return [e.status_code, e.error]
    return None
out([failure(q="coffee", engine="bing"), failure(q="coffee", engine="google", tbm="vid"), failure(engine="google_product")])
`,
      );
      expect(errors[0][0]).toBe(400);
      expect(errors[0][1]).toMatch(/^Unsupported `bing` search engine\. Supported engines: web, .*\bgoogle\b.*\bgoogle_product\b/);
      expect(errors[1]).toEqual([400, expect.stringMatching(/^Video results \(`tbm=vid`\) are not supported.*nws.*isch.*shop.*lcl/)]);
      expect(errors[2]).toEqual([400, "Missing `product_id` parameter."]);
    }, LIVE);
  });
});
