/**
 * The browser transport with a real Debian Chromium, against the replay upstream over TLS: its
 * JavaScript challenge passed once per proxy, a crash replaced, a page's CPU slowed, a remote
 * browser over CDP and a Playwright server, and a headed browser under Xvfb. One local browser
 * serves the file; the remote ones are started by the tests. The parity of rendered pages with the
 * captured ones, the longest checks, are in browser-captured.test.ts (run beside this file).
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { chromium, type BrowserServer } from "playwright-core";
import { startReplayServer, type ReplayServer } from "@serp/replay";
import { BrowserPool, reusableFor, type BrowserRequest } from "../src/browser.js";
import { classify } from "../src/classify.js";
import { PARSERS } from "../src/kinds/index.js";
import { FIXTURES_DIR } from "./fixtures-dir.js";
import { ask, browserAvailable, CHROMIUM, d, settings } from "./browser-support.js";

describe("the pinned playwright-core drives the installed Chromium's major version", () => {
  (browserAvailable ? test : test.skip)("Debian's chromium and playwright-core's bundled Chromium have the same major", () => {
    const require = createRequire(import.meta.url);
    const browsers = JSON.parse(readFileSync(join(dirname(require.resolve("playwright-core/package.json")), "browsers.json"), "utf8")) as {
      browsers: { name: string; browserVersion: string }[];
    };
    const bundled = browsers.browsers.find((b) => b.name === "chromium")!.browserVersion.split(".")[0];
    const installed = /(\d+)\./.exec(spawnSync(CHROMIUM, ["--version"], { encoding: "utf8" }).stdout)?.[1];
    // When this fails, pin the playwright-core whose browsers.json names the installed major.
    expect(`chromium ${installed}`).toBe(`chromium ${bundled}`);
  });
});

d("browser transport (local Chromium)", () => {
  let replay: ReplayServer;
  let pool: BrowserPool;
  beforeAll(async () => {
    replay = await startReplayServer({ dir: FIXTURES_DIR, https: true, guard: "2026-11" });
    pool = new BrowserPool({ concurrency: 2 }, { ca: replay.certPem });
  });
  afterAll(async () => {
    await pool?.close();
    await replay?.close();
  });
  beforeEach(() => replay.clearRequests());

  test("passes the upstream's checks (TLS, agent, headless markers, JS challenge) once, then reuses the cookie", async () => {
    const first = await pool.fetch(ask(replay, "/search?q=coffee&hl=en"), settings);
    expect(first.ok && classify(first.response, "web-search")).toBe("results");
    const second = await pool.fetch(ask(replay, "/search?q=coffee&hl=en"), settings);
    expect(second.ok && classify(second.response, "web-search")).toBe("results");
    const pages = replay.requests().filter((r) => r.path === "/search");
    expect(pages.map((r) => r.guard ?? "passed")).toEqual(["challenge", "passed", "passed"]);
    expect(pages.every((r) => r.tls === "chrome" && !/Headless/.test(r.userAgent ?? ""))).toBe(true);
  }, 30_000);

  test("only the page's own host is asked: images, fonts, media and third-party hosts are blocked", async () => {
    await pool.fetch(ask(replay, "/search?q=coffee&hl=en"), settings);
    const paths = replay.requests().map((r) => r.path);
    expect(paths.filter((p) => /\.(png|jpe?g|gif|webp|svg|woff2?|ttf|mp4)$/i.test(p))).toEqual([]);
  }, 30_000);

  test("a warm page is read as it arrives: nothing rendered, parsed as the capture, its bytes about the compressed page", async () => {
    const own = new BrowserPool({ concurrency: 1 }, { ca: replay.certPem });
    try {
      const cold = await own.fetch(ask(replay, "/search?q=coffee&hl=en"), settings);
      expect(cold.ok).toBe(true);
      replay.clearRequests();
      const warm = await own.fetch(ask(replay, "/search?q=coffee&hl=en"), settings);
      if (!warm.ok) throw new Error(`${warm.failure} ${warm.detail}`);
      // Only the document was asked for: no script, style or XHR of a rendered page.
      expect(replay.requests().map((r) => r.path)).toEqual(["/search"]);
      const file = join(FIXTURES_DIR, String(warm.response.headers["x-replay-file"]));
      const captured = readFileSync(file);
      expect(JSON.stringify(PARSERS["web-search"](warm.response.body))).toBe(JSON.stringify(PARSERS["web-search"](captured.toString("utf8"))));
      // The replay compresses as the upstream does: what came through is the gzipped page and its headers.
      const compressed = gzipSync(captured).length;
      expect(warm.bytes.down).toBeGreaterThanOrEqual(compressed);
      expect(warm.bytes.down).toBeLessThan(compressed + 2_048);
      expect(warm.bytes.up).toBeGreaterThan(200); // the request line and headers, the cookie among them
      expect(warm.bytes.up).toBeLessThan(4_096);
      // The cold one rendered the challenge and the page: more bytes, all counted.
      expect(cold.bytes.down).toBeGreaterThan(warm.bytes.down);
    } finally {
      await own.close();
    }
  }, 60_000);

  test("reuse of static files follows their Cache-Control", () => {
    expect(reusableFor("public, max-age=31536000, immutable")).toBe(24 * 3_600_000);
    expect(reusableFor("public, max-age=600")).toBe(600_000);
    expect(reusableFor("immutable")).toBe(86_400_000);
    expect(reusableFor("private, max-age=600")).toBe(0);
    expect(reusableFor("no-store")).toBe(0);
    expect(reusableFor(undefined)).toBe(0);
  });

  test("a suggestion list comes back as the upstream sent it, not as the browser's XML viewer", async () => {
    const r = await pool.fetch(ask(replay, "/complete/search?output=toolbar&q=cheesecake&hl=en"), settings);
    expect(r.ok && r.response.body.trimStart().startsWith("<?xml")).toBe(true);
    expect(r.ok && PARSERS["web-autocomplete"](r.response.body).suggestions.length).toBeGreaterThan(0);
  });

  test("a browser killed mid-page: that request fails as a network error, the next one gets a new browser", async () => {
    replay.setFaults({ latencyMs: 1_500, times: 1, kinds: ["web"] });
    const launches = pool.counts.launches;
    const pending = pool.fetch(ask(replay, "/search?q=coffee&hl=en"), settings);
    await new Promise((r) => setTimeout(r, 500));
    for (const pid of pool.processIds()) process.kill(pid, "SIGKILL");
    const failed = await pending;
    expect(failed).toMatchObject({ ok: false, failure: "network" });
    const next = await pool.fetch(ask(replay, "/search?q=coffee&hl=en"), settings);
    expect(next.ok && classify(next.response, "web-search")).toBe("results");
    expect(pool.counts.launches).toBe(launches + 1);
  }, 60_000);

  test("a request waits its turn for a page, but never past its own time limit", async () => {
    const one = new BrowserPool({ concurrency: 1 }, { ca: replay.certPem });
    try {
      replay.setFaults({ latencyMs: 2_000, times: 1, kinds: ["web"] });
      const slow = one.fetch(ask(replay, "/search?q=coffee&hl=en"), settings);
      await new Promise((r) => setTimeout(r, 200));
      const started = performance.now();
      const waiting = await one.fetch(ask(replay, "/search?q=coffee&hl=en"), { ...settings, timeoutMs: 500 });
      expect(waiting).toMatchObject({ ok: false, failure: "timeout" });
      expect(performance.now() - started).toBeLessThan(1_500);
      expect((await slow).ok).toBe(true);
    } finally {
      await one.close();
    }
  }, 60_000);

  test("headed, under a private Xvfb, it starts and renders", async () => {
    const display = process.env.DISPLAY;
    delete process.env.DISPLAY;
    const headed = new BrowserPool({ headless: false }, { ca: replay.certPem });
    try {
      const r = await headed.fetch(ask(replay, "/search?q=coffee&hl=en"), settings);
      expect(r.ok && classify(r.response, "web-search")).toBe("results");
    } finally {
      await headed.close();
      if (display !== undefined) process.env.DISPLAY = display;
    }
  }, 60_000);
});

d("browser transport: what a rendered page may fetch", () => {
  /** A page with the upstream's kinds of subresources, from a loopback server that logs every request. */
  let server: Server;
  let base: string;
  const seen: string[] = [];
  const PAGE = `<!doctype html><html><head><title>x - Google Search</title>
<link rel="stylesheet" href="/xjs/_/ss/k=style.css"><link rel="prefetch" href="/prefetched"><link rel="manifest" href="/manifest.json">
<script src="/xjs/_/js/k=app.js"></script></head>
<body><div id="search"><div id="rso"><div class="g"><a href="https://example.com/"><h3>Example</h3></a></div></div></div>
<img src="/logo.png"><a ping="/gen_204?ping" href="/url?q=x">x</a>
<script>navigator.sendBeacon("/gen_204?beacon", "x"); fetch("/complete/search?q=x"); fetch("/async/needed").then(r => r.text()).then(t => { document.querySelector("#rso").insertAdjacentHTML("beforeend", t); });</script>
</body></html>`;
  /** Results filled in by the page's script one at a time, 20 ms apart, as a deferred layout does. */
  const DEFERRED = `<!doctype html><html><head><title>y - Google Search</title></head><body><div id="search"><div id="rso"></div></div>
<script>let i = 0; const step = () => { document.querySelector("#rso").insertAdjacentHTML("beforeend", '<div class="g"><a href="https://example.com/' + i + '"><h3>Result ' + i + '</h3></a></div>'); if (++i < 20) setTimeout(step, 20); }; setTimeout(step, 20);</script>
</body></html>`;
  beforeAll(async () => {
    server = createServer((req, res) => {
      seen.push(req.url ?? "");
      const path = (req.url ?? "").split("?")[0];
      if (path === "/search") return res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(PAGE);
      if (path!.startsWith("/xjs/")) {
        const type = path!.includes("ss/") ? "text/css" : "text/javascript";
        return res.writeHead(200, { "content-type": type, "cache-control": "public, max-age=31536000, immutable" }).end(type === "text/css" ? "h3{color:red}" : "window.loaded=1;");
      }
      if (path === "/deferred") return res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(DEFERRED);
      if (path === "/async/needed") return res.writeHead(200, { "content-type": "text/html" }).end(`<div class="g"><a href="https://example.org/"><h3>Late</h3></a></div>`);
      res.writeHead(204).end();
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  test("scripts and styles come through the exit once, then from the local cache; pings, beacons, prefetches, images and logging XHRs never", async () => {
    const pool = new BrowserPool({ concurrency: 1, renderAlways: true });
    const req: BrowserRequest = { url: `${base}/search?q=x`, headers: { "accept-language": "en-US,en;q=0.9" }, device: "desktop", language: "en", country: "us" };
    try {
      const first = await pool.fetch(req, settings);
      const second = await pool.fetch(req, settings);
      if (!first.ok || !second.ok) throw new Error("the page did not load");
      // The page's own XHR (what it needs) ran, and the DOM was read after it filled the region in.
      expect(second.response.body).toContain("Late");
      expect(seen.filter((u) => u.startsWith("/xjs/")).sort()).toEqual(["/xjs/_/js/k=app.js", "/xjs/_/ss/k=style.css"]);
      expect(pool.statics.counts.hits).toBeGreaterThanOrEqual(2);
      expect(seen.filter((u) => /^\/(gen_204|complete|prefetched|manifest|logo)/.test(u))).toEqual([]);
      expect(seen.filter((u) => u.startsWith("/async/needed"))).toHaveLength(2);
      // The second page moved fewer bytes: its static files did not cross the exit again.
      expect(second.bytes.down).toBeLessThan(first.bytes.down);
    } finally {
      await pool.close();
    }
  }, 60_000);

  test("a rendered page is read once its results region stops changing, not when its HTML has arrived", async () => {
    const pool = new BrowserPool({ concurrency: 1, renderAlways: true });
    try {
      const r = await pool.fetch({ url: `${base}/deferred`, headers: {}, device: "desktop", language: "en", country: "us" }, settings);
      if (!r.ok) throw new Error(`${r.failure} ${r.detail}`);
      expect(r.response.body.match(/<h3>Result \d+<\/h3>/g)).toHaveLength(20);
    } finally {
      await pool.close();
    }
  }, 30_000);
});

d("browser transport: a page read raw", () => {
  test("keeps the cookies its document sets, and sends them with the next page, as a rendered one does", async () => {
    let n = 0;
    const cookies: string[] = [];
    const server = createServer((req, res) => {
      n++;
      cookies.push(req.headers.cookie ?? "");
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "set-cookie": `NID=v${n}; Path=/; Max-Age=600` }).end(`<html><body><div id="rso">page ${n}</div></body></html>`);
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    const pool = new BrowserPool({ concurrency: 1 });
    const req: BrowserRequest = { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/search?q=x`, headers: {}, device: "desktop", language: "en", country: "us" };
    try {
      const bodies: string[] = [];
      for (let i = 0; i < 3; i++) {
        const r = await pool.fetch(req, settings);
        if (!r.ok) throw new Error(`${r.failure} ${r.detail}`);
        bodies.push(r.response.body);
      }
      // The first rendered (the DOM, re-serialized), the others raw: exactly as sent.
      expect(bodies.slice(1)).toEqual([`<html><body><div id="rso">page 2</div></body></html>`, `<html><body><div id="rso">page 3</div></body></html>`]);
      expect(cookies).toEqual(["", "NID=v1", "NID=v2"]);
    } finally {
      await pool.close();
      server.close();
    }
  }, 30_000);
});

d("browser transport: a page's CPU slowed (cpuSlowdown)", () => {
  /** A page whose script times a fixed busy loop and writes how long it took (ms) into its results region. */
  const BUSY = `<!doctype html><html><head><title>z - Google Search</title></head><body><div id="search"><div id="rso"></div></div>
<script>const start = performance.now(); let x = 0; for (let i = 0; i < 2e7; i++) x += Math.sqrt(i); document.querySelector("#rso").textContent = "loop " + (performance.now() - start).toFixed(1) + " ms " + (x > 0);</script>
</body></html>`;
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((_, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(BUSY));
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  /** How long the page's loop took, rendered by this pool. */
  async function loopMs(pool: BrowserPool): Promise<number> {
    const r = await pool.fetch({ url: `${base}/search?q=busy`, headers: {}, device: "desktop", language: "en", country: "us" }, settings);
    if (!r.ok) throw new Error(`${r.failure} ${r.detail}`);
    const ms = /loop ([\d.]+) ms/.exec(r.response.body)?.[1];
    if (ms === undefined) throw new Error(`no loop time in the page: ${r.response.body.slice(0, 300)}`);
    return Number(ms);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

  test("the page's scripts run as on a slower machine: a fixed loop takes at least twice as long at 4×", async () => {
    const plain = new BrowserPool({ concurrency: 1, renderAlways: true });
    const slowed = new BrowserPool({ concurrency: 1, renderAlways: true, cpuSlowdown: 4 });
    try {
      // Alternately, so that a busy moment of the machine falls on both; the median of 3 each.
      const times = { plain: [] as number[], slowed: [] as number[] };
      for (let i = 0; i < 3; i++) {
        times.plain.push(await loopMs(plain));
        times.slowed.push(await loopMs(slowed));
      }
      expect(median(times.plain)).toBeGreaterThan(0);
      // About 4× measured (3.3–5× with the machine's load at 8 per core); 2× leaves room for that noise.
      expect(median(times.slowed)).toBeGreaterThanOrEqual(2 * median(times.plain));
    } finally {
      await plain.close();
      await slowed.close();
    }
  }, 60_000);
});

d("browser transport (a remote browser)", () => {
  let replay: ReplayServer;
  beforeAll(async () => {
    replay = await startReplayServer({ dir: FIXTURES_DIR, https: true, guard: "2026-11" });
  });
  afterAll(() => replay?.close());

  /** A Chromium with a remote-debugging endpoint, as a Selenium Grid node or browserless runs one. */
  async function startRemote(port = 0): Promise<{ child: ChildProcess; url: string; dir: string }> {
    const dir = mkdtempSync(join(tmpdir(), "remote-chromium-"));
    const child = spawn(
      CHROMIUM,
      [
        "--headless",
        "--no-sandbox",
        `--remote-debugging-port=${port}`,
        `--user-data-dir=${dir}`,
        "--disable-background-networking",
        "--disable-component-update",
        "--no-first-run",
        "--disable-blink-features=AutomationControlled",
        "--ignore-certificate-errors",
        "about:blank",
      ],
      // Its own process group, so that stopping it stops its renderers too.
      { stdio: "ignore", detached: true },
    );
    // Chromium writes the port it chose to DevToolsActivePort; a port given is simply answered on.
    const file = join(dir, "DevToolsActivePort");
    const until = Date.now() + 15_000;
    for (;;) {
      const chosen = port || (existsSync(file) ? Number(readFileSync(file, "utf8").split("\n")[0]) : 0);
      const answering = chosen > 0 && (await fetch(`http://127.0.0.1:${chosen}/json/version`).then((r) => r.ok, () => false));
      if (answering) return { child, dir, url: `http://127.0.0.1:${chosen}` };
      if (Date.now() > until) throw new Error("remote chromium did not start");
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const stop = async (remote: { child: ChildProcess; dir: string }) => {
    if (remote.child.exitCode === null) {
      process.kill(-remote.child.pid!, "SIGKILL");
      await new Promise((r) => remote.child.once("exit", r));
    }
    rmSync(remote.dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
  };

  test("over CDP: contexts on the remote browser, and it survives that browser's restart", async () => {
    let remote = await startRemote();
    const port = Number(new URL(remote.url).port);
    const pool = new BrowserPool({ cdpUrl: remote.url }, { insecure: true });
    try {
      const r = await pool.fetch(ask(replay, "/search?q=coffee&hl=en"), settings);
      expect(r.ok && classify(r.response, "web-search")).toBe("results");
      expect(pool.processIds()).toEqual([]); // nothing launched here
      await stop(remote);
      remote = await startRemote(port);
      const after = await pool.fetch(ask(replay, "/search?q=coffee&hl=en"), settings);
      expect(after.ok && classify(after.response, "web-search")).toBe("results");
      expect(pool.counts.launches).toBe(2); // connected again
    } finally {
      await pool.close();
      await stop(remote);
    }
  }, 90_000);

  test("a Playwright server (BROWSER_WS_ENDPOINT)", async () => {
    let server: BrowserServer | undefined;
    try {
      server = await chromium.launchServer({
        executablePath: CHROMIUM,
        headless: true,
        chromiumSandbox: false,
        args: ["--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-blink-features=AutomationControlled"],
      });
      const pool = new BrowserPool({ wsEndpoint: server.wsEndpoint() }, { insecure: true });
      try {
        const r = await pool.fetch(ask(replay, "/search?q=coffee&hl=en"), settings);
        expect(r.ok && classify(r.response, "web-search")).toBe("results");
      } finally {
        await pool.close();
      }
    } finally {
      await server?.close();
    }
  }, 60_000);
});
