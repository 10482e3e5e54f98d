/**
 * Guard mode against real TLS clients on 127.0.0.1: Node's own TLS (never browser-shaped) and impit's
 * Chrome 124 ("chrome"), Chrome 151 and Firefox profiles. Each behaviour on its own, then the preset over
 * the control endpoint, the stats, the request log and faults after the guard. The challenge page's script
 * runs in node:vm against a fake navigator, window, location and document (headless detection included).
 */
import { Agent, request } from "node:https";
import { runInNewContext } from "node:vm";
import { Impit } from "impit";
import { FIXTURES_DIR, fixturesAvailable } from "./fixtures-dir.js";
import { startReplayServer, type ReplayServer } from "../src/index.js";
import { ChallengeSigner, challengePage, challengeToken, isAutomated, type AutomationNavigator, type AutomationWindow } from "../src/challenge.js";
import { GuardError, guardPreset } from "../src/guard.js";

const describeIfFixtures = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) {
  console.warn(`guard tests skipped: no captured pages at ${FIXTURES_DIR} (set SERP_FIXTURES_DIR)`);
}

const UA = {
  chrome: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/151.0.0.0 Safari/537.36",
  firefox: "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:144.0) Gecko/20100101 Firefox/144.0",
  lynx: "Lynx/2.8.9rel.1 libwww-FM/2.14 SSL-MM/1.4.1 OpenSSL/1.1.1",
  msie: "Mozilla/5.0 (MSIE 10.0; Windows NT 6.1; Trident/5.0)",
  nokia: "Nokia6230i/2.0 (03.80) Profile/MIDP-2.0 Configuration/CLDC-1.1",
  headless: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36",
};

/** Strings known to be in exactly the named captured file. */
const COFFEE = { file: "web/coffee-desktop-2023.html", marker: "kEI:'k17AZJSJEpbPwPAPwbyjqAs'" };
const COFFEE_NOJS = { file: "web-nojs/coffee-nojs-2023.html", marker: "ei=4hV6ZOuZK9mekdUP97uUwA0" };
const RESULT_MARKERS = ["data-hveid", 'id="rso"', "/url?q=", 'class="g"'];
const JS_WALL = "/httpservice/retry/enablejs";

/** A headless Chromium launched with AutomationControlled off, a user agent without "Headless" and a locale. */
const CAREFUL: AutomationNavigator = {
  webdriver: false,
  userAgent: UA.chrome,
  userAgentData: { brands: [{ brand: "Chromium" }, { brand: "Not.A/Brand" }] },
  languages: ["en-US", "en"],
};
const WINDOW: AutomationWindow = { outerWidth: 1280, outerHeight: 800 };
const PAGE_URL = "https://replay.test/search?q=coffee";

/** Runs a challenge page's inline script as a browser at PAGE_URL would; returns what it did. */
function runChallenge(page: string, navigator = CAREFUL, window = WINDOW): { cookie: string; reloaded: boolean; replacedWith?: string } {
  const script = /<script>([\s\S]*?)<\/script>/.exec(page)?.[1];
  expect(script).toBeDefined();
  const location = {
    href: PAGE_URL,
    reloaded: false,
    replacedWith: undefined as string | undefined,
    reload() { this.reloaded = true; },
    replace(url: string) { this.replacedWith = url; },
  };
  const document = { cookie: "" };
  runInNewContext(script ?? "", { navigator, window, location, document }, { timeout: 2000 });
  return { cookie: document.cookie, reloaded: location.reloaded, replacedWith: location.replacedWith };
}

/** Runs the script as a clean browser; returns the cookie it sets. */
function solve(page: string): string {
  const ran = runChallenge(page);
  expect(ran).toMatchObject({ reloaded: true, replacedWith: undefined });
  return ran.cookie;
}

