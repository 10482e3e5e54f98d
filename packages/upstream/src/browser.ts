/**
 * The `browser` transport: a real Chromium renders the upstream's page, runs its JavaScript
 * challenge (which sets a cookie and reloads), and the rendered HTML goes to the same classifier
 * and parsers as every other transport (reference/upstream-2026.md §1–2: the richest parts of a
 * results page, and whole kinds, come only to a browser).
 *
 * Where the browser runs:
 * - locally: Debian's `chromium` (BROWSER_EXECUTABLE_PATH) launched by playwright-core, headless, or
 *   headed under Xvfb (BROWSER_HEADLESS=false; the reference reports headless rendering caught where
 *   headed Chrome passes), with the flags a closed network needs and a fresh profile per browser;
 * - remotely: a browser fleet the operator runs, reached over CDP (BROWSER_CDP_URL: Selenium Grid,
 *   browserless, a hosted scraping browser) or a Playwright server (BROWSER_WS_ENDPOINT). Nothing is
 *   launched; a lost connection is made again on the next request.
 *
 * A request renders in a context made for its settings (the proxy, locale, time zone and viewport of
 * the job's device, the agent); the context and an idle page are kept for the next request with the
 * same settings, since a new context and its renderer process cost more than the page itself
 * (measured: ~0.6 CPU-s and ~330 ms for an empty page here). Images, fonts, media and every
 * third-party host are blocked, since only the HTML is read. What a challenge earned (its cookies) is
 * kept per proxy for BROWSER_COOKIE_TTL_MS, so one challenge serves many jobs. Automation is not
 * announced: no `navigator.webdriver`, no "Headless" in the agent or its client hints.
 *
 * The pool: BROWSER_CONCURRENCY pages at once per process, the rest wait their turn (never past the
 * request's time limit). A local browser is replaced after BROWSER_RECYCLE_PAGES pages or past
 * BROWSER_MAX_RSS_MB; a crashed or hung one is replaced, and its request fails as a network error,
 * so the job goes on to another rung or another attempt, never billed for the crash.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, X509Certificate } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { chromium, type Browser, type BrowserContext, type Cookie, type Frame, type Page, type Response } from "playwright-core";
import { isJsWall, type UpstreamResponse } from "./classify.js";
import { startRequest, type FetchFailure, type FetchResult, type UpstreamTls } from "./fetch.js";
import type { Proxy } from "./proxies.js";

export interface BrowserOptions {
  /** Local Chromium. Default /usr/bin/chromium. */
  executablePath?: string;
  /** A remote browser over CDP (connectOverCDP); nothing is launched. */
  cdpUrl?: string;
  /** A remote Playwright server (connect); nothing is launched. */
  wsEndpoint?: string;
  /** Default true; false runs headed, under Xvfb when there is no DISPLAY. */
  headless?: boolean;
  /** Pages at once in this process. Default 2. */
  concurrency?: number;
  /** A local browser is replaced after this many pages. Default 200. */
  recyclePages?: number;
  /** ... or when its processes pass this resident size. Default 1536 MB. */
  maxRssMb?: number;
  /** How long a challenge's cookies are reused per proxy. Default 10 min. */
  cookieTtlMs?: number;
}

export const BROWSER_DEFAULTS = {
  executablePath: "/usr/bin/chromium",
  headless: true,
  concurrency: 2,
  recyclePages: 200,
  maxRssMb: 1536,
  cookieTtlMs: 10 * 60_000,
} as const;

/** Flags a closed network needs (no update, sync or first-run traffic), and no automation banner. */
const LAUNCH_ARGS = [
  "--disable-background-networking",
  "--disable-component-update",
  "--no-first-run",
  "--disable-sync",
  "--disable-default-apps",
  "--disable-dev-shm-usage",
  "--disable-blink-features=AutomationControlled",
  // No GPU here: software compositing without the GPU process costs less CPU per page (measured ~12%).
  "--disable-gpu",
  "--disable-software-rasterizer",
];

