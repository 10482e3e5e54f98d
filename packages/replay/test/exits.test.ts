/**
 * The replay's exit model over real loopback HTTP: clients bind their own 127.x source address
 * (`localAddress`), as the test exits do. Country and class per address (exact, prefix rule, default), the
 * search budget and its flag, /sorry/ pages with a fresh data-s, the challenge cookie bound to the address
 * that earned it, and the control endpoints.
 */
import { request } from "node:http";
import { FIXTURES_DIR, fixturesAvailable } from "./fixtures-dir.js";
import { startReplayServer, type ReplayServer } from "../src/index.js";
import { challengeToken } from "../src/challenge.js";
import { parseExits, ExitsError, recaptchaTokenFor } from "../src/exits.js";

const describeIfFixtures = fixturesAvailable ? describe : describe.skip;

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

function get(base: string, path: string, from: string, headers: Record<string, string> = {}, method = "GET", body?: string): Promise<Answer> {
  const url = new URL(path, base);
  return new Promise((done, fail) => {
    const req = request({ host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, method, headers, localAddress: from, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", fail);
    req.end(body);
  });
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe("parseExits", () => {
  it("takes addresses, prefix rules, a default, a budget and the CAPTCHA settings", () => {
    expect(
      parseExits({
        addresses: { "::ffff:127.0.3.1": { country: "DE", class: "residential" } },
        rules: [{ prefix: "127.110.", country: "fr", class: "mobile" }],
        default: { country: "us", class: "datacenter" },
        budget: { searches: 5, windowMs: 1000, flagMs: 2000 },
        siteKey: "key_1",
      }),
    ).toEqual({
      addresses: { "127.0.3.1": { country: "de", class: "residential" } },
      rules: [{ prefix: "127.110.", country: "fr", class: "mobile" }],
      default: { country: "us", class: "datacenter" },
      budget: { searches: 5, windowMs: 1000, flagMs: 2000 },
      siteKey: "key_1",
    });
  });

  it.each([
    [[], /must be an object/],
    [{ nope: 1 }, /unknown exits keys: nope/],
    [{ addresses: { "127.0.0.2": { country: "deu", class: "residential" } } }, /two-letter/],
    [{ default: { country: "de", class: "satellite" } }, /class must be one of/],
    [{ rules: [{ country: "de", class: "mobile" }] }, /prefix/],
    [{ budget: { searches: 0, windowMs: 1, flagMs: 1 } }, /budget.searches/],
    [{ siteKey: "a b" }, /siteKey/],
  ])("refuses %j", (input, message) => {
    expect(() => parseExits(input)).toThrow(ExitsError);
    expect(() => parseExits(input)).toThrow(message);
  });
});

describeIfFixtures("exit model", () => {
  let replay: ReplayServer;

  beforeAll(async () => {
    replay = await startReplayServer({ dir: FIXTURES_DIR });
  });
  afterAll(async () => {
    await replay?.close();
  });
  beforeEach(() => {
    replay.clearExits();
    replay.clearGuard();
    replay.clearRequests();
  });

  it("is off by default: no address in the log, no budget", async () => {
    for (let i = 0; i < 3; i += 1) expect((await get(replay.url, "/search?q=coffee", "127.0.9.1")).status).toBe(200);
    expect(replay.requests()[0]!.address).toBeUndefined();
    expect(replay.exitStats().addresses).toEqual([]);
  });

  it("gives each address its country and class: exact entry, longest prefix rule, else the default", async () => {
    replay.setExits({
      addresses: { "127.0.3.1": { country: "de", class: "residential" } },
      rules: [
        { prefix: "127.110.", country: "fr", class: "residential" },
        { prefix: "127.110.7.", country: "jp", class: "mobile" },
      ],
      default: { country: "zz", class: "datacenter" },
    });
    const cases: [string, string, string][] = [
      ["127.0.3.1", "de", "residential"],
      ["127.110.0.2", "fr", "residential"],
      ["127.110.7.9", "jp", "mobile"],
      ["127.0.3.2", "zz", "datacenter"],
    ];
    for (const [address, country, cls] of cases) {
      const res = await get(replay.url, "/search?q=coffee&gl=fr", address);
      expect(res.status).toBe(200);
      expect([res.headers["x-replay-exit-country"], res.headers["x-replay-exit-class"]]).toEqual([country, cls]);
    }
    expect(replay.requests().map((r) => [r.address, r.exitCountry, r.exitClass])).toEqual(cases);
    const stats = replay.exitStats();
    expect(stats.totals).toMatchObject({ searches: 4, glMismatches: 3 });
    expect(stats.addresses.find((a) => a.address === "127.110.0.2")).toMatchObject({ glMismatches: 0, gl: { fr: 1 } });
  });

  it("sends an address over its budget to /sorry/ for the flag period; other addresses are untouched", async () => {
    // A flag long enough to outlast the next few requests on a busy machine (a loaded run took over 400 ms).
    replay.setExits({ budget: { searches: 3, windowMs: 60_000, flagMs: 2_000 } });
    const A = "127.0.4.1";
    const B = "127.0.4.2";
    for (let i = 0; i < 3; i += 1) expect((await get(replay.url, "/search?q=coffee", A)).status).toBe(200);
    const over = await get(replay.url, "/search?q=coffee&gl=us", A);
    expect(over.status).toBe(302);
    expect(over.headers["x-replay-exit"]).toBe("sorry");
    const location = new URL(String(over.headers.location));
    expect(location.pathname).toBe("/sorry/index");
    expect(location.searchParams.get("continue")).toBe(`${replay.url}/search?q=coffee&gl=us`);
    expect(location.searchParams.get("q")).toMatch(/^[\w-]+$/);
    // Flagged: every search, whatever the query, until the flag ends.
    expect((await get(replay.url, "/search?q=tea", A)).status).toBe(302);
    expect((await get(replay.url, "/search?q=coffee", B)).status).toBe(200);
    expect(replay.exitStats().addresses.find((a) => a.address === A)).toMatchObject({ searches: 3, flags: 1, sorried: 2 });
    expect(replay.exitStats().addresses.find((a) => a.address === A)!.flaggedUntil).toBeGreaterThan(Date.now());
    // The window still holds 3+ searches, so the first search after the flag flags it again: the window must end too.
    // A window long enough that three searches on a busy machine fall inside it.
    replay.setExits({ budget: { searches: 3, windowMs: 1_500, flagMs: 300 } });
    for (let i = 0; i < 3; i += 1) await get(replay.url, "/search?q=coffee", A);
    expect((await get(replay.url, "/search?q=coffee", A)).status).toBe(302);
    await until(async () => (await get(replay.url, "/search?q=coffee", A)).status === 200, "the flag to end");
    expect(replay.exitStats().addresses.find((a) => a.address === A)!.flags).toBeGreaterThanOrEqual(1);
  });

  it("serves /sorry/ with the site key, a fresh one-time data-s per page and the form fields", async () => {
    replay.setExits({ siteKey: "site_key_1" });
    const pages = await Promise.all([1, 2].map(() => get(replay.url, "/sorry/index?continue=%2Fsearch%3Fq%3Dcoffee&q=blockid", "127.0.5.1")));
    const dataS = pages.map((p) => /data-s="([^"]+)"/.exec(p.body)?.[1]);
    for (const page of pages) {
      expect(page.status).toBe(429);
      expect(page.body).toContain('data-sitekey="site_key_1"');
      expect(page.body).toContain('<form id="captcha-form" action="index" method="post">');
      expect(page.body).toContain('<input type="hidden" name="q" value="blockid">');
      expect(page.body).toContain('<input type="hidden" name="continue" value="/search?q=coffee">');
      expect(page.body).toContain("IP address: 127.0.5.1");
    }
    expect(dataS[0]).toMatch(/^[\w-]{40,}$/);
    expect(dataS[0]).not.toBe(dataS[1]);
    // A wrong token gets the page again (with yet another data-s), no cookie.
    const wrong = await get(replay.url, "/sorry/index", "127.0.5.1", { "content-type": "application/x-www-form-urlencoded" }, "POST", "g-recaptcha-response=03Awrong&q=blockid&continue=%2Fsearch");
    expect(wrong.status).toBe(429);
    expect(wrong.headers["set-cookie"]).toBeUndefined();
    // The right one, from the address the page was served to.
    const token = recaptchaTokenFor("site_key_1", dataS[1]!);
    const right = await get(replay.url, "/sorry/index", "127.0.5.1", { "content-type": "application/x-www-form-urlencoded" }, "POST", `g-recaptcha-response=${token}&q=blockid&continue=%2Fsearch%3Fq%3Dcoffee`);
    expect(right.status).toBe(302);
    expect(right.headers.location).toBe("/search?q=coffee");
    expect(String(right.headers["set-cookie"])).toMatch(/^GOOGLE_ABUSE_EXEMPTION=ID=[0-9a-f]+:TM=\d+:C=r:IP=127\.0\.5\.1-:EX=\d+:S=[0-9a-f]{32}; path=\/; max-age=3600; HttpOnly$/);
    expect(replay.exitStats().addresses[0]).toMatchObject({ sorryPages: 3, exemptionsEarned: 1, tokensRefused: 1 });
  });

  it("binds the challenge cookie to the address that earned it; another address gets the challenge again", async () => {
    replay.setExits({});
    replay.setGuard({ jsChallenge: { paths: ["/search"], ttlMs: 60_000 } });
    const A = "127.0.6.1";
    const B = "127.0.6.2";
    const page = await get(replay.url, "/search?q=coffee", A);
    expect(page.headers["x-replay-guard"]).toBe("challenge");
    const nonce = /var nonce="([^"]+)"/.exec(page.body)?.[1] ?? "";
    const expiry = /"SG_SS="\+nonce\+"\.(\d+)\."/.exec(page.body)?.[1] ?? "";
    const cookie = `SG_SS=${nonce}.${expiry}.${challengeToken(nonce)}`;
    expect((await get(replay.url, "/search?q=coffee", A, { cookie })).headers["x-replay-guard"]).toBeUndefined();
    const elsewhere = await get(replay.url, "/search?q=coffee", B, { cookie });
    expect(elsewhere.headers["x-replay-guard"]).toBe("challenge");
    expect(replay.exitStats().addresses.find((a) => a.address === B)).toMatchObject({ foreignCookies: 1 });
    expect(replay.exitStats().addresses.find((a) => a.address === A)).toMatchObject({ foreignCookies: 0, searches: 1 });
    // A forged cookie is not "foreign": just invalid.
    await get(replay.url, "/search?q=coffee", B, { cookie: cookie.replace(/.$/, (c) => (c === "0" ? "1" : "0")) });
    expect(replay.exitStats().addresses.find((a) => a.address === B)).toMatchObject({ foreignCookies: 1 });
  });

  it("a flagged address gets /sorry/ before the guard looks at it", async () => {
    replay.setExits({ budget: { searches: 1, windowMs: 60_000, flagMs: 60_000 } });
    replay.setGuard({ jsChallenge: { paths: ["/search"], ttlMs: 60_000 } });
    const A = "127.0.7.1";
    // Challenge pages are not searches answered: they do not spend the budget.
    expect((await get(replay.url, "/search?q=coffee", A)).headers["x-replay-guard"]).toBe("challenge");
    expect((await get(replay.url, "/search?q=coffee", A)).headers["x-replay-guard"]).toBe("challenge");
    expect(replay.exitStats().addresses[0]).toMatchObject({ searches: 0, flags: 0 });
    replay.clearGuard();
    expect((await get(replay.url, "/search?q=coffee", A)).status).toBe(200);
    expect((await get(replay.url, "/search?q=coffee", A)).status).toBe(302);
    replay.setGuard({ jsChallenge: { paths: ["/search"], ttlMs: 60_000 } });
    const flagged = await get(replay.url, "/search?q=coffee", A);
    expect(flagged.status).toBe(302);
    expect(flagged.headers["x-replay-guard"]).toBeUndefined();
    expect(replay.requests().at(-1)).toMatchObject({ address: A, exit: "sorry" });
  });

  it("is driven over /__replay/exits: set, read, stats, reset, 400 on a bad body", async () => {
    const post = (body: string) => get(replay.url, "/__replay/exits", "127.0.0.1", { "content-type": "application/json" }, "POST", body);
    expect((await post('{"budget":{"searches":-1}}')).status).toBe(400);
    expect(JSON.parse((await post("not json")).body)).toEqual({ error: "body must be JSON" });
    const set = await post('{"rules":[{"prefix":"127.0.8.","country":"gb","class":"mobile"}]}');
    expect(set.status).toBe(200);
    expect(JSON.parse((await get(replay.url, "/__replay/exits", "127.0.0.1")).body)).toEqual({ rules: [{ prefix: "127.0.8.", country: "gb", class: "mobile" }] });
    await get(replay.url, "/search?q=coffee&gl=gb", "127.0.8.3");
    const stats = JSON.parse((await get(replay.url, "/__replay/exits/stats", "127.0.0.1")).body);
    expect(stats.addresses).toEqual([expect.objectContaining({ address: "127.0.8.3", country: "gb", class: "mobile", searches: 1, gl: { gb: 1 } })]);
    expect(JSON.parse((await get(replay.url, "/__replay/exits/stats", "127.0.0.1", {}, "DELETE")).body).addresses).toEqual([]);
    expect(JSON.parse((await get(replay.url, "/__replay/exits", "127.0.0.1", {}, "DELETE")).body)).toBeNull();
    expect(replay.exits()).toBeNull();
  });
});