describe("headless detection, without a browser", () => {
  test("isAutomated: a careful headless Chromium shows no marker; each marker alone is enough", () => {
    expect(isAutomated(CAREFUL, WINDOW)).toBe(false);
    // Headless new mode has plugins and a real window size: neither is looked at.
    expect(isAutomated({ ...CAREFUL, userAgentData: undefined }, WINDOW)).toBe(false);
    const caught: [string, AutomationNavigator, AutomationWindow][] = [
      ["webdriver", { ...CAREFUL, webdriver: true }, WINDOW],
      ["HeadlessChrome UA", { ...CAREFUL, userAgent: UA.headless }, WINDOW],
      ["HeadlessChrome brand", { ...CAREFUL, userAgentData: { brands: [{ brand: "HeadlessChrome" }, { brand: "Chromium" }] } }, WINDOW],
      ["no languages", { ...CAREFUL, languages: [] }, WINDOW],
      ["languages missing", { ...CAREFUL, languages: undefined }, WINDOW],
      ["zero outer window", CAREFUL, { outerWidth: 0, outerHeight: 0 }],
    ];
    for (const [marker, nav, win] of caught) expect([marker, isAutomated(nav, win)]).toEqual([marker, true]);
  });

  test("the page's script sends an automated browser to /sorry/index and lets a clean one set the cookie", () => {
    const signer = new ChallengeSigner();
    const issued = signer.issue(60_000);
    const page = challengePage("coffee", "sei", issued, 60_000, true);

    const automated = runChallenge(page, { ...CAREFUL, webdriver: true });
    expect(automated).toEqual({ cookie: "", reloaded: false, replacedWith: `/sorry/index?continue=${encodeURIComponent(PAGE_URL)}` });
    expect(runChallenge(page, CAREFUL, { outerWidth: 0, outerHeight: 0 }).replacedWith).toMatch(/^\/sorry\/index\?continue=/);

    const cookie = solve(page);
    expect(signer.verify(cookie.split("; ")[0])).toBe(true);
    // Without headlessDetect the script does not look at the browser.
    const plain = challengePage("coffee", "sei", issued, 60_000, false);
    expect(plain).not.toContain("webdriver");
    expect(runChallenge(plain, { ...CAREFUL, webdriver: true }).reloaded).toBe(true);
  });
});

interface Answer {
  status: number;
  header(name: string): string | undefined;
  body: string;
}

