/**
 * The CAPTCHA rung's client against the fake solver (createTask/getTaskResult over loopback HTTP) and the
 * replay's exit model: reading /sorry/ pages (the 2026 capture and the replay's), solving with bounded
 * time, retries and an hourly cap counted in a real Redis, and end to end at the HTTP level: an exit over
 * its budget gets /sorry/, the page is solved through that exit, its form posted through it, and the
 * exemption cookie then works from that exit only.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "ioredis";
import { startReplayServer, type ReplayServer } from "@serp/replay";
import { CaptchaError, CaptchaSolver, exemptionRequest, readSorryPage } from "../src/captcha.js";
import { captchaOptionsOf, readUpstreamEnv } from "../src/env.js";
import { FIXTURES_DIR, fixturesAvailable } from "./fixtures-dir.js";
import { startFakeSolver, type FakeSolver } from "../../../test/support/captcha-solver.js";
import { requestVia, startExitFleet, type ExitFleet } from "../../../test/support/exits.js";

const describeIfFixtures = fixturesAvailable ? describe : describe.skip;
const KEY = "client-key-secret-123";

describeIfFixtures("readSorryPage", () => {
  it("reads the 2026 capture: site key, data-s, the form's absolute action and its hidden fields", () => {
    const html = readFileSync(join(FIXTURES_DIR, "blocked/sorry-recaptcha-2026.html"), "utf8");
    const page = readSorryPage(html, "https://www.google.com/sorry/index?continue=x&q=y");
    expect(page).toBeDefined();
    expect(page!.siteKey).toMatch(/^6L[\w-]{30,}$/);
    expect(page!.dataS.length).toBeGreaterThan(100);
    expect(page!.action).toBe("https://www.google.com/sorry/index");
    expect(Object.keys(page!.fields).sort()).toEqual(["continue", "q"]);
    expect(page!.fields.continue).toMatch(/^https:\/\/www\.google\.com\/search\?.*q=weather/);
  });

  it("is undefined for a page without a reCAPTCHA form (a results page, the JS wall)", () => {
    expect(readSorryPage("<html><body><div id=main></div></body></html>", "https://www.google.com/search?q=a")).toBeUndefined();
    const wall = readFileSync(join(FIXTURES_DIR, "blocked/enablejs-soft-block-2026-sanitized.html"), "utf8");
    expect(readSorryPage(wall, "https://www.google.com/search?q=a")).toBeUndefined();
  });

  it("builds the exemption post from the page's fields and the token", () => {
    const request = exemptionRequest({ siteKey: "k", dataS: "s", action: "https://h/sorry/index", fields: { q: "Eg&Q", continue: "https://h/search?q=a b" } }, "03Atok");
    expect(request).toMatchObject({ url: "https://h/sorry/index", method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({ q: "Eg&Q", continue: "https://h/search?q=a b", "g-recaptcha-response": "03Atok" });
  });
});

describe("captchaOptionsOf", () => {
  it("is off by default, on with both settings, and refuses one without the other", () => {
    expect(captchaOptionsOf(readUpstreamEnv({}))).toBeUndefined();
    expect(captchaOptionsOf(readUpstreamEnv({ CAPTCHA_SOLVER_URL: "http://127.0.0.1:9/", CAPTCHA_SOLVER_KEY: "k", CAPTCHA_MAX_PER_HOUR: "7" }))).toMatchObject({
      url: "http://127.0.0.1:9/",
      key: "k",
      maxPerHour: 7,
      jobTimeoutMs: 180_000,
    });
    expect(() => captchaOptionsOf(readUpstreamEnv({ CAPTCHA_SOLVER_KEY: "k" }))).toThrow(/set both or neither/);
    expect(() => readUpstreamEnv({ CAPTCHA_JOB_TIMEOUT_MS: "fast" })).toThrow(/CAPTCHA_JOB_TIMEOUT_MS/);
  });
});

describe("CaptchaSolver against the fake solver", () => {
  let solver: FakeSolver;
  const request = { siteKey: "site-key", dataS: "one-time-s", pageUrl: "http://127.0.0.1:1/sorry/index?continue=x", proxyUrl: "http://user1:pw-secret@127.0.0.1:3128" };

  beforeEach(async () => {
    solver = await startFakeSolver({ clientKey: KEY, pollsBeforeReady: 2, cost: 0.0029 });
  });
  afterEach(async () => {
    await solver.close();
  });

  it("creates a task with the page's key, data-s and the exit as proxy, polls until ready and returns token, cost and time", async () => {
    const client = new CaptchaSolver({ url: solver.url, key: KEY, pollMs: 20 });
    const solved = await client.solve(request);
    expect(solved.token).toMatch(/^03A/);
    expect(solved.cost).toBeCloseTo(0.0029);
    expect(solved.ms).toBeGreaterThanOrEqual(60);
    expect(solver.calls()).toEqual({ createTask: 1, getTaskResult: 3, badKey: 0, invalid: 0 });
    expect(solver.tasks()[0]).toMatchObject({
      type: "RecaptchaV2Task",
      websiteKey: "site-key",
      recaptchaDataSValue: "one-time-s",
      websiteURL: request.pageUrl,
      proxy: { proxyType: "http", proxyAddress: "127.0.0.1", proxyPort: 3128, proxyLogin: "user1", proxyPassword: "pw-secret" },
    });
    const proxyless = await client.solve({ ...request, proxyUrl: undefined });
    // The fake solver's token is what the replay accepts for that site key and data-s, whatever the exit.
    expect(proxyless.token).toBe(solved.token);
    expect(solver.tasks()[1]).toMatchObject({ type: "RecaptchaV2TaskProxyless" });
    expect(solver.tasks()[1]!.proxy).toBeUndefined();
  });

  it("fails clearly, naming the solver's code but never the key or the proxy's credentials", async () => {
    const client = new CaptchaSolver({ url: solver.url, key: KEY, pollMs: 10, retries: 1 });
    const failures: [Parameters<FakeSolver["setFailure"]>[0], string, RegExp][] = [
      ["reject", "rejected", /ERROR_NO_SLOT_AVAILABLE/],
      ["unsolvable", "unsolvable", /ERROR_CAPTCHA_UNSOLVABLE/],
      ["http-500", "transport", /answered 500/],
    ];
    for (const [mode, failure, message] of failures) {
      solver.setFailure(mode);
      const error = (await client.solve(request).catch((e: unknown) => e)) as CaptchaError;
      expect(error).toBeInstanceOf(CaptchaError);
      expect(error.failure).toBe(failure);
      expect(error.message).toMatch(message);
      expect(error.message).not.toContain(KEY);
      expect(error.message).not.toContain("pw-secret");
    }
    solver.setFailure(undefined);
    const wrongKey = await new CaptchaSolver({ url: solver.url, key: "other", pollMs: 10 }).solve(request).catch((e: unknown) => e);
    expect((wrongKey as CaptchaError).message).toMatch(/ERROR_KEY_DOES_NOT_EXIST/);
    expect((wrongKey as CaptchaError).message).not.toContain("other");
    // http-500: one try and one retry for createTask, then no more.
    expect(solver.calls().createTask).toBe(1 + 1 + 2 + 1);
  });

  it("gives up at the job's time limit, or when the caller's signal aborts", async () => {
    solver.setFailure("never");
    // A limit of 50 polls' length: a few polls fit in it however busy the machine; a solver that did
    // not give up would poll until the test's own timeout.
    const timed = new CaptchaSolver({ url: solver.url, key: KEY, pollMs: 20, jobTimeoutMs: 1_000 });
    const started = Date.now();
    await expect(timed.solve(request)).rejects.toMatchObject({ failure: "timeout" });
    expect(Date.now() - started).toBeLessThan(15_000);
    const polls = solver.calls().getTaskResult;
    expect(polls).toBeGreaterThanOrEqual(3);
    const controller = new AbortController();
    const aborted = new CaptchaSolver({ url: solver.url, key: KEY, pollMs: 20 }).solve(request, controller.signal);
    setTimeout(() => controller.abort(), 100);
    await expect(aborted).rejects.toMatchObject({ failure: "aborted" });
  });

  it("caps solves per hour in one process", async () => {
    const client = new CaptchaSolver({ url: solver.url, key: KEY, pollMs: 5, maxPerHour: 2 });
    await client.solve(request);
    await client.solve(request);
    await expect(client.solve(request)).rejects.toMatchObject({ failure: "capped" });
    expect(solver.calls().createTask).toBe(2);
  });

  it("caps solves per hour across the fleet through Redis", async () => {
    const redis = new Redis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", { lazyConnect: true });
    await redis.connect();
    const redisKey = `test:captcha:${process.pid}:${Date.now()}`;
    try {
      // Two workers, one account: 3 solves per hour between them.
      const a = new CaptchaSolver({ url: solver.url, key: KEY, pollMs: 5, maxPerHour: 3, redis, redisKey });
      const b = new CaptchaSolver({ url: solver.url, key: KEY, pollMs: 5, maxPerHour: 3, redis, redisKey });
      const outcomes = await Promise.allSettled([a.solve(request), b.solve(request), a.solve(request), b.solve(request), a.solve(request)]);
      expect(outcomes.filter((o) => o.status === "fulfilled")).toHaveLength(3);
      const refused = outcomes.filter((o): o is PromiseRejectedResult => o.status === "rejected");
      expect(refused.map((o) => (o.reason as CaptchaError).failure)).toEqual(["capped", "capped"]);
      expect(solver.calls().createTask).toBe(3);
      expect(await b.usedThisHour()).toBe(3);
      expect(await redis.pttl(`${redisKey}:${Math.floor(Date.now() / 3_600_000)}`)).toBeGreaterThan(3_600_000);
    } finally {
      const keys = await redis.keys(`${redisKey}:*`);
      if (keys.length > 0) await redis.del(...keys);
      redis.disconnect();
    }
  });
});

describeIfFixtures("the CAPTCHA rung end to end over HTTP (replay exit model, test exits, fake solver)", () => {
  let fleet: ExitFleet;
  let replay: ReplayServer;
  let solver: FakeSolver;

  beforeAll(async () => {
    fleet = await startExitFleet({ staticExits: [{ country: "us", auth: true }, { country: "us" }] });
    replay = await startReplayServer({ dir: FIXTURES_DIR, exits: { ...fleet.exits, budget: { searches: 2, windowMs: 60_000, flagMs: 60_000 } } });
    solver = await startFakeSolver({ clientKey: KEY });
  });
  afterAll(async () => {
    await solver?.close();
    await replay?.close();
    await fleet?.close();
  });

  /** Searches through `exit` until the replay redirects to /sorry/; returns that URL. */
  async function exhaust(exitUrl: string): Promise<string> {
    for (let i = 0; i < 5; i += 1) {
      const res = await requestVia(exitUrl, `${replay.url}/search?q=coffee&gl=us`);
      if (res.status === 302) return res.headers.location ?? "";
      expect(res.status).toBe(200);
    }
    throw new Error("never sent to /sorry/");
  }

  it("solves the /sorry/ page of a flagged exit through that exit; the cookie lifts its flag and no other's", async () => {
    const [mine, other] = fleet.static as [ExitFleet["static"][number], ExitFleet["static"][number]];
    const sorryUrl = await exhaust(mine.url);
    expect(sorryUrl).toMatch(/\/sorry\/index\?continue=.*&q=/);
    await exhaust(other.url);

    const page = await requestVia(mine.url, sorryUrl);
    expect(page.status).toBe(429);
    const sorry = readSorryPage(page.body, sorryUrl);
    expect(sorry).toBeDefined();
    expect(sorry!.fields.continue).toContain("/search?q=coffee");
    const again = readSorryPage((await requestVia(mine.url, sorryUrl)).body, sorryUrl);
    expect(again!.dataS).not.toBe(sorry!.dataS);

    const client = new CaptchaSolver({ url: solver.url, key: KEY, pollMs: 20 });
    const solved = await client.solve({ siteKey: sorry!.siteKey, dataS: sorry!.dataS, pageUrl: sorryUrl, proxyUrl: mine.url });
    expect(solver.tasks()[0]).toMatchObject({ recaptchaDataSValue: sorry!.dataS, proxy: { proxyLogin: mine.auth!.username } });

    // Posted from another exit, the token is refused (and stays good for the exit it was issued to).
    const post = exemptionRequest(sorry!, solved.token);
    const stolen = await requestVia(other.url, post.url, { method: "POST", headers: post.headers, body: post.body });
    expect(stolen.status).toBe(429);
    expect(stolen.headers["set-cookie"]).toBeUndefined();

    const earned = await requestVia(mine.url, post.url, { method: "POST", headers: post.headers, body: post.body });
    expect(earned.status).toBe(302);
    expect(earned.headers.location).toBe(sorry!.fields.continue);
    const cookie = (earned.headers["set-cookie"] ?? [])[0]?.split(";")[0] ?? "";
    expect(cookie).toMatch(/^GOOGLE_ABUSE_EXEMPTION=/);
    // One-time: the same token does not earn a second cookie.
    expect((await requestVia(mine.url, post.url, { method: "POST", headers: post.headers, body: post.body })).status).toBe(429);

    const search = `${replay.url}/search?q=coffee&gl=us`;
    const withCookie = await requestVia(mine.url, search, { headers: { cookie } });
    expect(withCookie.status).toBe(200);
    expect(withCookie.body).toContain("coffee");
    expect((await requestVia(mine.url, search)).status).toBe(302);
    expect((await requestVia(other.url, search, { headers: { cookie } })).status).toBe(302);

    const stats = replay.exitStats().addresses;
    const mineStats = stats.find((a) => a.address === mine.address)!;
    const otherStats = stats.find((a) => a.address === other.address)!;
    expect(mineStats).toMatchObject({ flags: 1, exemptionsEarned: 1, exemptedSearches: 1, tokensRefused: 1, foreignCookies: 0, sorryPages: 3 });
    expect(otherStats).toMatchObject({ flags: 1, exemptionsEarned: 0, tokensRefused: 1, foreignCookies: 1 });
  });
});
