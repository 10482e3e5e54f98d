/**
 * The fetch ladder against a replay that guards like the upstream (packages/replay, guard mode),
 * over real TLS on loopback, through the API, a queue and a real worker process started as
 * `npm start` starts one. The worker reads its profile table from a file the test rewrites.
 *
 * - tls `browser`: the got rung is refused, the impersonating rung gets results;
 * - ua-consistency: an agent that claims Chrome over Node's TLS is refused;
 * - dead-agents: the basic layouts are refused and the job completes through the next rung;
 * - the 2026-11 preset: every kind with a rung that needs no browser completes through it; the
 *   others complete through the last rung, a real Chromium; without browser rungs they fail with a
 *   clear error at 0 credits;
 * - the page layout under the preset (docs/LAYOUTS.md): a default web search, news or images job is
 *   answered from the full page through Chromium, with every block of the capture, never from the
 *   feature-phone page the guard still answers; `layout: "light"` asks only for that page; `any`
 *   falls back to it when no full rung works and says so; a full job no full rung serves fails at 0
 *   credits, naming the cause and saying `layout: "any"` would have answered; the compatibility
 *   endpoint's `google` and `google_light` engines say their layout in `search_metadata.layout`;
 * - the table file is re-read without a restart, and a broken one is refused;
 * - the canary's table and exit status, under the preset and unguarded.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import request from "supertest";
import { freePort, ROOT, waitFor } from "../ops/support.js";
import { guardPreset } from "@serp/replay";
import { parseWebSearch } from "@serp/upstream";
import { FIXTURES_DIR } from "../../packages/upstream/test/fixtures-dir.js";
import { childEnv, fixturesAvailable, startStack, type Stack } from "../support/stack.js";

const d = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) console.warn("guarded upstream: captured pages not found; set SERP_FIXTURES_DIR. Skipping.");

const shipped = JSON.parse(readFileSync(join(ROOT, "packages/upstream/profiles.json"), "utf8"));
const PRODUCT = "13239497633151178800";

/** The shipped table with other lists for some kinds, and extra profiles. */
function tableWith(kinds: Record<string, string[]>, profiles: Record<string, unknown> = {}) {
  return { ...shipped, version: `test-${Date.now()}`, profiles: { ...shipped.profiles, ...profiles }, kinds: { ...shipped.kinds, ...kinds } };
}
/**
 * The 2026-11 guard without its per-client request budget: the browser, impit and the canaries all
 * show Chrome's ClientHello from one address, so this file's few hundred requests would share one
 * budget and trip it at random. The budget itself is proven in packages/replay's tests, and what a
 * block does to a job in the scrape and fault tests.
 */
const PRESET = { ...guardPreset("2026-11"), rate: false as const };

/** The table without its browser rungs: what the ladder was before the browser tier. */
const NO_BROWSER = {
  ...shipped,
  version: "no-browser",
  kinds: Object.fromEntries(
    Object.entries(shipped.kinds as Record<string, string[]>).map(([kind, names]) => [kind, names.filter((n) => shipped.profiles[n].transport !== "browser")]),
  ),
};
const BASIC = {
  "basic-lynx": { transport: "http", form: "search-basic", userAgent: "Lynx/2.9.0 libwww-FM/2.14 SSL-MM/1.4.1 OpenSSL/3.0.13", cookie: "CONSENT=PENDING+987" },
  "basic-msie": { transport: "http", form: "search-basic", userAgent: "Mozilla/5.0 (MSIE 10.0; Windows NT 6.1; Trident/5.0)", cookie: "CONSENT=PENDING+987" },
};

