/**
 * Drives a real replay upstream on 127.0.0.1 against the captured pages: each upstream path form,
 * the UA-based layout, single-page mode, the route table, every fault mode and the request log.
 * Each served page is recognised by a marker known to be in that captured file (its title or kEI).
 */
import { readFileSync, statSync } from "node:fs";
import { get as httpGet, request } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { FIXTURES_DIR, fixturesAvailable } from "./fixtures-dir.js";
import { startReplayServer, type ReplayServer } from "../src/index.js";
import { NO_RESULTS_NAME as NO_RESULTS } from "../src/server.js";
// The service's own classifier, to prove the no-results page reads as an empty result.
import { classify } from "../../upstream/src/classify.js";

const describeIfFixtures = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) {
  console.warn(`replay tests skipped: no captured pages at ${FIXTURES_DIR} (set SERP_FIXTURES_DIR)`);
}

const UA = {
  desktop: "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:109.0) Gecko/20100101 Firefox/118.0",
  iphone: "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148",
  android: "Mozilla/5.0 (Linux; Android 13; Pixel 7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Mobile Safari/537.36",
  lynx: "Lynx/2.8.9rel.1 libwww-FM/2.14 SSL-MM/1.4.1 OpenSSL/1.1.1",
  msie: "Mozilla/5.0 (MSIE 10.0; Windows NT 6.1; Trident/5.0)",
  nokia: "Nokia6230i/2.0 (03.80) Profile/MIDP-2.0 Configuration/CLDC-1.1",
};

/** Strings known to be in exactly the named captured file (kEI tokens are unique per capture). */
const MARKER = {
  "web/coffee-desktop-2023.html": "kEI:'k17AZJSJEpbPwPAPwbyjqAs'",
  "web-mobile/coffee-mobile-2023.html": "kEI:'eOpCZKa8HJyG0PEPlZmQoA0'",
  "web-nojs/coffee-nojs-2023.html": "ei=4hV6ZOuZK9mekdUP97uUwA0",
  "web/dell-xps-13-buy-desktop-2023.html": "kEI:'Z99CZJatLNrP-QaNyI3IBA'",
  "web/hotels-nyc-desktop-2023.html": "kEI:'Z99CZPy4HcrywQPBpILwDQ'",
  "web/243-desktop-2021-wayback.html": "kEI:'4k8UYcWHJbaV0PEPj8O64Aw'",
  "news/schloss-johannisberg-news-2025.html": "<title>schloss johannisberg - Google Search</title>",
  "images/hatsune-miku-images-ja-2025.html": "<title>初音ミク - Google 検索</title>",
  "images/boulevard-records-images-basic-2017-wayback.html": "<title>\"Boulevard Records\" Canada",
  "videos/brahms-piano-concerto-2-videos-ja-2025.html": "<title>j.brahms piano concerto no.2 - Google 検索</title>",
  "shopping/ean-889894929969-shopping-pt-br-2021.html": "<title>889894929969 - Google Shopping</title>",
  "shopping/ean-7891114090307-shopping-pt-br-2021.html": "<title>7891114090307 - Google Shopping</title>",
  "shopping-product/product-13239497633151178800-pt-br-2021.html":
    "<title>Fogão de Piso 4 Bocas Branco Electrolux 52LBU Bivolt | Google Shopping</title>",
  "shopping-product/product-13239497633151178800-online-offers-pt-br-2021.html":
    "<title>Lojas on-line | Fogão de Piso 4 Bocas Branco Electrolux 52LBU Bivolt | Google Shopping</title>",
  "autocomplete/cheesecake-toolbar-2013.xml": '<suggestion data="cheesecake factory" />',
} as const;
type Fixture = keyof typeof MARKER;

const fileSize = (fixture: string) => statSync(join(FIXTURES_DIR, fixture)).size;