const BLOCKED_TYPES = new Set(["image", "font", "media"]);

/**
 * A headless page's window reports an outer size of 0 × 0 until it is first laid out (seen on a
 * fresh remote Chromium 156), a classic headless marker: report the viewport plus a browser's frame,
 * as a headed window does. Only when both are 0, so a real window keeps its own.
 */
const OUTER_SIZE = `if (window.outerWidth === 0 && window.outerHeight === 0) {
  Object.defineProperty(window, "outerWidth", { get: () => window.innerWidth, configurable: true });
  Object.defineProperty(window, "outerHeight", { get: () => window.innerHeight + 85, configurable: true });
}`;

/** Time zone by the job's country, for the common ones; others get UTC. */
const TIME_ZONES: Record<string, string> = {
  us: "America/New_York", ca: "America/Toronto", mx: "America/Mexico_City", br: "America/Sao_Paulo", ar: "America/Argentina/Buenos_Aires",
  gb: "Europe/London", ie: "Europe/Dublin", fr: "Europe/Paris", de: "Europe/Berlin", es: "Europe/Madrid", it: "Europe/Rome",
  nl: "Europe/Amsterdam", be: "Europe/Brussels", ch: "Europe/Zurich", at: "Europe/Vienna", pl: "Europe/Warsaw", se: "Europe/Stockholm",
  pt: "Europe/Lisbon", ru: "Europe/Moscow", tr: "Europe/Istanbul", ua: "Europe/Kyiv", in: "Asia/Kolkata", jp: "Asia/Tokyo",
  kr: "Asia/Seoul", cn: "Asia/Shanghai", sg: "Asia/Singapore", id: "Asia/Jakarta", ae: "Asia/Dubai", kz: "Asia/Almaty",
  au: "Australia/Sydney", nz: "Pacific/Auckland", za: "Africa/Johannesburg", eg: "Africa/Cairo", ng: "Africa/Lagos",
};

export interface BrowserRequest {
  url: string;
  /** Sent with every request of the page (accept-language, and the profile's own). */
  headers: Record<string, string>;
  /** The profile's agent; unset: the browser's own, without "Headless". */
  userAgent?: string;
  device: "desktop" | "mobile";
  language: string;
  country: string;
  proxy?: Proxy;
  signal?: AbortSignal;
}

export interface BrowserFetchSettings {
  timeoutMs: number;
  maxBodyBytes: number;
  tls?: UpstreamTls;
}

interface Live {
  browser: Browser;
  /** The local browser's process id (for its resident size). */
  pid?: number;
  pages: number;
  inFlight: number;
  retiring: boolean;
  /** Contexts by settings (proxy, locale, time zone, device, agent), each with its idle pages. */
  tabs: Map<string, Tab>;
}

/** One context and the pages it keeps open between requests with the same settings. */
interface Tab {
  context: BrowserContext;
  idle: Page[];
  lastUsed: number;
}

/** Contexts kept per browser, and idle pages per context (about 20-40 MB of renderer each). */
const MAX_TABS = 16;
const MAX_IDLE_PAGES = 4;

/** A wait for a free page that gives up with the request. */
class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  constructor(size: number) {
    this.free = size;
  }
  acquire(signal: AbortSignal): Promise<() => void> {
    const release = () => {
      const next = this.waiting.shift();
      if (next) next();
      else this.free++;
    };
    if (this.free > 0) {
      this.free--;
      return Promise.resolve(release);
    }
    return new Promise((granted, refused) => {
      const take = () => {
        signal.removeEventListener("abort", give);
        granted(release);
      };
      const give = () => {
        this.waiting.splice(this.waiting.indexOf(take), 1);
        refused(signal.reason);
      };
      this.waiting.push(take);
      signal.addEventListener("abort", give, { once: true });
    });
  }
}

