/**
 * The browser tier end to end: against the replay guarding as the upstream does in 2026-11 (TLS
 * `chrome`, the JavaScript challenge, the headless check, dead agents), every one of the eight
 * endpoints completes through the API, the live queue, a real BullMQ worker and a real Debian
 * Chromium, launched locally, then reached remotely (over CDP, and through a Playwright server).
 * The worker's table here holds only browser rungs, so nothing else can answer. A browser killed in
 * the middle of a job: the job completes on its retry, billed once, and the pool recovers.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import request from "supertest";
import { chromium, type BrowserServer } from "playwright-core";
import { BROWSER_DEFAULTS, profileTable, PROFILE_SETS } from "@serp/upstream";
import type { ReplayServer } from "@serp/replay";
import { ROOT } from "../ops/support.js";
import { caFileOf, fixturesAvailable, startStack, type Stack } from "../support/stack.js";

const CHROMIUM = process.env.BROWSER_EXECUTABLE_PATH ?? BROWSER_DEFAULTS.executablePath;
const d = fixturesAvailable && existsSync(CHROMIUM) ? describe : describe.skip;
if (!existsSync(CHROMIUM)) console.warn(`browser e2e skipped: no Chromium at ${CHROMIUM}`);

const shipped = JSON.parse(readFileSync(join(ROOT, "packages/upstream/profiles.json"), "utf8"));
/** The shipped table's browser rungs only, per kind. */
const BROWSER_ONLY = profileTable({
  ...shipped,
  version: "browser-only",
  kinds: Object.fromEntries(
    PROFILE_SETS.map((kind) => [kind, (shipped.kinds[kind] as string[]).filter((name) => shipped.profiles[name].transport === "browser")]),
  ),
});

const PRODUCT = "13239497633151178800";
const CASES: [string, Record<string, unknown>, string][] = [
  ["web-search", { query: "coffee" }, "organic_results"],
  ["web-news", { query: "schloss johannisberg" }, "news_results"],
  ["web-images", { query: "初音ミク" }, "images_results"],
  ["web-local", { query: "coffee" }, "local_results"],
  ["web-shopping-search", { query: "889894929969", country: "br", language: "pt" }, "shopping_results"],
  ["web-shopping-product", { product_id: PRODUCT, country: "br" }, "sellers"],
  ["web-shopping-product-info", { product_id: PRODUCT, country: "br" }, "product_results"],
  ["web-autocomplete", { query: "cheesecake" }, "suggestions"],
];

async function stackWithBrowser(browser: (replay: ReplayServer) => Record<string, unknown>): Promise<Stack> {
  return startStack({
    replay: { https: true, guard: "2026-11" },
    upstreamTimeoutMs: 20_000,
    upstream: browser,
    upstreamDeps: { profiles: BROWSER_ONLY },
    workerQueues: ["live"],
  });
}

async function liveJob(stack: Stack, auth: string, endpoint: string, params: Record<string, unknown>) {
  return request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint, params, queue: "live" });
}