async function get(server: ReplayServer, path: string, userAgent = UA.desktop, init: RequestInit = {}) {
  // identity: the page as captured, byte for byte (a client that accepts gzip gets it compressed).
  const res = await fetch(`${server.url}${path}`, { redirect: "manual", ...init, headers: { "user-agent": userAgent, "accept-encoding": "identity" } });
  return { status: res.status, headers: res.headers, body: await res.text() };
}

function expectPage(page: { status: number; body: string; headers: Headers }, fixture: Fixture): void {
  expect(page.headers.get("x-replay-file")).toBe(fixture);
  expect(page.status).toBe(200);
  expect(page.body).toContain(MARKER[fixture]);
}

describeIfFixtures("replay upstream", () => {
  let server: ReplayServer;
  beforeAll(async () => {
    server = await startReplayServer({ dir: FIXTURES_DIR });
  });
  afterAll(() => server.close());
  beforeEach(() => {
    server.clearFaults();
    server.clearRequests();
  });

  describe("path forms pick the kind's captured page", () => {
    const cases: [path: string, fixture: Fixture][] = [
      ["/search?q=coffee&hl=en", "web/coffee-desktop-2023.html"],
      ["/search?q=Dell+XPS+13+buy", "web/dell-xps-13-buy-desktop-2023.html"],
      ["/search?q=243", "web/243-desktop-2021-wayback.html"],
      ["/search?q=schloss+johannisberg&tbm=nws", "news/schloss-johannisberg-news-2025.html"],
      ["/search?q=hatsune+miku&udm=2", "images/hatsune-miku-images-ja-2025.html"],
      // The whole query as captured (MANIFEST.md): no file name spells it.
      ["/search?q=%22Boulevard+Records%22+Canada+-site%3Awikipedia.org+-site%3Awikimedia.org&tbm=isch", "images/boulevard-records-images-basic-2017-wayback.html"],
      ["/search?q=brahms&udm=7", "videos/brahms-piano-concerto-2-videos-ja-2025.html"],
      ["/search?q=hotels+nyc&tbm=lcl", "web/hotels-nyc-desktop-2023.html"],
      ["/search?q=889894929969&tbm=shop", "shopping/ean-889894929969-shopping-pt-br-2021.html"],
      ["/search?q=7891114090307&udm=28", "shopping/ean-7891114090307-shopping-pt-br-2021.html"],
      ["/shopping/product/13239497633151178800?hl=pt-BR", "shopping-product/product-13239497633151178800-pt-br-2021.html"],
      ["/shopping/product/13239497633151178800/online", "shopping-product/product-13239497633151178800-online-offers-pt-br-2021.html"],
      ["/shopping/product/13239497633151178800/offers", "shopping-product/product-13239497633151178800-online-offers-pt-br-2021.html"],
      ["/wml/search?q=coffee&sca_esv=1&ie=utf8&oe=utf8", "web-nojs/coffee-nojs-2023.html"],
    ];
    test.each(cases)("%s answers %s", async (path, fixture) => {
      expectPage(await get(server, path), fixture);
    });

    test("a search with nothing captured gets the upstream's no-results page for that query, not another query's page", async () => {
      for (const path of ["/search?q=nothing+captured+for+this", "/search?q=nothing+captured+for+this&udm=2", "/search?q=nothing+captured+for+this&tbm=shop", "/search?q=nothing+captured+for+this&tbm=nws"]) {
        const page = await get(server, path);
        expect({ path, status: page.status, file: page.headers.get("x-replay-file") }).toEqual({ path, status: 200, file: NO_RESULTS });
        expect(page.body).toContain("Your search - <span><em>nothing captured for this</em></span> - did not match any documents.");
        expect(page.headers.get("content-type")).toBe("text/html; charset=UTF-8");
      }
      // The service's classifier reads it as an empty result, in every search kind.
      const body = (await get(server, "/search?q=%3Cb%3Etea%3C%2Fb%3E&udm=2")).body;
      expect(body).toContain("<em>&#60;b&#62;tea&#60;/b&#62;</em>");
      for (const endpoint of ["web-search", "web-images", "web-news", "web-local", "web-shopping-search"] as const) {
        expect(classify({ statusCode: 200, headers: {}, body, url: `${server.url}/search` }, endpoint)).toBe("no_results");
      }
    });

    test("an unknown product is the upstream's 404, not a captured product", async () => {
      for (const path of ["/shopping/product/42", "/shopping/product/123", "/shopping/product/123/offers"]) {
        const page = await get(server, path);
        expect({ path, status: page.status, file: page.headers.get("x-replay-file") }).toEqual({ path, status: 404, file: null });
        expect(page.body).toContain("Error 404 (Not Found)!!1");
      }
    });

    test("a query file names cannot spell is found by the query MANIFEST.md gives for the capture", async () => {
      expectPage(await get(server, `/search?q=${encodeURIComponent("初音ミク")}&udm=2`), "images/hatsune-miku-images-ja-2025.html");
      expect((await get(server, `/search?q=${encodeURIComponent("初音ミク")}`)).headers.get("x-replay-file")).toBe("web/hatsune-miku-desktop-ja-2025.html");
      expect((await get(server, `/search?q=${encodeURIComponent("арендовать машину в оаэ")}`)).headers.get("x-replay-file")).toBe("web/rent-car-uae-desktop-ru-2024.html");
    });

    test("autocomplete serves the matching file with its extension's content type", async () => {
      const page = await get(server, "/complete/search?client=toolbar&output=toolbar&q=cheesecake&hl=en");
      expectPage(page, "autocomplete/cheesecake-toolbar-2013.xml");
      expect(page.headers.get("content-type")).toBe("text/xml; charset=UTF-8");
    });

    test("autocomplete without a captured answer is a 404, not invented data", async () => {
      const page = await get(server, "/complete/search?client=firefox&q=espresso");
      expect(page.status).toBe(404);
      expect(page.body).toContain("Error 404 (Not Found)!!1");
    });

    test("the current product panel (ibp=oshop) answers like the upstream's 404", async () => {
      const page = await get(server, "/search?ibp=oshop&q=stove&prds=catalogid:123,pvt:hg");
      expect(page.status).toBe(404);
      expect(page.body).toContain("Error 404 (Not Found)!!1");
    });

    test("html pages carry text/html; charset=UTF-8", async () => {
      const page = await get(server, "/search?q=coffee");
      expect(page.headers.get("content-type")).toBe("text/html; charset=UTF-8");
      expect(Number(page.headers.get("content-length"))).toBe(fileSize("web/coffee-desktop-2023.html"));
    });

    test("a page is gzipped for a client that accepts it (what crosses a proxy is the compressed size), else sent as is", async () => {
      const zipped = await new Promise<{ encoding?: string; length: number }>((done, fail) => {
        httpGet(`${server.url}/search?q=coffee`, { headers: { "accept-encoding": "gzip, deflate, br", "user-agent": UA.desktop } }, (res) => {
          let length = 0;
          res.on("data", (d: Buffer) => (length += d.length));
          res.on("end", () => done({ encoding: res.headers["content-encoding"], length }));
        }).on("error", fail);
      });
      expect(zipped.encoding).toBe("gzip");
      expect(zipped.length).toBe(gzipSync(readFileSync(join(FIXTURES_DIR, "web/coffee-desktop-2023.html"))).length);
      const plain = await get(server, "/search?q=coffee");
      expect(plain.headers.get("content-encoding")).toBeNull();
    });
  });

  describe("the User-Agent picks the web layout", () => {
    test.each([
      ["iPhone", "web-mobile/coffee-mobile-2023.html", UA.iphone],
      ["Android", "web-mobile/coffee-mobile-2023.html", UA.android],
      ["Lynx", "web-nojs/coffee-nojs-2023.html", UA.lynx],
      ["MSIE", "web-nojs/coffee-nojs-2023.html", UA.msie],
      ["Nokia", "web-nojs/coffee-nojs-2023.html", UA.nokia],
      ["desktop Firefox", "web/coffee-desktop-2023.html", UA.desktop],
    ] as [string, Fixture, string][])("%s gets %s", async (_name, fixture, userAgent) => {
      expectPage(await get(server, "/search?q=coffee", userAgent), fixture);
    });

    test("falls back to web/ when the layout's folder has no page for the query", async () => {
      expectPage(await get(server, "/search?q=dell+xps+13+buy", UA.lynx), "web/dell-xps-13-buy-desktop-2023.html");
    });
  });

  describe("faults", () => {
    test("captcha answers 429 with the sorry page", async () => {
      server.setFaults({ mode: "captcha" });
      const page = await get(server, "/search?q=coffee");
      expect(page.status).toBe(429);
      expect(page.body).toContain("unusual traffic");
      expect(page.body).toContain('id="captcha-form"');
      expect(page.headers.get("x-replay-fault")).toBe("captcha");
    });

    test("sorry-redirect answers 302 to /sorry/index?continue=…, which answers 429", async () => {
      server.setFaults({ mode: "sorry-redirect" });
      const page = await get(server, "/search?q=coffee");
      expect(page.status).toBe(302);
      const location = new URL(page.headers.get("location") ?? "");
      expect(location.pathname).toBe("/sorry/index");
      expect(location.searchParams.get("continue")).toBe(`${server.url}/search?q=coffee`);
      const sorry = await get(server, `${location.pathname}${location.search}`);
      expect(sorry.status).toBe(429);
      expect(sorry.body).toContain("unusual traffic");
    });

    test("rate-limit answers 429 with the error template", async () => {
      server.setFaults({ mode: "rate-limit" });
      const page = await get(server, "/search?q=coffee");
      expect(page.status).toBe(429);
      expect(page.body).toContain("Error 429 (Too Many Requests)!!1");
    });

    test("consent-redirect answers 302 to consent.google.com", async () => {
      server.setFaults({ mode: "consent-redirect" });
      const page = await get(server, "/search?q=coffee");
      expect(page.status).toBe(302);
      const location = new URL(page.headers.get("location") ?? "");
      expect(location.host).toBe("consent.google.com");
      expect(location.searchParams.get("continue")).toBe(`${server.url}/search?q=coffee`);
    });

    test("js-wall answers the enablejs noscript page; js-redirect a 302 to it", async () => {
      server.setFaults({ mode: "js-wall" });
      const wall = await get(server, "/search?q=coffee");
      expect(wall.status).toBe(200);
      expect(wall.body).toContain("/httpservice/retry/enablejs?sei=");
      expect(wall.body).toContain('<div id="main"></div>');

      server.setFaults({ mode: "js-redirect" });
      const redirect = await get(server, "/search?q=coffee");
      expect(redirect.status).toBe(302);
      expect(redirect.headers.get("location")).toMatch(/^\/httpservice\/retry\/enablejs\?sei=/);
    });

    test("server-error answers 502 with the error template", async () => {
      server.setFaults({ mode: "server-error" });
      const page = await get(server, "/search?q=coffee");
      expect(page.status).toBe(502);
      expect(page.body).toContain("Error 502 (Server Error)!!1");
    });

    test("truncate sends the first 30% of the real page and ends", async () => {
      server.setFaults({ mode: "truncate" });
      const res = await fetch(`${server.url}/search?q=coffee`);
      const body = Buffer.from(await res.arrayBuffer());
      const full = readFileSync(join(FIXTURES_DIR, "web/coffee-desktop-2023.html"));
      expect(res.status).toBe(200);
      expect(res.headers.get("content-length")).toBeNull();
      expect(body.length).toBe(Math.floor(full.length * 0.3));
      expect(body.equals(full.subarray(0, body.length))).toBe(true);
    });

    test("hang never answers until the client gives up", async () => {
      server.setFaults({ mode: "hang" });
      const started = Date.now();
      await expect(get(server, "/search?q=coffee", UA.desktop, { signal: AbortSignal.timeout(300) })).rejects.toThrow();
      expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    });

    test("reset destroys the socket", async () => {
      server.setFaults({ mode: "reset" });
      await expect(get(server, "/search?q=coffee")).rejects.toThrow();
    });

    test("latency delays the answer by about latencyMs", async () => {
      server.setFaults({ latencyMs: 250 });
      const started = Date.now();
      expectPage(await get(server, "/search?q=coffee"), "web/coffee-desktop-2023.html");
      const elapsed = Date.now() - started;
      expect(elapsed).toBeGreaterThanOrEqual(245);
      expect(elapsed).toBeLessThan(1500);
    });

    test("jitter stays within jitterMs", async () => {
      server.setFaults({ latencyMs: 0, jitterMs: 100 });
      const started = Date.now();
      await get(server, "/complete/search?q=cheesecake");
      expect(Date.now() - started).toBeLessThan(1000);
    });

    test("times expires the faults after N requests", async () => {
      server.setFaults({ mode: "server-error", times: 2 });
      expect((await get(server, "/search?q=coffee")).status).toBe(502);
      expect((await get(server, "/search?q=coffee")).status).toBe(502);
      expectPage(await get(server, "/search?q=coffee"), "web/coffee-desktop-2023.html");
    });

    test("kinds limits the faults to those kinds, and only those count against times", async () => {
      server.setFaults({ mode: "rate-limit", kinds: ["news"], times: 1 });
      expectPage(await get(server, "/search?q=coffee"), "web/coffee-desktop-2023.html");
      expect((await get(server, "/search?q=x&tbm=nws")).status).toBe(429);
      expectPage(await get(server, "/search?q=schloss+johannisberg&tbm=nws"), "news/schloss-johannisberg-news-2025.html");
    });

    test("faults are set, read and cleared over HTTP", async () => {
      const set = await fetch(`${server.url}/__replay/faults`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ mode: "captcha", times: 1 }),
      });
      expect(set.status).toBe(200);
      expect(await set.json()).toEqual({ faults: { mode: "captcha", times: 1 }, remaining: 1 });
      expect((await get(server, "/search?q=coffee")).status).toBe(429);
      expect(await (await fetch(`${server.url}/__replay/faults`)).json()).toEqual({ faults: null, remaining: null });

      await fetch(`${server.url}/__replay/faults`, { method: "POST", body: JSON.stringify({ mode: "server-error" }) });
      expect((await fetch(`${server.url}/__replay/faults`, { method: "DELETE" })).status).toBe(200);
      expectPage(await get(server, "/search?q=coffee"), "web/coffee-desktop-2023.html");
    });

    test("rejects bad fault bodies with 400", async () => {
      for (const body of ['{"mode":"explode"}', '{"times":0}', '{"kinds":["weather"]}', '{"latency":5}', "not json", "[]"]) {
        const res = await fetch(`${server.url}/__replay/faults`, { method: "POST", body });
        expect(res.status).toBe(400);
        expect(((await res.json()) as { error: string }).error).toBeTruthy();
      }
      expect(() => server.setFaults({ mode: "explode" as never })).toThrow(/mode must be one of/);
    });
  });

  describe("request log", () => {
    test("records method, path, query, user agent, time, kind and fault", async () => {
      server.setFaults({ mode: "server-error", times: 1 });
      await get(server, "/search?q=coffee&tbm=nws&hl=en", UA.lynx);
      await get(server, "/wml/search?q=tea", UA.nokia);
      const before = Date.now();
      const log = (await (await fetch(`${server.url}/__replay/requests`)).json()) as unknown[];
      expect(log).toEqual([
        { method: "GET", path: "/search", query: { q: "coffee", tbm: "nws", hl: "en" }, userAgent: UA.lynx, at: expect.any(String), atMs: expect.any(Number), kind: "news", fault: "server-error" },
        { method: "GET", path: "/wml/search", query: { q: "tea" }, userAgent: UA.nokia, at: expect.any(String), atMs: expect.any(Number), kind: "web" },
      ]);
      expect(server.requests()).toEqual(log);
      const at = Date.parse((log[0] as { at: string }).at);
      expect(before - at).toBeLessThan(5000);
      expect(Math.abs((log[0] as { atMs: number }).atMs - at)).toBeLessThan(1);

      expect((await fetch(`${server.url}/__replay/requests`, { method: "DELETE" })).status).toBe(200);
      expect(server.requests()).toEqual([]);
    });
  });

  describe("bad input", () => {
    test("unknown paths get the upstream's 404 page", async () => {
      const page = await get(server, "/maps/search?q=coffee");
      expect(page.status).toBe(404);
      expect(page.body).toContain("Error 404 (Not Found)!!1");
      expect(page.body).toContain("<code>/maps/search</code>");
    });

    test("path traversal never reaches the file system", async () => {
      for (const path of ["/../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/shopping/product/..%2F..%2Fetc%2Fpasswd", "/web/coffee-desktop-2023.html"]) {
        expect((await get(server, path)).status).toBe(404);
      }
      // A query only selects among listed names: this one matches none, so nothing was captured for it.
      const traversal = await get(server, "/search?q=../../../../etc/passwd");
      expect(traversal.headers.get("x-replay-file")).toBe(NO_RESULTS);
      expect(traversal.body).not.toContain("root:");
    });

    test("malformed requests get a 400, and the server keeps serving", async () => {
      const reply = await new Promise<string>((done, fail) => {
        const socket = connect(server.port, "127.0.0.1", () => socket.write("GARBAGE \u0000 HTTP/9\r\n\r\n"));
        let text = "";
        socket.on("data", (chunk) => (text += chunk.toString()));
        socket.on("end", () => done(text));
        socket.on("error", fail);
      });
      expect(reply).toMatch(/^HTTP\/1\.1 400/);
      expectPage(await get(server, "/search?x=%E0%A4%A&y=%ZZ&q=coffee"), "web/coffee-desktop-2023.html");
    });

    test("non-GET methods on upstream paths get 405", async () => {
      const res = await fetch(`${server.url}/search?q=coffee`, { method: "POST", body: "x" });
      expect(res.status).toBe(405);
    });

    test("oversized control bodies are refused", async () => {
      const status = await new Promise<number>((done, fail) => {
        const req = request(`${server.url}/__replay/faults`, { method: "POST" }, (res) => {
          res.resume();
          done(res.statusCode ?? 0);
        });
        req.on("error", fail);
        req.end("x".repeat(100 * 1024));
      });
      expect(status).toBe(413);
    });
  });
});