d("the fetch ladder against a guarded upstream", () => {
  let stack: Stack;
  let dir: string;
  let profilesFile: string;
  let worker: ChildProcess;
  let workerLog = "";
  let auth: string;

  const writeTable = (table: unknown) => writeFileSync(profilesFile, JSON.stringify(table, null, 2));
  const upstreamEnv = () => ({
    UPSTREAM_BASE_URL: stack.replay.url,
    UPSTREAM_CA_FILE: join(dir, "replay-ca.pem"),
    // impit cannot take a CA: the impersonating rungs need certificate checks off.
    UPSTREAM_TLS_INSECURE: "true",
    UPSTREAM_PROFILES_FILE: profilesFile,
  });
  const live = (endpoint: string, params: Record<string, unknown>) =>
    request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint, params, queue: "live" });
  /** What the replay saw since the last call: path, agent family, and what the guard did. */
  const seen = () => {
    const list = stack.replay.requests().map((r) => ({ path: r.path, ua: r.userAgent ?? "", tls: r.tls, guard: r.guard }));
    stack.replay.clearRequests();
    return list;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "guarded-"));
    profilesFile = join(dir, "profiles.json");
    writeTable(shipped);
    // fallback: the canary asks its fixed queries (`coffee` for news and images, `coffee maker` for
    // shopping), which no capture matches; it needs some page of the kind, not those queries' pages.
    stack = await startStack({ workerQueues: [], replay: { https: true, fallback: true } });
    writeFileSync(join(dir, "replay-ca.pem"), stack.replay.certPem!);
    worker = spawn(process.execPath, ["--import", "tsx", "apps/worker/src/index.ts"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...childEnv(stack),
        ...upstreamEnv(),
        WORKER_QUEUES: "live",
        WORKER_CONCURRENCY: "4",
        PARSE_THREADS: "0",
        UPSTREAM_BREAKER_THRESHOLD: "100", // these tests count every rung; the breakers have their own
        UPSTREAM_STATUS_INTERVAL_MS: "200",
        LOG_LEVEL: "info",
      },
    });
    worker.stdout!.on("data", (c: Buffer) => (workerLog += c.toString()));
    worker.stderr!.on("data", (c: Buffer) => (workerLog += c.toString()));
    await waitFor("the worker to be ready", () => workerLog.includes("workers ready"), 30_000);
    ({ auth } = await stack.account(1_000));
  }, 60_000);

  afterAll(async () => {
    if (worker && worker.exitCode === null) {
      worker.kill("SIGTERM");
      await new Promise((r) => worker.once("exit", r));
    }
    await stack?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(() => {
    stack.replay.clearGuard();
    stack.replay.clearRequests();
  });

  test("the worker warns at start that upstream certificates are not checked", () => {
    expect(workerLog).toContain("UPSTREAM_TLS_INSECURE=true");
  });

  test("tls browser: the got rung is refused by its ClientHello, the impersonating rung gets the rich page", async () => {
    stack.replay.setGuard({ tls: "browser" });
    const res = await live("web-search", { query: "coffee" });
    expect(res.body.job).toMatchObject({ status: "completed", credits: 1 });
    expect(res.body.result.organic_results.length).toBeGreaterThan(5);
    expect(seen()).toEqual([
      expect.objectContaining({ path: "/search", tls: "other", guard: "tls" }),
      expect.objectContaining({ path: "/search", tls: "chrome", guard: undefined }),
    ]);
  });

  test("ua-consistency: an agent that claims Chrome over Node's TLS is refused; Chrome's own TLS passes", async () => {
    stack.replay.setGuard({ uaConsistency: true });
    const res = await live("web-search", { query: "coffee" });
    expect(res.body.job.status).toBe("completed");
    const log = seen();
    expect(log[0]).toMatchObject({ ua: expect.stringContaining("Chrome/139"), tls: "other", guard: "ua" });
    expect(log[1]).toMatchObject({ ua: expect.stringContaining("Chrome/151"), tls: "chrome", guard: undefined });
  });

  test("dead-agents: the basic layouts are refused and the job completes through the next rung", async () => {
    writeTable(tableWith({ "web-search": ["basic-lynx", "basic-msie", "wml-chrome"] }, BASIC));
    await waitFor("the worker to take the new table", () => workerLog.includes("profile table reloaded"), 10_000);
    stack.replay.setGuard({ deadAgents: { always: ["Lynx", "MSIE", "Trident"], unlessBrowserTls: ["Nokia"] } });
    // Every rung here asks for a light page: only a job that allows one takes it.
    const res = await live("web-search", { query: "coffee", layout: "any" });
    expect(res.body.job).toMatchObject({ status: "completed", credits: 1 });
    expect(res.body.result.layout).toBe("light");
    expect(seen().map((r) => [r.path, r.guard ?? "passed"])).toEqual([
      ["/search", "dead-agent"],
      ["/search", "dead-agent"],
      ["/wml/search", "passed"],
    ]);
    writeTable(shipped);
  }, 30_000);

  describe("the 2026-11 preset", () => {
    /** The light page needs no browser: asked for, the feature-phone page answers. */
    const WITHOUT_BROWSER: [string, Record<string, unknown>, string][] = [
      ["web-search", { query: "coffee", layout: "light" }, "organic_results"],
      ["web-news", { query: "schloss johannisberg", layout: "light" }, "news_results"],
      ["web-images", { query: "初音ミク", layout: "light" }, "images_results"],
      ["web-autocomplete", { query: "cheesecake" }, "suggestions"],
    ];
    /** The full page (the default for web search, news and images) needs a browser under this guard. */
    const FULL_PAGE: [string, Record<string, unknown>, string][] = [
      ["web-search", { query: "coffee" }, "organic_results"],
      ["web-news", { query: "schloss johannisberg" }, "news_results"],
      ["web-images", { query: "初音ミク" }, "images_results"],
    ];
    /** Kinds with no light page at all. */
    const BROWSER_ONLY: [string, Record<string, unknown>, string][] = [
      ["web-local", { query: "coffee" }, "local_results"],
      ["web-shopping-search", { query: "889894929969", country: "br", language: "pt" }, "shopping_results"],
      ["web-shopping-product", { product_id: PRODUCT, country: "br" }, "sellers"],
      ["web-shopping-product-info", { product_id: PRODUCT, country: "br" }, "product_results"],
    ];
    const NEED_BROWSER = [...FULL_PAGE, ...BROWSER_ONLY];

    beforeAll(async () => {
      writeTable(shipped);
      await new Promise((r) => setTimeout(r, 1_500)); // the worker's watcher looks once a second
    });
    beforeEach(() => stack.replay.setGuard(PRESET));

    test.each(WITHOUT_BROWSER)("%s completes end to end through a rung that needs no browser", async (endpoint, params, block) => {
      const res = await live(endpoint, params);
      expect(res.body.job).toMatchObject({ status: "completed", error: null });
      expect(res.body.result[block].length).toBeGreaterThan(0);
      if (endpoint !== "web-autocomplete") expect(res.body.result.layout).toBe("light");
      const log = seen();
      // Whatever the ladder tried first was turned away by the guard; the request that got the page was not.
      expect(log.at(-1)!.guard).toBeUndefined();
      expect(log.at(-1)!.tls).toBe("chrome");
      for (const r of log.slice(0, -1)) expect(["tls", "ua", "challenge"]).toContain(r.guard);
    });

    test.each(NEED_BROWSER)("%s climbs to the last rung, a real Chromium, after the cheaper rungs are turned away", async (endpoint, params, block) => {
      const res = await live(endpoint, params);
      expect(res.body.job).toMatchObject({ status: "completed", error: null });
      const value = res.body.result[block];
      expect(Array.isArray(value) ? value.length : Object.keys(value).length).toBeGreaterThan(0);
      const log = seen();
      const pages = log.filter((r) => r.path === "/search" || r.path.startsWith("/shopping/"));
      expect(pages.at(-1)).toMatchObject({ tls: "chrome", guard: undefined, ua: expect.stringMatching(/Chrome\/156\.0\.0\.0 Safari/) });
      expect(pages.some((r) => r.guard === "tls" || r.guard === "ua")).toBe(true);
      // The feature-phone page the guard still answers is never asked for a full-page job that a full rung serves.
      expect(log.some((r) => r.path.startsWith("/wml/"))).toBe(false);
      expect(res.body.result.layout).toBe("full");
    }, 30_000);

    test("a default web search through Chromium has every block of the capture, and says full; the light page lacks them and says light", async () => {
      const capture = parseWebSearch(readFileSync(join(FIXTURES_DIR, "web/coffee-desktop-2023.html"), "utf8"));
      const full = (await live("web-search", { query: "coffee" })).body.result;
      const blocks = (r: Record<string, unknown>) => Object.keys(r).filter((k) => k !== "search_parameters" && k !== "layout").sort();
      expect(full.layout).toBe("full");
      expect(blocks(full)).toEqual(Object.keys(capture).sort());
      expect(full.organic_results.map((r: { link: string }) => r.link)).toEqual(capture.organic_results.map((r) => r.link));
      expect(full.knowledge_graph.title).toBe(capture.knowledge_graph!.title);
      seen();
      const light = (await live("web-search", { query: "coffee", layout: "light" })).body;
      expect(light.job).toMatchObject({ status: "completed", credits: 1 });
      expect(light.result.layout).toBe("light");
      expect(light.result.search_parameters.layout).toBe("light");
      // The basic page of the same query (web-nojs/coffee-nojs-2023.html): no result stats, and a knowledge panel of fewer facts.
      expect(light.result.search_information).toBeUndefined();
      expect(full.search_information).toBeDefined();
      expect(Object.keys(light.result.knowledge_graph ?? {}).length).toBeLessThan(Object.keys(full.knowledge_graph).length);
      expect(seen().map((r) => [r.path, r.guard ?? "passed"])).toEqual([["/wml/search", "passed"]]);
    }, 60_000);

    test("the compatibility endpoint: engine google answers from the full page, google_light from the light one, each says so", async () => {
      const { key } = await stack.account(10);
      const search = (engine: string) => request(stack.api.app).get("/search.json").query({ engine, q: "coffee", api_key: key, no_cache: "true" });
      const full = await search("google");
      expect(full.status).toBe(200);
      expect(full.body.search_metadata.layout).toBe("full");
      expect(full.body.knowledge_graph).toBeDefined();
      expect(full.body).not.toHaveProperty("layout");
      const light = await search("google_light");
      expect(light.status).toBe(200);
      expect(light.body.search_metadata.layout).toBe("light");
      expect(light.body.search_parameters.engine).toBe("google_light");
      // The basic page's knowledge panel has fewer facts than the full page's.
      expect(Object.keys(light.body.knowledge_graph ?? {}).length).toBeLessThan(Object.keys(full.body.knowledge_graph).length);
      expect(light.body.organic_results.length).toBeGreaterThan(5);
    }, 60_000);

    test("without browser rungs those kinds fail with a clear error at 0 credits, and the worker logs each rung", async () => {
      writeTable(NO_BROWSER);
      await waitFor("the worker to take the table", () => workerLog.includes('"version":"no-browser"'), 10_000);
      try {
        for (const [endpoint, params] of BROWSER_ONLY) {
          const res = await live(endpoint, params);
          expect(res.body.job).toMatchObject({ status: "failed", credits: 0, error: "upstream required JavaScript and no profile could pass it" });
          const guards = seen().map((r) => r.guard);
          expect(guards).toContain("challenge");
          expect(guards.every((g) => g === "tls" || g === "ua" || g === "challenge")).toBe(true);
        }
        await waitFor("the failure's rung summary", () => /"rungs":"product-panel \(http\): refused/.test(workerLog), 5_000);
        expect(workerLog).toMatch(/product-panel-chrome \(impersonate chrome151\): js_wall/);
        // Web search, news and images: no full rung works, the light page would have: the job says so, at 0 credits…
        for (const [endpoint, params] of FULL_PAGE) {
          const res = await live(endpoint, params);
          expect(res.body.job).toMatchObject({
            status: "failed",
            credits: 0,
            error: 'no full results page could be had (upstream required JavaScript and no profile could pass it); the light page answered, so layout "any" would have returned a result without the full page\'s blocks',
          });
          expect(seen().at(-1)).toMatchObject({ path: "/wml/search", guard: undefined });
          // …and `any` falls back to it, and says so.
          const any = await live(endpoint, { ...params, layout: "any" });
          expect(any.body.job).toMatchObject({ status: "completed", credits: 1 });
          expect(any.body.result.layout).toBe("light");
          expect(seen().map((r) => r.path).at(-1)).toBe("/wml/search");
        }
      } finally {
        writeTable(shipped);
        await waitFor("the worker to take the shipped table back", () => workerLog.lastIndexOf('"version":"2026-11"') > workerLog.lastIndexOf('"version":"no-browser"'), 10_000);
      }
    }, 60_000);
  });

  test("a new table file is used by the next job without a restart; a broken one is refused and the old one keeps working", async () => {
    writeTable(tableWith({ "web-search": ["wml-chrome"] }));
    await new Promise((r) => setTimeout(r, 1_500));
    await live("web-search", { query: "coffee", layout: "light" });
    expect(seen().map((r) => r.path)).toEqual(["/wml/search"]);

    const broken = tableWith({ "web-search": ["desktop-chrome", "no-such-profile"] });
    writeTable(broken);
    await waitFor("the refusal in the worker's log", () => workerLog.includes('kinds.web-search.1: no profile named \\"no-such-profile\\"'), 10_000);
    const res = await live("web-search", { query: "coffee", layout: "light" });
    expect(res.body.job.status).toBe("completed");
    expect(seen().map((r) => r.path)).toEqual(["/wml/search"]);
    writeTable(shipped);
  }, 30_000);

  test("upstream status shows the worker's breakers", async () => {
    const out = await waitFor(
      "a published status",
      () => {
        const r = spawnSync(process.execPath, ["--import", "tsx", "apps/cli/src/main.ts", "upstream", "status"], {
          cwd: ROOT,
          encoding: "utf8",
          env: childEnv(stack),
        });
        return r.stdout.includes("desktop@direct") && r.stdout;
      },
      15_000,
      300,
    );
    expect(out).toMatch(/^worker \S+ at \S+: profile table /m);
    expect(out).toMatch(/^\s+wml-chrome@direct\s+closed\s+-\s+results\s+\d+%/m);
  }, 20_000);

  /** The CLI's canary as an operator runs it (asynchronously: the replay answers from this process). */
  const canary = async (table = "") => {
    const child = spawn(process.execPath, ["--import", "tsx", "apps/cli/src/main.ts", "canary", "--json"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "inherit"],
      // A bound on each rung, not a measure: a cold Chromium passing the challenge and rendering a
      // shopping page has taken more than the default 15 s on a busy machine.
      env: { ...process.env, ...upstreamEnv(), UPSTREAM_PROFILES_FILE: table, UPSTREAM_TIMEOUT_MS: "60000" },
    });
    let stdout = "";
    child.stdout!.on("data", (c: Buffer) => (stdout += c.toString()));
    const status = await new Promise<number | null>((r) => child.once("exit", r));
    return { status, report: JSON.parse(stdout) as { ok: boolean; dead: string[]; working: Record<string, string[]>; rows: { kind: string; profile: string; outcome: string }[] } };
  };

  test("the canary under the preset without browser rungs: a table of every rung, and exit 1 for the kinds that need a browser", async () => {
    stack.replay.setGuard(PRESET);
    const noBrowser = join(dir, "no-browser.json");
    writeFileSync(noBrowser, JSON.stringify(NO_BROWSER));
    const { status, report } = await canary(noBrowser);
    expect(status).toBe(1);
    expect(report.dead.sort()).toEqual(["web-local", "web-shopping-product", "web-shopping-product-info", "web-shopping-search"]);
    expect(report.working["web-search"]).toEqual(["wml-chrome"]);
    expect(report.rows.find((r) => r.kind === "web-search" && r.profile === "desktop")!.outcome).toBe("refused");
    expect(report.rows.find((r) => r.kind === "web-search" && r.profile === "desktop-chrome")!.outcome).toBe("js_wall");
  }, 60_000);

  test("the canary under the preset with the shipped table: every kind works through its cheapest open rung or the browser, exit 0", async () => {
    stack.replay.setGuard(PRESET);
    const { status, report } = await canary();
    expect(report.dead).toEqual([]);
    expect(status).toBe(0);
    expect(report.working["web-search"]).toEqual(["wml-chrome", "desktop-browser"]);
    expect(report.working["web-local"]).toEqual(["desktop-browser"]);
  }, 90_000);

  test("the canary unguarded: every rung works but the product panel (not captured), exit 0", async () => {
    const { status, report } = await canary();
    expect(report.dead).toEqual([]);
    expect(status).toBe(0);
    expect(report.working["web-search"]).toEqual(["desktop", "desktop-chrome", "wml-chrome", "desktop-browser"]);
  }, 90_000);

  test("a worker with CANARY_INTERVAL_MS runs the canary on its own: dead kinds are logged at error and exported as 0", async () => {
    stack.replay.setGuard(PRESET);
    writeFileSync(join(dir, "no-browser.json"), JSON.stringify(NO_BROWSER));
    const port = await freePort();
    let log = "";
    const canaryWorker = spawn(process.execPath, ["--import", "tsx", "apps/worker/src/index.ts"], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...childEnv(stack),
        ...upstreamEnv(),
        UPSTREAM_PROFILES_FILE: join(dir, "no-browser.json"),
        WORKER_QUEUES: "regular",
        HEALTH_PORT: String(port),
        CANARY_INTERVAL_MS: "1000",
        LOG_LEVEL: "info",
      },
    });
    canaryWorker.stdout!.on("data", (c: Buffer) => (log += c.toString()));
    canaryWorker.stderr!.on("data", (c: Buffer) => (log += c.toString()));
    try {
      // A bound, not a measure: a process started under tsx on a loaded machine, then one canary round.
      await waitFor("the canary's verdict", () => log.includes("canary: no working profile for"), 120_000);
      const line = log.split("\n").find((l) => l.includes("canary: no working profile for"))!;
      expect(JSON.parse(line)).toMatchObject({ level: 50, dead: expect.arrayContaining(["web-local", "web-shopping-search"]) });
      const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(metrics).toMatch(/^serp_upstream_canary_working_profiles\{kind="web-local",app="worker"\} 0$/m);
      expect(metrics).toMatch(/^serp_upstream_canary_working_profiles\{kind="web-search",app="worker"\} 1$/m);
      expect(metrics).toMatch(/^serp_upstream_canary_runs_total\{result="dead",app="worker"\} [1-9]/m);
    } finally {
      canaryWorker.kill("SIGTERM");
      await new Promise((r) => canaryWorker.once("exit", r));
    }
  }, 180_000);
});