describeIfFixtures("replay guard mode", () => {
  let server: ReplayServer;
  let agent: Agent;
  const impit = {
    chrome124: new Impit({ browser: "chrome", ignoreTlsErrors: true }),
    chrome151: new Impit({ browser: "chrome151", ignoreTlsErrors: true }),
    firefox: new Impit({ browser: "firefox", ignoreTlsErrors: true }),
  };
  type Browser = keyof typeof impit;

  /** Node's own TLS, trusting the server's certificate. */
  function viaNode(path: string, userAgent = UA.chrome, init: { method?: string; body?: string; cookie?: string } = {}): Promise<Answer> {
    return new Promise((done, fail) => {
      const headers: Record<string, string> = { "user-agent": userAgent, ...(init.cookie ? { cookie: init.cookie } : {}) };
      const req = request(new URL(path, server.url), { agent, method: init.method ?? "GET", headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () => {
          const header = (name: string) => res.headers[name] as string | undefined;
          done({ status: res.statusCode ?? 0, header, body: Buffer.concat(chunks).toString("utf8") });
        });
        res.on("error", fail);
      });
      req.on("error", fail);
      req.end(init.body);
    });
  }

  async function viaImpit(browser: Browser, path: string, userAgent = UA.chrome, cookie?: string): Promise<Answer> {
    const headers: Record<string, string> = { "user-agent": userAgent, ...(cookie ? { cookie } : {}) };
    const res = await impit[browser].fetch(`${server.url}${path}`, { headers, redirect: "manual" });
    const body = await res.text();
    return { status: res.status, header: (name) => res.headers.get(name) ?? undefined, body };
  }

  function expectPage(page: Answer, fixture: { file: string; marker: string }): void {
    expect(page.status).toBe(200);
    expect(page.header("x-replay-file")).toBe(fixture.file);
    expect(page.body).toContain(fixture.marker);
  }

  function expectForbidden(page: Answer, guard: "tls" | "ua"): void {
    expect(page.status).toBe(403);
    expect(page.header("x-replay-guard")).toBe(guard);
    expect(page.body).toContain("Error 403 (Forbidden)!!1");
  }

  function expectUnsupported(page: Answer): void {
    expect(page.status).toBe(200);
    expect(page.header("x-replay-guard")).toBe("dead-agent");
    expect(page.body).toContain("isn't supported anymore");
    for (const marker of RESULT_MARKERS) expect(page.body).not.toContain(marker);
  }

  function expectChallenge(page: Answer): void {
    expect(page.status).toBe(200);
    expect(page.header("x-replay-guard")).toBe("challenge");
    expect(page.body).toContain(JS_WALL);
    for (const marker of RESULT_MARKERS) expect(page.body).not.toContain(marker);
  }

  beforeAll(async () => {
    server = await startReplayServer({ dir: FIXTURES_DIR, https: true });
    agent = new Agent({ ca: server.certPem, keepAlive: true });
  });
  afterAll(async () => {
    agent.destroy();
    await server.close();
  });
  beforeEach(() => {
    server.clearGuard();
    server.clearFaults();
    server.clearRequests();
    server.resetStats();
  });

  test("https serves a self-signed localhost certificate and h2", async () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(server.certPem).toContain("-----BEGIN CERTIFICATE-----");
    await viaImpit("chrome151", "/search?q=coffee");
    expect(server.requests()[0]).toMatchObject({ httpVersion: "2.0", tls: "chrome" });
  });

  test("unguarded, every client gets the pages", async () => {
    expectPage(await viaNode("/search?q=coffee", UA.firefox), COFFEE);
    for (const browser of ["chrome124", "chrome151", "firefox"] as const) {
      expectPage(await viaImpit(browser, "/search?q=coffee", UA.firefox), COFFEE);
    }
    expect(server.requests().map((r) => r.guard)).toEqual([undefined, undefined, undefined, undefined]);
  });

  test("tls browser: Node's TLS is refused, impit's Chrome and Firefox pass", async () => {
    server.setGuard({ tls: "browser" });
    expectForbidden(await viaNode("/search?q=coffee"), "tls");
    expectPage(await viaImpit("chrome124", "/search?q=coffee"), COFFEE);
    expectPage(await viaImpit("firefox", "/search?q=coffee", UA.firefox), COFFEE);
  });

  test("tls chrome: Chrome 124 (no GREASE) and Firefox are refused, Chrome 151 passes", async () => {
    server.setGuard({ tls: "chrome" });
    expectForbidden(await viaImpit("chrome124", "/search?q=coffee"), "tls");
    expectForbidden(await viaImpit("firefox", "/search?q=coffee", UA.firefox), "tls");
    expectPage(await viaImpit("chrome151", "/search?q=coffee"), COFFEE);
    expect(server.stats().refused).toEqual({ tls: 2, ua: 0, deadAgent: 0, rate: 0, headless: 0 });
  });

  test("uaConsistency: a UA whose family the ClientHello contradicts is refused; no claimed family is not checked", async () => {
    server.setGuard({ uaConsistency: true });
    expectForbidden(await viaImpit("chrome151", "/search?q=coffee", UA.firefox), "ua");
    expectForbidden(await viaNode("/search?q=coffee", UA.chrome), "ua");
    expectPage(await viaImpit("chrome151", "/wml/search?q=coffee", UA.nokia), COFFEE_NOJS);
    expectPage(await viaImpit("chrome151", "/search?q=coffee", UA.chrome), COFFEE);
    expectPage(await viaImpit("firefox", "/search?q=coffee", UA.firefox), COFFEE);
  });

  test("deadAgents: Lynx and old IE always get the unsupported page; Nokia only without a browser's ClientHello", async () => {
    server.setGuard({ deadAgents: { always: ["Lynx", "MSIE", "Trident"], unlessBrowserTls: ["Nokia", "MIDP"] } });
    expectUnsupported(await viaImpit("chrome151", "/search?q=coffee", UA.lynx));
    expectUnsupported(await viaImpit("chrome151", "/wml/search?q=coffee", UA.msie));
    expectUnsupported(await viaNode("/wml/search?q=coffee", UA.nokia));
    expectPage(await viaImpit("chrome151", "/wml/search?q=coffee", UA.nokia), COFFEE_NOJS);
    expect(server.stats().refused.deadAgent).toBe(3);
  });

  describe("jsChallenge", () => {
    beforeEach(() => server.setGuard({ jsChallenge: { paths: ["/search", "/shopping/"], ttlMs: 600_000 } }));

    test("the challenge's script earns the SG_SS cookie that gets the results page", async () => {
      const first = await viaImpit("chrome151", "/search?q=coffee");
      expectChallenge(first);
      const cookie = solve(first.body);
      const [pair = "", ...attributes] = cookie.split("; ");
      expect(attributes).toEqual(["path=/", "max-age=600"]);
      const [nonce = "", expiry = "", token = ""] = pair.replace(/^SG_SS=/, "").split(".");
      expect(token).toBe(challengeToken(nonce));
      expect(Number(expiry) - Date.now()).toBeGreaterThan(590_000);

      expectPage(await viaImpit("chrome151", "/search?q=coffee", UA.chrome, pair), COFFEE);
      expectPage(await viaNode("/search?q=coffee", UA.chrome, { cookie: `NID=1; ${pair}` }), COFFEE);
      expect(server.stats()).toMatchObject({ challenged: 1, challengePassed: 2 });
    });

    test("a tampered cookie gets the challenge again", async () => {
      const pair = solve((await viaNode("/shopping/product/13239497633151178800")).body).split("; ")[0] ?? "";
      const [nonce = "", expiry = "", token = ""] = pair.replace(/^SG_SS=/, "").split(".");
      const flip = (hex: string) => `${hex.slice(0, -1)}${hex.endsWith("0") ? "1" : "0"}`;
      for (const forged of [`${nonce}.${expiry}.${flip(token)}`, `${nonce}.${Number(expiry) + 1000}.${token}`, `${flip(nonce)}.${expiry}.${challengeToken(flip(nonce))}`]) {
        expectChallenge(await viaNode("/search?q=coffee", UA.chrome, { cookie: `SG_SS=${forged}` }));
      }
      expectChallenge(await viaNode("/search?q=coffee", UA.chrome, { cookie: "SG_SS=garbage" }));
    });

    test("an expired cookie gets the challenge again", async () => {
      server.setGuard({ jsChallenge: { paths: ["/search"], ttlMs: 1000 } });
      const pair = solve((await viaNode("/search?q=coffee")).body).split("; ")[0] ?? "";
      expectPage(await viaNode("/search?q=coffee", UA.chrome, { cookie: pair }), COFFEE);
      await new Promise((done) => setTimeout(done, 1100));
      expectChallenge(await viaNode("/search?q=coffee", UA.chrome, { cookie: pair }));
    });

    test("/wml/search and /complete/search are not challenged", async () => {
      expectPage(await viaImpit("chrome151", "/wml/search?q=coffee", UA.nokia), COFFEE_NOJS);
      const suggestions = await viaImpit("chrome151", "/complete/search?client=toolbar&output=toolbar&q=cheesecake");
      expect(suggestions.status).toBe(200);
      expect(suggestions.header("x-replay-guard")).toBeUndefined();
      expect(server.stats().challenged).toBe(0);
    });
  });

  describe("headlessDetect", () => {
    beforeEach(() => server.setGuard({ jsChallenge: { paths: ["/search", "/shopping/"], ttlMs: 600_000 }, headlessDetect: true }));

    test("a HeadlessChrome UA on a challenged path goes to /sorry/ at once, even with a valid cookie", async () => {
      const refused = await viaImpit("chrome151", "/search?q=coffee", UA.headless);
      expect(refused.status).toBe(302);
      expect(refused.header("x-replay-guard")).toBe("headless");
      const location = refused.header("location") ?? "";
      expect(location.startsWith(`${server.url}/sorry/index?continue=${encodeURIComponent(`${server.url}/search?q=coffee`)}&q=`)).toBe(true);
      const captcha = await viaImpit("chrome151", location.slice(server.url.length), UA.headless);
      expect(captcha.status).toBe(429);
      expect(captcha.body).toContain('id="captcha-form"');

      const pair = solve((await viaImpit("chrome151", "/search?q=coffee")).body).split("; ")[0] ?? "";
      expect((await viaImpit("chrome151", "/search?q=coffee", UA.headless, pair)).header("x-replay-guard")).toBe("headless");
      // Paths without the challenge are not checked.
      expectPage(await viaImpit("chrome151", "/wml/search?q=coffee", UA.headless), COFFEE_NOJS);
      expect(server.requests().map((r) => r.guard)).toEqual(["headless", undefined, "challenge", "headless", undefined]);
      expect(server.stats()).toMatchObject({ refused: { headless: 2 }, challenged: 1 });
    });

    test("the challenge page sends an automated browser to /sorry/ and lets a careful one earn the cookie", async () => {
      const page = await viaImpit("chrome151", "/search?q=coffee");
      expectChallenge(page);
      for (const automated of [{ ...CAREFUL, webdriver: true }, { ...CAREFUL, languages: [] }]) {
        expect(runChallenge(page.body, automated)).toEqual({ cookie: "", reloaded: false, replacedWith: `/sorry/index?continue=${encodeURIComponent(PAGE_URL)}` });
      }
      const pair = solve(page.body).split("; ")[0] ?? "";
      expectPage(await viaImpit("chrome151", "/search?q=coffee", UA.chrome, pair), COFFEE);
    });
  });

  test("rate: the (limit+1)th request of a client in the window gets 429, or the sorry redirect", async () => {
    server.setGuard({ rate: { limit: 3, windowMs: 60_000, answer: "429" } });
    for (let i = 0; i < 3; i++) expect((await viaNode("/complete/search?client=toolbar&output=toolbar&q=cheesecake")).status).toBe(200);
    const limited = await viaNode("/complete/search?client=toolbar&output=toolbar&q=cheesecake");
    expect(limited.status).toBe(429);
    expect(limited.body).toContain("Error 429 (Too Many Requests)!!1");
    // Another client (another JA4) has its own window.
    expect((await viaImpit("chrome151", "/search?q=coffee")).status).toBe(200);

    server.setGuard({ rate: { limit: 1, windowMs: 60_000, answer: "sorry" } });
    expect((await viaImpit("chrome151", "/search?q=coffee")).status).toBe(200);
    const sorry = await viaImpit("chrome151", "/search?q=coffee");
    expect(sorry.status).toBe(302);
    expect(sorry.header("location")).toMatch(new RegExp(`^${server.url}/sorry/index\\?continue=${encodeURIComponent(`${server.url}/search?q=coffee`).replace(/[.?]/g, "\\$&")}&q=`));
    expect(server.stats().refused.rate).toBe(2);
  });

  test("the 2026-11 preset over the control endpoint", async () => {
    const set = await viaNode("/__replay/guard", UA.chrome, { method: "POST", body: JSON.stringify({ preset: "2026-11" }) });
    expect(set.status).toBe(200);
    expect(JSON.parse(set.body)).toEqual(guardPreset("2026-11"));
    expect(JSON.parse((await viaNode("/__replay/guard")).body)).toEqual(server.guard());

    expectForbidden(await viaNode("/search?q=coffee"), "tls");
    expectForbidden(await viaImpit("chrome124", "/wml/search?q=coffee", UA.nokia), "tls");
    expectForbidden(await viaImpit("chrome151", "/search?q=coffee", UA.firefox), "ua");
    expectUnsupported(await viaImpit("chrome151", "/search?q=coffee", UA.lynx));
    expect((await viaImpit("chrome151", "/search?q=coffee", UA.headless)).header("x-replay-guard")).toBe("headless");
    expectChallenge(await viaImpit("chrome151", "/search?q=coffee", UA.chrome));
    expectPage(await viaImpit("chrome151", "/wml/search?q=coffee", UA.nokia), COFFEE_NOJS);
    expect(server.requests().map((r) => r.guard)).toEqual(["tls", "tls", "ua", "dead-agent", "headless", "challenge", undefined]);

    const cleared = await viaNode("/__replay/guard", UA.chrome, { method: "DELETE" });
    expect(JSON.parse(cleared.body)).toEqual({});
    expectPage(await viaNode("/search?q=coffee"), COFFEE);
  });

  test("bad guard bodies get 400 with an error, and change nothing", async () => {
    server.setGuard({ tls: "browser" });
    const bodies = [
      "not json",
      JSON.stringify([]),
      JSON.stringify({ tls: "maybe" }),
      JSON.stringify({ unknown: true }),
      JSON.stringify({ preset: "1999-01" }),
      JSON.stringify({ preset: "2026-11", tls: "off" }),
      JSON.stringify({ uaConsistency: "yes" }),
      JSON.stringify({ headlessDetect: true }),
      JSON.stringify({ headlessDetect: true, jsChallenge: false }),
      JSON.stringify({ jsChallenge: { paths: ["search"], ttlMs: 60_000 } }),
      JSON.stringify({ jsChallenge: { paths: ["/search"] } }),
      JSON.stringify({ deadAgents: { always: ["("], unlessBrowserTls: [] } }),
      JSON.stringify({ rate: { limit: 0, windowMs: 1000, answer: "429" } }),
      JSON.stringify({ rate: { limit: 1, windowMs: 1000, answer: "418" } }),
      JSON.stringify({ rate: { limit: 1, windowMs: 1000, answer: "429", burst: 2 } }),
    ];
    for (const body of bodies) {
      const res = await viaNode("/__replay/guard", UA.chrome, { method: "POST", body });
      expect([body, res.status]).toEqual([body, 400]);
      expect(JSON.parse(res.body)).toEqual({ error: expect.any(String) });
    }
    expect(server.guard()).toEqual({ tls: "browser" });
    expect(() => server.setGuard({ tls: "firm" } as never)).toThrow(GuardError);
  });

  test("stats: one kept-alive impit client makes one handshake for 50 requests over h2", async () => {
    const client = new Impit({ browser: "chrome151", ignoreTlsErrors: true });
    for (let i = 0; i < 50; i++) {
      const res = await client.fetch(`${server.url}/complete/search?client=toolbar&output=toolbar&q=cheesecake`);
      await res.text();
    }
    expect(server.stats()).toEqual({ tlsHandshakes: 1, requests: 50, refused: { tls: 0, ua: 0, deadAgent: 0, rate: 0, headless: 0 }, challenged: 0, challengePassed: 0 });
    expect(new Set(server.requests().map((r) => r.httpVersion))).toEqual(new Set(["2.0"]));
    const overHttp = JSON.parse((await viaNode("/__replay/stats")).body) as { tlsHandshakes: number; requests: number };
    expect(overHttp).toMatchObject({ requests: 50 });
    expect((await viaNode("/__replay/stats", UA.chrome, { method: "DELETE" })).status).toBe(200);
    expect(server.stats().requests).toBe(0);
  });

  test("the request log records the protocol, JA4, TLS family and what the guard did", async () => {
    server.setGuard({ tls: "chrome" });
    await viaNode("/search?q=coffee", UA.nokia);
    await viaImpit("chrome151", "/search?q=coffee");
    const [refused, passed] = server.requests();
    expect(refused).toMatchObject({ path: "/search", kind: "web", userAgent: UA.nokia, httpVersion: "1.1", tls: "other", guard: "tls" });
    // Node offers no ALPN: "00" in JA4's first part.
    expect(refused?.ja4).toMatch(/^t13i\d{4}00_/);
    expect(passed).toMatchObject({ httpVersion: "2.0", tls: "chrome", ja4: expect.stringMatching(/^t13i\d{4}h2_/) });
    expect(passed?.guard).toBeUndefined();
  });

  test("faults still apply once the guard lets a request through, over h2 and HTTP/1.1", async () => {
    server.setGuard({ tls: "browser" });
    server.setFaults({ mode: "server-error", times: 1 });
    expect((await viaImpit("chrome151", "/search?q=coffee")).status).toBe(502);
    server.setFaults({ mode: "reset", times: 1 });
    await expect(viaImpit("chrome151", "/search?q=coffee")).rejects.toThrow();
    // Only that stream was reset: the same client carries on.
    expectPage(await viaImpit("chrome151", "/search?q=coffee"), COFFEE);
    server.clearGuard();
    server.setFaults({ mode: "reset", times: 1 });
    await expect(viaNode("/search?q=coffee")).rejects.toThrow();
  });

  test("a guard that reads the fingerprint forces https on; plain HTTP refuses one at run time", async () => {
    const guarded = await startReplayServer({ dir: FIXTURES_DIR, guard: "2026-11" });
    const plain = await startReplayServer({ dir: FIXTURES_DIR, guard: { jsChallenge: { paths: ["/search"], ttlMs: 60_000 } } });
    try {
      expect(guarded.url).toMatch(/^https:/);
      expect(guarded.guard()).toEqual(guardPreset("2026-11"));
      expect(plain.url).toMatch(/^http:/);
      expect(plain.certPem).toBeUndefined();
      expect(() => plain.setGuard({ tls: "browser" })).toThrow(/https/);
      const res = await fetch(`${plain.url}/__replay/guard`, { method: "POST", body: JSON.stringify({ preset: "2026-11" }) });
      expect(res.status).toBe(400);
      // Guards that need no fingerprint work over plain HTTP.
      expect((await fetch(`${plain.url}/search?q=coffee`)).headers.get("x-replay-guard")).toBe("challenge");
    } finally {
      await Promise.all([guarded.close(), plain.close()]);
    }
  });
});