export class BrowserPool {
  private readonly o: Required<Omit<BrowserOptions, "cdpUrl" | "wsEndpoint">> & Pick<BrowserOptions, "cdpUrl" | "wsEndpoint">;
  private readonly slots: Slots;
  private current?: Promise<Live>;
  private readonly all = new Set<Live>();
  private readonly cookies = new Map<string, { cookies: Cookie[]; until: number }>();
  private xvfb?: { process: ChildProcess; display: string };
  private closed = false;
  /** Browsers started (or connections made) so far, and pages rendered. */
  readonly counts = { launches: 0, pages: 0, crashes: 0 };

  constructor(
    options: BrowserOptions = {},
    private readonly tls: UpstreamTls = {},
  ) {
    const set = Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined));
    this.o = { ...BROWSER_DEFAULTS, ...set };
    this.slots = new Slots(this.o.concurrency);
  }

  get remote(): boolean {
    return Boolean(this.o.cdpUrl || this.o.wsEndpoint);
  }

  /** Renders the page. Resolves with a response or a failure; rejects only when `req.signal` aborts. */
  async fetch(req: BrowserRequest, settings: BrowserFetchSettings): Promise<FetchResult> {
    const { ms, timeout, signal } = startRequest(req.signal, settings.timeoutMs);
    let release: (() => void) | undefined;
    let live: Live | undefined;
    let tab: Tab | undefined;
    let page: Page | undefined;
    let reusable = false;
    try {
      release = await this.slots.acquire(signal);
      live = await this.browser();
      live.inFlight++;
      tab = await this.tab(live, req);
      page = tab.idle.pop() ?? (await this.page(tab, req));
      const response = await this.render(page, req, settings, signal);
      if (!response) return fail("network", "the page gave no response", ms());
      reusable = true;
      if (Buffer.byteLength(response.body) > settings.maxBodyBytes) return fail("too_large", `body over ${settings.maxBodyBytes} bytes`, ms());
      await this.keepCookies(tab.context, req);
      return { ok: true, response, ms: ms() };
    } catch (error) {
      if (req.signal?.aborted) throw req.signal.reason ?? error;
      if (timeout.aborted) return fail("timeout", `no page within ${settings.timeoutMs} ms`, ms());
      const detail = (error as Error).message?.split("\n")[0] ?? String(error);
      if (live && !live.browser.isConnected()) return fail("network", `browser crashed or disconnected: ${detail}`, ms());
      return fail("network", `browser: ${detail}`, ms());
    } finally {
      if (page && tab && live) {
        // A page that answered goes back for the next request with the same settings; any other is
        // closed, and a browser that cannot even close a page is hung: it is replaced.
        if (reusable && !live.retiring && live.browser.isConnected() && tab.idle.length < MAX_IDLE_PAGES) tab.idle.push(page);
        else await withTimeout(page.close(), 5_000).catch(() => live && this.retire(live, true));
      }
      if (live) {
        live.inFlight--;
        live.pages++;
        this.counts.pages++;
        if (!this.remote && (live.pages >= this.o.recyclePages || rssMb(live.pid) > this.o.maxRssMb)) this.retire(live);
        if (live.retiring && live.inFlight === 0) void this.shut(live);
      }
      release?.();
    }
  }

  /** The process ids of the local browsers now running (for drills and metrics). */
  processIds(): number[] {
    return [...this.all].flatMap((l) => (l.pid ? [l.pid] : []));
  }

  /** Closes every browser (or connection) and Xvfb. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.all].map((l) => this.shut(l)));
    this.xvfb?.process.kill("SIGTERM");
  }

  /** The browser in use, launched or connected on first need and again after a crash or recycle. */
  private browser(): Promise<Live> {
    if (this.closed) return Promise.reject(new Error("browser pool closed"));
    const attempt = (this.current ??= this.start().catch((error: unknown) => {
      this.current = undefined;
      throw error;
    }));
    return attempt.then((live) => {
      if (live.browser.isConnected() && !live.retiring) return live;
      if (this.current === attempt) this.current = undefined;
      return this.browser();
    });
  }

  private async start(): Promise<Live> {
    let browser: Browser;
    let pid: number | undefined;
    if (this.o.cdpUrl) browser = await chromium.connectOverCDP(this.o.cdpUrl);
    else if (this.o.wsEndpoint) browser = await chromium.connect(this.o.wsEndpoint);
    else {
      const before = new Set(childPids(process.pid));
      const display = this.o.headless ? undefined : await this.display();
      browser = await chromium.launch({
        executablePath: this.o.executablePath,
        headless: this.o.headless,
        chromiumSandbox: false,
        args: [...LAUNCH_ARGS, ...spkiFlag(this.tls.ca)],
        env: { ...process.env, ...(display ? { DISPLAY: display } : {}) },
      });
      pid = childPids(process.pid).find((p) => !before.has(p));
    }
    this.counts.launches++;
    const live: Live = { browser, pid, pages: 0, inFlight: 0, retiring: false, tabs: new Map() };
    this.all.add(live);
    browser.on("disconnected", () => {
      if (!live.retiring && !this.closed) this.counts.crashes++;
      live.retiring = true;
      this.all.delete(live);
    });
    return live;
  }

  /** The context for the request's settings on this browser: made once, then kept (the oldest idle one goes past MAX_TABS). */
  private async tab(live: Live, req: BrowserRequest): Promise<Tab> {
    const key = [req.proxy?.label ?? "direct", req.language, req.country, req.device, req.userAgent ?? ""].join("|");
    let tab = live.tabs.get(key);
    if (!tab) {
      tab = { context: await this.context(live.browser, req), idle: [], lastUsed: 0 };
      live.tabs.set(key, tab);
      if (live.tabs.size > MAX_TABS) {
        const [oldestKey, oldest] = [...live.tabs].filter(([k]) => k !== key).sort((a, b) => a[1].lastUsed - b[1].lastUsed)[0]!;
        live.tabs.delete(oldestKey);
        void withTimeout(oldest.context.close(), 5_000).catch(() => undefined);
      }
    }
    tab.lastUsed = Date.now();
    return tab;
  }

  /** A new page of the tab, announcing the agent's client hints. */
  private async page(tab: Tab, req: BrowserRequest): Promise<Page> {
    const page = await tab.context.newPage();
    await announceAsChrome(tab.context, page, req);
    return page;
  }

  private async context(browser: Browser, req: BrowserRequest): Promise<BrowserContext> {
    const mobile = req.device === "mobile";
    const userAgent = req.userAgent ?? agentFor(browser.version(), mobile);
    const proxy = req.proxy ? proxySettings(req.proxy.url) : undefined;
    const context = await browser.newContext({
      userAgent,
      locale: req.language === "en" ? "en-US" : req.language,
      timezoneId: TIME_ZONES[req.country] ?? "UTC",
      viewport: mobile ? { width: 390, height: 844 } : { width: 1366, height: 768 },
      ...(mobile ? { isMobile: true, hasTouch: true, deviceScaleFactor: 3 } : {}),
      extraHTTPHeaders: withoutAgent(req.headers),
      ignoreHTTPSErrors: Boolean(this.tls.insecure),
      serviceWorkers: "block",
      ...(proxy ? { proxy } : {}),
    });
    const host = new URL(req.url).host;
    await context.route("**/*", (route) => {
      const request = route.request();
      let sameHost = false;
      try {
        sameHost = new URL(request.url()).host === host;
      } catch {
        /* data: and blob: URLs have no host */
      }
      if (BLOCKED_TYPES.has(request.resourceType()) || !sameHost) return route.abort("blockedbyclient");
      return route.continue();
    });
    await context.addInitScript(OUTER_SIZE);
    const kept = this.cookies.get(this.cookieKey(req));
    if (kept && kept.until > Date.now()) await context.addCookies(kept.cookies);
    return context;
  }

  /**
   * Opens the page and follows what its own scripts do (a challenge sets its cookie and reloads)
   * until the main document settles: the last main-frame response's status and headers, the
   * rendered HTML, and the URL the page ended on (a /sorry/ redirect is a block).
   */
  private async render(page: Page, req: BrowserRequest, settings: BrowserFetchSettings, signal: AbortSignal): Promise<UpstreamResponse | undefined> {
    let last: Response | undefined;
    let navigations = 0;
    let navigated: () => void = () => undefined;
    const onResponse = (r: Response) => {
      if (r.request().isNavigationRequest() && r.frame() === page.mainFrame()) last = r;
    };
    const onNavigated = (f: Frame) => {
      if (f !== page.mainFrame()) return;
      navigations++;
      navigated();
    };
    page.on("response", onResponse);
    page.on("framenavigated", onNavigated);
    try {
      return await this.follow(page, req, settings, signal, () => last, () => navigations, (done) => (navigated = done));
    } finally {
      page.off("response", onResponse);
      page.off("framenavigated", onNavigated);
    }
  }

  private async follow(
    page: Page,
    req: BrowserRequest,
    settings: BrowserFetchSettings,
    signal: AbortSignal,
    lastResponse: () => Response | undefined,
    navigations: () => number,
    onNavigation: (done: () => void) => void,
  ): Promise<UpstreamResponse | undefined> {
    const aborted = new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
    aborted.catch(() => undefined);
    await Promise.race([page.goto(req.url, { waitUntil: "domcontentloaded", timeout: settings.timeoutMs }), aborted]);
    let body = "";
    for (let round = 0; round < MAX_CHALLENGE_ROUNDS; round++) {
      const seen = navigations();
      try {
        body = await Promise.race([page.content(), aborted]);
      } catch (error) {
        if (signal.aborted) throw error;
        // The page navigated while it was being read (a challenge reloading): read the new one.
        await Promise.race([page.waitForLoadState("domcontentloaded"), aborted]);
        continue;
      }
      if (!isJsWall(body)) break;
      // A challenge: its script sets the cookie and reloads. A wall that never does is given up on.
      if (navigations() === seen) {
        await Promise.race([new Promise<void>((done) => (onNavigation(done), setTimeout(done, CHALLENGE_WAIT_MS).unref())), aborted]);
        if (navigations() === seen) break;
      }
      await Promise.race([page.waitForLoadState("domcontentloaded"), aborted]);
    }
    const last = lastResponse();
    if (!last) return undefined;
    const headers = await last.allHeaders();
    // A suggestion list (JSON or XML) is read as it came; a page as the browser rendered it.
    if (!/html/i.test(headers["content-type"] ?? "html")) body = await last.text();
    return { statusCode: last.status(), headers, body, url: page.url() };
  }

  private cookieKey(req: BrowserRequest): string {
    return `${req.proxy?.label ?? "direct"} ${new URL(req.url).host}`;
  }

  private async keepCookies(context: BrowserContext, req: BrowserRequest): Promise<void> {
    const cookies = await context.cookies(new URL(req.url).origin);
    if (cookies.length) this.cookies.set(this.cookieKey(req), { cookies, until: Date.now() + this.o.cookieTtlMs });
  }

  /** No new page goes to this browser; it closes when its pages are done (or now, when `force`). */
  private retire(live: Live, force = false): void {
    live.retiring = true;
    void this.current?.then((c) => c === live && (this.current = undefined));
    if (force) void this.shut(live);
  }

  private async shut(live: Live): Promise<void> {
    this.all.delete(live);
    await withTimeout(live.browser.close(), 5_000).catch(() => {
      if (live.pid) process.kill(live.pid, "SIGKILL");
    });
  }

  /** An X display for a headed browser: the environment's, or a private Xvfb. */
  private async display(): Promise<string> {
    if (process.env.DISPLAY) return process.env.DISPLAY;
    if (this.xvfb) return this.xvfb.display;
    const child = spawn("Xvfb", ["-displayfd", "3", "-screen", "0", "1366x768x24", "-nolisten", "tcp"], { stdio: ["ignore", "ignore", "pipe", "pipe"] });
    const display = await new Promise<string>((ready, fail) => {
      child.once("error", (e) => fail(new Error(`Xvfb could not start (apt-get install xvfb): ${e.message}`)));
      child.once("exit", (code) => fail(new Error(`Xvfb exited (${code})`)));
      (child.stdio[3] as NodeJS.ReadableStream).once("data", (d: Buffer) => ready(`:${d.toString().trim()}`));
    });
    child.unref();
    this.xvfb = { process: child, display };
    return display;
  }
}