d("the browser tier end to end (local Chromium)", () => {
  let stack: Stack;
  let auth: string;
  let accountId: string;
  beforeAll(async () => {
    // A private CA for the local browser (trusted by its public key), as for every other transport.
    stack = await stackWithBrowser((replay) => ({ UPSTREAM_CA_FILE: caFileOf(replay), BROWSER_CONCURRENCY: 2 }));
    ({ auth, accountId } = await stack.account(100));
  }, 60_000);
  afterAll(() => stack?.close());

  test.each(CASES)("%s completes through Chromium under the 2026-11 guard", async (endpoint, params, block) => {
    stack.replay.clearRequests();
    const res = await liveJob(stack, auth, endpoint, params);
    expect(res.body.job).toMatchObject({ endpoint, status: "completed", error: null });
    const value = res.body.result[block];
    expect(Array.isArray(value) ? value.length : Object.keys(value ?? {}).length).toBeGreaterThan(0);
    // Every request the replay saw came from Chromium's own TLS, never with a headless agent.
    const seen = stack.replay.requests();
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((r) => r.tls === "chrome" && !/Headless/.test(r.userAgent ?? ""))).toBe(true);
  }, 60_000);

  test("one challenge served every job: the cookie it set is kept for the next ones", () => {
    const challenged = stack.replay.stats().challenged;
    expect(challenged).toBeGreaterThanOrEqual(1);
    expect(challenged).toBeLessThanOrEqual(2); // the /search and /shopping/ paths may each have asked once
  });

  test("the browser killed mid-job: the job completes on its retry, billed once, and the pool recovers", async () => {
    const before = (await stack.api.accounts.get(accountId))!.balance;
    stack.replay.setFaults({ latencyMs: 2_000, times: 1, kinds: ["web"] });
    const pending = liveJob(stack, auth, "web-search", { query: "coffee" });
    await new Promise((r) => setTimeout(r, 800));
    const killed = browserPids();
    expect(killed.length).toBeGreaterThan(0);
    for (const pid of killed) process.kill(pid, "SIGKILL");
    const res = await pending;
    expect(res.body.job).toMatchObject({ status: "completed", credits: 1, attempts: 2 });
    expect((await stack.api.accounts.get(accountId))!.balance).toBe(before - 1);
    const again = await liveJob(stack, auth, "web-search", { query: "coffee" });
    expect(again.body.job).toMatchObject({ status: "completed", attempts: 1 });
  }, 60_000);
});

/** Chromium processes this test process launched (its direct children). */
function browserPids(): number[] {
  const children = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
  return children.filter((pid) => {
    try {
      return /chrom/i.test(readFileSync(`/proc/${pid}/comm`, "utf8"));
    } catch {
      return false;
    }
  });
}

d("the browser tier end to end (a remote browser)", () => {
  const FLAGS = ["--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-blink-features=AutomationControlled"];

  test("over CDP (a Chromium with a remote-debugging endpoint, as a fleet runs one): two kinds complete, nothing launched here", async () => {
    const dir = mkdtempSync(join(tmpdir(), "remote-chromium-"));
    const child: ChildProcess = spawn(CHROMIUM, ["--headless", "--no-sandbox", "--remote-debugging-port=0", `--user-data-dir=${dir}`, ...FLAGS, "about:blank"], {
      stdio: "ignore",
      detached: true,
    });
    let stack: Stack | undefined;
    try {
      const file = join(dir, "DevToolsActivePort");
      const until = Date.now() + 15_000;
      while (!existsSync(file) || !readFileSync(file, "utf8").includes("\n")) {
        if (Date.now() > until) throw new Error("remote chromium did not start");
        await new Promise((r) => setTimeout(r, 100));
      }
      const cdpUrl = `http://127.0.0.1:${readFileSync(file, "utf8").split("\n")[0]}`;
      stack = await stackWithBrowser(() => ({ UPSTREAM_TLS_INSECURE: true, BROWSER_CDP_URL: cdpUrl }));
      const { auth } = await stack.account(10);
      const launchedBefore = browserPids().length;
      for (const [endpoint, params] of [CASES[0]!, CASES[4]!]) {
        const res = await liveJob(stack, auth, endpoint, params);
        expect(res.body.job).toMatchObject({ endpoint, status: "completed" });
      }
      expect(browserPids().length).toBe(launchedBefore);
    } finally {
      await stack?.close();
      process.kill(-child.pid!, "SIGKILL");
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    }
  }, 90_000);

  test("through a Playwright server (BROWSER_WS_ENDPOINT): two kinds complete", async () => {
    let server: BrowserServer | undefined;
    let stack: Stack | undefined;
    try {
      server = await chromium.launchServer({ executablePath: CHROMIUM, headless: true, chromiumSandbox: false, args: FLAGS });
      const wsEndpoint = server.wsEndpoint();
      stack = await stackWithBrowser(() => ({ UPSTREAM_TLS_INSECURE: true, BROWSER_WS_ENDPOINT: wsEndpoint }));
      const { auth } = await stack.account(10);
      for (const [endpoint, params] of [CASES[0]!, CASES[7]!]) {
        const res = await liveJob(stack, auth, endpoint, params);
        expect(res.body.job).toMatchObject({ endpoint, status: "completed" });
      }
    } finally {
      await stack?.close();
      await server?.close();
    }
  }, 90_000);
});