describeIfFixtures("replay modes and options", () => {
  test("single-page mode answers one file for everything", async () => {
    const server = await startReplayServer({ page: join(FIXTURES_DIR, "web/243-desktop-2021-wayback.html") });
    try {
      for (const path of ["/search?q=coffee", "/search?q=x&tbm=nws", "/complete/search?q=cheesecake", "/anything"]) {
        const page = await get(server, path);
        expect(page.status).toBe(200);
        expect(page.body).toContain(MARKER["web/243-desktop-2021-wayback.html"]);
      }
    } finally {
      await server.close();
    }
  });

  test("single-page mode takes a page relative to dir", async () => {
    const server = await startReplayServer({ dir: FIXTURES_DIR, page: "web/coffee-desktop-2023.html" });
    try {
      expectPage(await get(server, "/search?q=dell&tbm=shop", UA.iphone), "web/coffee-desktop-2023.html");
    } finally {
      await server.close();
    }
  });

  test("the route table is checked first, then the directory", async () => {
    const server = await startReplayServer({
      dir: FIXTURES_DIR,
      routes: [
        { kind: "web", q: "Blocked Query", file: "blocked/sorry-recaptcha-2026.html", status: 429 },
        { kind: "news", file: "web/243-desktop-2021-wayback.html" },
        { q: "13239497633151178800", kind: "sellers", file: "shopping-product/product-13239497633151178800-pt-br-2021.html" },
      ],
    });
    try {
      const blocked = await get(server, "/search?q=blocked+query");
      expect(blocked.status).toBe(429);
      expect(blocked.body).toContain("unusual traffic");
      expect(blocked.headers.get("x-replay-file")).toBe("blocked/sorry-recaptcha-2026.html");
      expectPage(await get(server, "/search?q=coffee&tbm=nws"), "web/243-desktop-2021-wayback.html");
      expectPage(await get(server, "/shopping/product/13239497633151178800/online"), "shopping-product/product-13239497633151178800-pt-br-2021.html");
      expectPage(await get(server, "/search?q=coffee"), "web/coffee-desktop-2023.html");
    } finally {
      await server.close();
    }
  });

  test("a configured default replaces the first file of the folder", async () => {
    const server = await startReplayServer({ dir: FIXTURES_DIR, defaults: { web: "web/hotels-nyc-desktop-2023.html" } });
    try {
      expectPage(await get(server, "/search?q=nothing+captured"), "web/hotels-nyc-desktop-2023.html");
      expectPage(await get(server, "/search?q=coffee"), "web/coffee-desktop-2023.html");
    } finally {
      await server.close();
    }
  });

  test("fallback: true answers a miss with the kind's first capture (opt-in, for tests that want any page)", async () => {
    const server = await startReplayServer({ dir: FIXTURES_DIR, fallback: true });
    try {
      expectPage(await get(server, "/search?q=nothing+captured+for+this"), "web/243-desktop-2021-wayback.html");
      expectPage(await get(server, "/search?q=nothing&tbm=shop"), "shopping/ean-7891114090307-shopping-pt-br-2021.html");
      expectPage(await get(server, "/shopping/product/42"), "shopping-product/product-13239497633151178800-pt-br-2021.html");
      // Still never for suggestions: an invented list would be data nobody captured.
      expect((await get(server, "/complete/search?client=firefox&q=espresso")).status).toBe(404);
    } finally {
      await server.close();
    }
  });

  test("faults given at start apply from the first request", async () => {
    const server = await startReplayServer({ dir: FIXTURES_DIR, faults: { mode: "rate-limit", times: 1 } });
    try {
      expect((await get(server, "/search?q=coffee")).status).toBe(429);
      expectPage(await get(server, "/search?q=coffee"), "web/coffee-desktop-2023.html");
    } finally {
      await server.close();
    }
  });

  test("close() ends hanging requests and idle keep-alive sockets", async () => {
    const server = await startReplayServer({ dir: FIXTURES_DIR });
    expectPage(await get(server, "/search?q=coffee"), "web/coffee-desktop-2023.html"); // leaves a keep-alive socket
    server.setFaults({ mode: "hang" });
    const hanging = get(server, "/search?q=coffee");
    hanging.catch(() => undefined);
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await server.close();
    await expect(hanging).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(1000);
  });

  test("refuses to start without pages, or with a missing file", async () => {
    await expect(startReplayServer({})).rejects.toThrow(/give `dir`/);
    await expect(startReplayServer({ dir: join(FIXTURES_DIR, "no-such-folder") })).rejects.toThrow(/not a directory/);
    await expect(startReplayServer({ dir: FIXTURES_DIR, page: "web/missing.html" })).rejects.toThrow(/not a readable file/);
    await expect(startReplayServer({ dir: FIXTURES_DIR, faults: { mode: "nope" as never } })).rejects.toThrow(/mode must be/);
    await expect(
      startReplayServer({ dir: FIXTURES_DIR, routes: [{ kind: "weather" as never, file: "web/coffee-desktop-2023.html" }] }),
    ).rejects.toThrow(/route kind weather/);
  });
});