/** How long a challenge page is given to reload itself, and how many challenges in a row are followed. */
const CHALLENGE_WAIT_MS = 5_000;
const MAX_CHALLENGE_ROUNDS = 4;

/** The browser's own agent for the device, as a browser that is not headless writes it. */
function agentFor(version: string, mobile: boolean): string {
  const major = version.split(".")[0] ?? "156";
  return mobile
    ? `Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${major}.0.0.0 Mobile Safari/537.36`
    : `Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${major}.0.0.0 Safari/537.36`;
}

/**
 * Client hints to match the agent: a headless Chromium names itself "HeadlessChrome" in
 * `navigator.userAgentData.brands` (a remote one does, seen with Chromium 156 over CDP) even when
 * the agent string is overridden, and the upstream reads both.
 */
async function announceAsChrome(context: BrowserContext, page: Page, req: BrowserRequest): Promise<void> {
  const version = context.browser()?.version() ?? "156.0.0.0";
  const major = version.split(".")[0]!;
  const mobile = req.device === "mobile";
  const session = await context.newCDPSession(page);
  await session.send("Emulation.setUserAgentOverride", {
    userAgent: req.userAgent ?? agentFor(version, mobile),
    acceptLanguage: req.headers["accept-language"],
    platform: mobile ? "Linux armv8l" : "Linux x86_64",
    userAgentMetadata: {
      brands: [
        { brand: "Chromium", version: major },
        { brand: "Not:A-Brand", version: "24" },
      ],
      fullVersion: version,
      platform: mobile ? "Android" : "Linux",
      platformVersion: mobile ? "10.0.0" : "6.1.0",
      architecture: mobile ? "" : "x86",
      model: mobile ? "K" : "",
      mobile,
    },
  });
  await session.detach();
}

function fail(failure: FetchFailure, detail: string, ms: number): FetchResult {
  return { ok: false, failure, detail, ms };
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error("timed out")), ms).unref())]);
}

function withoutAgent(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([k]) => k !== "user-agent"));
}

function proxySettings(url: string): { server: string; username?: string; password?: string } {
  const u = new URL(url);
  return {
    server: `${u.protocol}//${u.host}`,
    ...(u.username ? { username: decodeURIComponent(u.username), password: decodeURIComponent(u.password) } : {}),
  };
}

/**
 * A private CA for a local browser: Chromium takes no CA file, but trusts certificates whose public
 * key is listed (`--ignore-certificate-errors-spki-list`), which covers a self-signed upstream.
 */
function spkiFlag(ca: string | undefined): string[] {
  if (!ca) return [];
  const pems = ca.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  const hashes = pems.map((pem) => {
    const spki = new X509Certificate(pem).publicKey.export({ type: "spki", format: "der" });
    return createHash("sha256").update(spki).digest("base64");
  });
  return hashes.length ? [`--ignore-certificate-errors-spki-list=${hashes.join(",")}`] : [];
}

/** Direct children of a process (Linux /proc). */
function childPids(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

/** Resident size of a process and all its descendants, in MB (0 where /proc cannot tell). */
export function rssMb(pid: number | undefined): number {
  if (!pid) return 0;
  let kb = 0;
  const stack = [pid];
  while (stack.length) {
    const p = stack.pop()!;
    try {
      kb += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, "utf8"))?.[1] ?? 0);
    } catch {
      continue;
    }
    stack.push(...childPids(p));
  }
  return kb / 1024;
}
