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
 * (measured: ~0.6 CPU-s and ~330 ms for an empty page here). What a challenge earned (its cookies) is
 * kept per proxy for BROWSER_COOKIE_TTL_MS, so one challenge serves many jobs. Automation is not
 * announced: no `navigator.webdriver`, no "Headless" in the agent or its client hints.
 *
 * What a page costs: once an exit has had a page that was no challenge, its pages are read as they
 * arrive (the document through Chromium's network stack, cookies and exit; the renderer gets an empty
 * page), since the browser is needed for its network stack and cookies, not its rendering: ~0.2
 * CPU-s a page against ~0.7 rendered. A page is rendered the first time and whenever a challenge must
 * run (or always, BROWSER_RENDER_ALWAYS); its DOM is read once settled, never after a fixed wait. A
 * rendered page fetches only what the parse can need (images, fonts, media, pings, prefetches, logging
 * XHRs and third-party hosts are blocked) and takes the upstream's script and style files from a
 * per-process cache once seen. Every result says the bytes it moved through its exit.
 *
 * The pool: BROWSER_CONCURRENCY pages at once per process, the rest wait their turn (never past the
 * request's time limit). A local browser is replaced after BROWSER_RECYCLE_PAGES pages or past
 * BROWSER_MAX_RSS_MB; a crashed or hung one is replaced, and its request fails as a network error,
 * so the job goes on to another rung or another attempt, never billed for the crash.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createHash, X509Certificate } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import type { Browser, BrowserContext, CDPSession, Cookie, Frame, Page, Response, Route } from "playwright-core";
import { isJsWall, type UpstreamResponse } from "./classify.js";
import { decode, startRequest, type FetchFailure, type FetchResult, type UpstreamTls } from "./fetch.js";
import type { Proxy } from "./proxies.js";
import type { Transport } from "./transports.js";

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
  /**
   * Default false: a page is read as its document arrives (nothing rendered) and rendered only when
   * a challenge must run. True renders every page and reads its DOM once settled.
   */
  renderAlways?: boolean;
  /**
   * The pages' CPU slowed by this factor with Chrome's CPU throttling (CDP
   * Emulation.setCPUThrottlingRate, as DevTools' slow-CPU setting): pages render as on a machine
   * that many times slower or busier. Default 1 (not slowed); for tests and for reproducing a slow host.
   */
  cpuSlowdown?: number;
}

export const BROWSER_DEFAULTS = {
  executablePath: "/usr/bin/chromium",
  headless: true,
  concurrency: 2,
  recyclePages: 200,
  maxRssMb: 1536,
  cookieTtlMs: 10 * 60_000,
  renderAlways: false,
  cpuSlowdown: 1,
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

/**
 * What a page may not fetch through the exit, since the parse reads only the HTML: images, fonts,
 * media, pings and beacons (`<a ping>`, sendBeacon), prefetches and other hints ("other"), manifests,
 * text tracks, event streams and sockets; and, of the XHRs, the upstream's logging and the
 * suggestions a focused search box asks for. A navigation is never blocked (a suggestion list is one).
 */
const BLOCKED_TYPES = new Set(["image", "font", "media", "ping", "beacon", "other", "manifest", "texttrack", "eventsource", "websocket", "csp_report"]);
const BLOCKED_PATHS = /^\/(gen_204|client_204|log|complete\/search|async\/bgasy)(\?|\/|$)/;
/** Static files served from the local cache instead of the exit, once seen. */
const CACHED_TYPES = new Set(["script", "stylesheet"]);

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
  /** Cookies the request's session holds (an exemption a solved /sorry/ page earned), set on its context. */
  cookies?: ReadonlyMap<string, string>;
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

/** Bytes one request moved through its exit: what was sent (`up`) and received (`down`), every subresource included. */
export interface ByteCount {
  up: number;
  down: number;
}

export type BrowserFetchResult = FetchResult & { bytes: ByteCount };

export interface BrowserPages {
  capacity: number;
  inUse: number;
  waiting: number;
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

/** A browser's memory is checked after every this many pages. */
const MEMORY_CHECK_EVERY = 8;

/** Contexts kept per browser, and idle pages per context (about 20-40 MB of renderer each). */
const MAX_TABS = 16;
const MAX_IDLE_PAGES = 4;

/** A wait for a free page that gives up with the request. */
class Slots {
  private free: number;
  private readonly waiting: (() => void)[] = [];
  constructor(readonly size: number) {
    this.free = size;
  }
  /** Pages open now, and requests waiting for one. */
  get load(): { inUse: number; waiting: number } {
    return { inUse: this.size - this.free, waiting: this.waiting.length };
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
  /** Exits (proxy and host) whose last page was no challenge, until when: their pages are read raw. */
  private readonly cleared = new Map<string, number>();
  /** The upstream's script and style files, kept across pages and contexts. */
  readonly statics = new StaticCache();
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

  /** Pages this process may have open at once, those open now, and requests waiting for one (serp_browser_pages). */
  pages(): BrowserPages {
    return { capacity: this.slots.size, ...this.slots.load };
  }

  /**
   * Fetches the page through the browser: its document as it arrives, or rendered when a challenge
   * must run (or `renderAlways`). Resolves with a response or a failure, and the bytes it moved
   * through the exit; rejects only when `req.signal` aborts.
   */
  async fetch(req: BrowserRequest, settings: BrowserFetchSettings): Promise<BrowserFetchResult> {
    const { ms, timeout, signal } = startRequest(req.signal, settings.timeoutMs);
    const deadline = performance.now() + settings.timeoutMs;
    let release: (() => void) | undefined;
    let live: Live | undefined;
    let tab: Tab | undefined;
    let page: Page | undefined;
    let meter: Meter | undefined;
    let reusable = false;
    const result = (r: FetchResult): BrowserFetchResult => ({ ...r, bytes: meter ? meter.total() : { up: 0, down: 0 } });
    try {
      release = await this.slots.acquire(signal);
      live = await this.browser();
      live.inFlight++;
      tab = await this.tab(live, req);
      if (req.cookies?.size) {
        const origin = new URL(req.url).origin;
        await tab.context.addCookies([...req.cookies].map(([name, value]) => ({ name, value, url: origin })));
      }
      page = tab.idle.pop() ?? (await this.page(tab, req));
      const tap = TAPS.get(page)!;
      meter = tap.meter = new Meter();
      // Raw once this exit has had a page that was not a challenge (the cookie it needs is held);
      // until then, and whenever the raw answer is a challenge after all, the page is rendered.
      const cleared = !this.o.renderAlways && (this.cleared.get(this.cookieKey(req)) ?? 0) > Date.now();
      let response = cleared ? await this.raw(page, tap, req, settings, signal) : undefined;
      if (!response || isJsWall(response.body)) response = await this.render(page, req, settings, signal, deadline);
      if (!response) return result(fail("network", "the page gave no response", ms()));
      reusable = true;
      if (Buffer.byteLength(response.body) > settings.maxBodyBytes) return result(fail("too_large", `body over ${settings.maxBodyBytes} bytes`, ms()));
      await this.keepCookies(tab.context, req);
      if (!isJsWall(response.body)) this.clear(this.cookieKey(req));
      return result({ ok: true, response, ms: ms() });
    } catch (error) {
      if (req.signal?.aborted) throw req.signal.reason ?? error;
      if (timeout.aborted) return result(fail("timeout", `no page within ${settings.timeoutMs} ms`, ms()));
      const detail = (error as Error).message?.split("\n")[0] ?? String(error);
      if (live && !live.browser.isConnected()) return result(fail("network", `browser crashed or disconnected: ${detail}`, ms()));
      return result(fail("network", `browser: ${detail}`, ms()));
    } finally {
      if (page) {
        const tap = TAPS.get(page);
        if (tap) tap.meter = undefined;
      }
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
        // Memory is read every few pages: /proc's page walk costs about what a raw page does.
        const memoryDue = live.pages % MEMORY_CHECK_EVERY === 0;
        if (!this.remote && (live.pages >= this.o.recyclePages || (memoryDue && overMemory(live.pid, this.o.maxRssMb)))) this.retire(live);
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
    // Loaded with the first browser, not with the module: playwright-core is most of what an API or
    // a worker without browser rungs would otherwise load at start (a sixth of its start-up CPU).
    const { chromium } = await import("playwright-core");
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

  /** A new page of the tab, announcing the agent's client hints, its CPU slowed when asked (`cpuSlowdown`). */
  private async page(tab: Tab, req: BrowserRequest): Promise<Page> {
    const page = await tab.context.newPage();
    await announceAsChrome(tab.context, page, req);
    const tap = await tapOf(tab.context, page);
    if (this.o.cpuSlowdown > 1) await tap.session.send("Emulation.setCPUThrottlingRate", { rate: this.o.cpuSlowdown });
    TAPS.set(page, tap);
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
    await context.route("**/*", (route) => this.route(route, host));
    // A static file that came through the exit is kept for every later page (of any context).
    context.on("response", (response) => this.statics.keep(response));
    await context.addInitScript(OUTER_SIZE);
    const kept = this.cookies.get(this.cookieKey(req));
    if (kept && kept.until > Date.now()) await context.addCookies(kept.cookies);
    return context;
  }

  /**
   * The document as it arrives, through the browser's own network stack, cookies and exit: the
   * response is taken at the network layer and the renderer is handed an empty page instead, so
   * nothing is parsed, styled, laid out or run (the parse reads the HTML the upstream sent, which
   * parses as the rendered page does). Redirects are followed as a browser follows them; a
   * challenge in the answer is left to `render`. Undefined when no document came.
   */
  private async raw(page: Page, tap: Tap, req: BrowserRequest, settings: BrowserFetchSettings, signal: AbortSignal): Promise<UpstreamResponse | undefined> {
    const { session } = tap;
    let taken: (response: UpstreamResponse | undefined) => void = () => undefined;
    const arrived = new Promise<UpstreamResponse | undefined>((done) => (taken = done));
    const onPaused = (event: PausedResponse) => {
      void this.take(session, tap, event).then(
        (response) => response && taken(response),
        () => {
          // Not readable after all: the browser has it as it came, and the page is rendered instead.
          void session.send("Fetch.continueRequest", { requestId: event.requestId }).catch(() => undefined);
          taken(undefined);
        },
      );
    };
    const aborted = new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
    aborted.catch(() => undefined);
    session.on("Fetch.requestPaused", onPaused);
    try {
      await session.send("Fetch.enable", { patterns: [{ urlPattern: "*", resourceType: "Document", requestStage: "Response" }] });
      const [, response] = await Promise.race([Promise.all([page.goto(req.url, { waitUntil: "commit", timeout: settings.timeoutMs }), arrived]), aborted]);
      return response;
    } finally {
      session.off("Fetch.requestPaused", onPaused);
      await session.send("Fetch.disable").catch(() => undefined);
    }
  }

  /** One paused main-document response: a redirect goes on; the last answer is kept and an empty page given in its place. */
  private async take(session: CDPSession, tap: Tap, event: PausedResponse): Promise<UpstreamResponse | undefined> {
    const status = event.responseStatusCode ?? 0;
    const headerList = event.responseHeaders ?? [];
    const headers: Record<string, string> = {};
    for (const { name, value } of headerList) {
      const key = name.toLowerCase();
      headers[key] = headers[key] === undefined ? value : `${headers[key]}${key === "set-cookie" ? "\n" : ", "}${value}`;
    }
    if (status >= 300 && status < 400 && headers.location) {
      await session.send("Fetch.continueRequest", { requestId: event.requestId });
      return undefined;
    }
    const { body, base64Encoded } = await session.send("Fetch.getResponseBody", { requestId: event.requestId });
    const bytes = Buffer.from(body, base64Encoded ? "base64" : "utf8");
    // What crossed the exit: the status line and headers, and the body as sent (its declared length
    // when the server gave one, which is the compressed size; else the size as decoded).
    const declared = Number(headers["content-length"]);
    const wire = Number.isFinite(declared) && declared >= 0 && headers["content-length"] !== undefined ? declared : bytes.length;
    if (event.networkId) tap.meter?.counted(event.networkId, STATUS_LINE + headerBytes(headerList) + wire);
    // The page's cookies still come from its headers; the renderer gets an empty document.
    await session.send("Fetch.fulfillRequest", {
      requestId: event.requestId,
      responseCode: status || 200,
      responseHeaders: headerList.filter(({ name }: { name: string }) => !/^(content-length|content-encoding|content-type|transfer-encoding)$/i.test(name)).concat({ name: "content-type", value: "text/html" }),
      body: EMPTY_PAGE,
    });
    const contentType = headers["content-type"];
    return { statusCode: status, headers, body: /html|xml|json|text/i.test(contentType ?? "html") ? decode(bytes, contentType) : bytes.toString("latin1"), url: event.request.url };
  }

  /**
   * Opens the page and follows what its own scripts do (a challenge sets its cookie and reloads)
   * until the main document settles: the last main-frame response's status and headers, the
   * rendered HTML, and the URL the page ended on (a /sorry/ redirect is a block).
   */
  private async render(page: Page, req: BrowserRequest, settings: BrowserFetchSettings, signal: AbortSignal, deadline: number): Promise<UpstreamResponse | undefined> {
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
      return await this.follow(page, req, settings, signal, deadline, () => last, () => navigations, (done) => (navigated = done));
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
    deadline: number,
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
        // The DOM is read once the results region is complete, never after a fixed wait.
        await Promise.race([settled(page, deadline), aborted]);
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

  /** Marks an exit past its challenge for the cookie's lifetime (expired marks go once there are many). */
  private clear(key: string): void {
    const now = Date.now();
    if (this.cleared.size >= 10_000) for (const [k, until] of this.cleared) if (until <= now) this.cleared.delete(k);
    this.cleared.set(key, now + this.o.cookieTtlMs);
  }

  /** Only the page's own host, nothing the parse does not need, and static files from the local cache once seen. */
  private route(route: Route, host: string): Promise<void> {
    const request = route.request();
    let url: URL | undefined;
    try {
      url = new URL(request.url());
    } catch {
      /* data: and blob: URLs have no host */
    }
    if (!url || url.host !== host) return route.abort("blockedbyclient");
    if (request.isNavigationRequest()) return route.continue();
    if (BLOCKED_TYPES.has(request.resourceType()) || BLOCKED_PATHS.test(url.pathname)) return route.abort("blockedbyclient");
    const cached = CACHED_TYPES.has(request.resourceType()) && request.method() === "GET" ? this.statics.get(url.href) : undefined;
    if (cached) return route.fulfill(cached);
    return route.continue();
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
      try {
        if (live.pid) process.kill(live.pid, "SIGKILL");
      } catch {
        /* it exited meanwhile */
      }
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

/** The parts of a CDP Fetch.requestPaused event (response stage) read here. */
interface PausedResponse {
  requestId: string;
  networkId?: string;
  request: { url: string };
  responseStatusCode?: number;
  responseHeaders?: { name: string; value: string }[];
}

/** Every page's own CDP session: its raw document interception and its byte meter. */
interface Tap {
  session: CDPSession;
  /** The request now using the page, counting its bytes. */
  meter?: Meter;
}
const TAPS = new WeakMap<Page, Tap>();

/** The renderer's stand-in for a document read raw. */
const EMPTY_PAGE = Buffer.from("<!doctype html><title></title>").toString("base64");
/** "HTTP/1.1 200 OK\r\n" and the blank line after the headers. */
const STATUS_LINE = 19;

/** Header bytes as HTTP/1.1 writes them ("name: value\r\n"). */
function headerBytes(headers: { name: string; value: string }[] | Record<string, string>): number {
  const list = Array.isArray(headers) ? headers : Object.entries(headers).map(([name, value]) => ({ name, value }));
  return list.reduce((n, { name, value }) => n + Buffer.byteLength(name) + Buffer.byteLength(String(value)) + 4, 0);
}

/**
 * Bytes one request moves through its exit, from the browser's network events: what it sent (request
 * line, headers as sent, cookies included, and bodies) and received (each response as it came over
 * the wire, headers included) for the requests that really left; blocked ones and those the local
 * cache answered never do. TLS and the proxy's CONNECT add a little on top.
 */
class Meter {
  up = 0;
  down = 0;
  private readonly sent = new Map<string, { line: number }>();
  private readonly network = new Set<string>();
  private readonly done = new Set<string>();

  requestSent(event: { requestId: string; request: { url: string; method: string; postData?: string }; redirectResponse?: { encodedDataLength: number } }): void {
    // A redirect's next hop: the hop before it has ended here, with its own size.
    if (event.redirectResponse && this.network.has(event.requestId)) this.down += event.redirectResponse.encodedDataLength;
    const url = new URL(event.request.url);
    this.sent.set(event.requestId, { line: event.request.method.length + url.pathname.length + url.search.length + 12 });
    this.up += event.request.postData ? Buffer.byteLength(event.request.postData) : 0;
  }

  headersSent(event: { requestId: string; headers: Record<string, unknown> }): void {
    const pseudo = Object.keys(event.headers).some((k) => k.startsWith(":"));
    this.up += headerBytes(event.headers as Record<string, string>) + (pseudo ? 2 : (this.sent.get(event.requestId)?.line ?? 16));
  }

  /** Only requests that reached the network get this (not those fulfilled locally). */
  received(requestId: string): void {
    this.network.add(requestId);
  }

  finished(event: { requestId: string; encodedDataLength: number }): void {
    if (this.network.has(event.requestId) && !this.done.has(event.requestId)) this.down += event.encodedDataLength;
    this.done.add(event.requestId);
  }

  /** A response whose size was counted where it was taken (a raw document). */
  counted(requestId: string, bytes: number): void {
    if (this.done.has(requestId)) return;
    this.done.add(requestId);
    this.down += bytes;
  }

  total(): ByteCount {
    return { up: this.up, down: this.down };
  }
}

/** The page's own session: the network events counted into whichever request uses the page. */
async function tapOf(context: BrowserContext, page: Page): Promise<Tap> {
  const session = await context.newCDPSession(page);
  const tap: Tap = { session };
  session.on("Network.requestWillBeSent", (e) => tap.meter?.requestSent(e));
  session.on("Network.requestWillBeSentExtraInfo", (e) => tap.meter?.headersSent(e));
  session.on("Network.responseReceivedExtraInfo", (e) => tap.meter?.received(e.requestId));
  session.on("Network.loadingFinished", (e) => tap.meter?.finished(e));
  // Bodies are not kept for this session (the raw path reads its document from Fetch).
  await session.send("Network.enable", { maxTotalBufferSize: 0, maxResourceBufferSize: 0 });
  return tap;
}

/**
 * Resolves when the page's DOM is complete enough to read: its HTML parsed, a results landmark
 * present (or the page fully loaded without one), and no mutation for QUIET_MS; bounded by the
 * request's deadline (less a margin to read it), never a fixed wait. Rejects when the page navigates
 * meanwhile (a challenge reloading), which the caller follows.
 */
async function settled(page: Page, deadline: number): Promise<void> {
  const maxMs = Math.max(0, Math.min(SETTLE_MAX_MS, deadline - performance.now() - 500));
  await page.evaluate(`(${SETTLE})(${JSON.stringify({ quietMs: QUIET_MS, maxMs, landmarks: LANDMARKS })})`);
}

/** Runs in the page (the project has no DOM types, so it is written as source). */
const SETTLE = `({ quietMs, maxMs, landmarks }) => new Promise((done) => {
  const start = performance.now();
  let last = start;
  // A style change (an animation) is not content; anything else restarts the quiet period.
  const observer = new MutationObserver((records) => {
    if (records.some((r) => r.type !== "attributes" || r.attributeName !== "style")) last = performance.now();
  });
  observer.observe(document, { childList: true, subtree: true, attributes: true, characterData: true });
  const check = () => {
    const now = performance.now();
    const ready = document.readyState !== "loading" && (document.readyState === "complete" || document.querySelector(landmarks) !== null);
    if ((ready && now - last >= quietMs) || now - start >= maxMs) {
      observer.disconnect();
      done();
    } else setTimeout(check, 25);
  };
  check();
})`;

/** Where each kind's results live (web, news, images, shopping, local), any of which marks a results page. */
const LANDMARKS = "#rso, #search, #center_col, #main, #res, #islrg, #isr_mc, [role='main'], #sh-osd__online-sellers-cont, .sh-pr__product-results-grid, .rl_full-list";
/** How long the DOM must stay unchanged to be read, and the longest wait for that. */
const QUIET_MS = 150;
const SETTLE_MAX_MS = 10_000;

/** The upstream's script and style files by URL, as long as their own caching headers allow, up to MAX_STATIC_BYTES. */
export class StaticCache {
  private readonly files = new Map<string, { status: number; headers: Record<string, string>; body: Buffer; until: number }>();
  private size = 0;
  /** Answers from the cache, and files kept. */
  readonly counts = { hits: 0, kept: 0 };

  get(url: string): { status: number; headers: Record<string, string>; body: Buffer } | undefined {
    const file = this.files.get(url);
    if (!file) return undefined;
    if (file.until < Date.now()) {
      this.drop(url);
      return undefined;
    }
    this.counts.hits++;
    return file;
  }

  /** Keeps a script or style file that came through the exit, when its headers say it may be reused. */
  keep(response: Response): void {
    const request = response.request();
    if (!CACHED_TYPES.has(request.resourceType()) || request.method() !== "GET" || response.status() !== 200 || this.files.has(request.url())) return;
    const headers = response.headers();
    const ttl = reusableFor(headers["cache-control"]);
    if (ttl <= 0) return;
    response.body().then(
      (body) => {
        if (body.length > MAX_STATIC_BYTES / 8 || this.files.has(request.url())) return;
        const kept = Object.fromEntries(Object.entries(headers).filter(([k]) => /^(content-type|cache-control|etag|last-modified)$/.test(k)));
        this.files.set(request.url(), { status: 200, headers: kept, body, until: Date.now() + ttl });
        this.size += body.length;
        this.counts.kept++;
        // The oldest go first past the bound.
        for (const [url] of this.files) {
          if (this.size <= MAX_STATIC_BYTES) break;
          this.drop(url);
        }
      },
      () => undefined, // the page went away first: the next one keeps it
    );
  }

  private drop(url: string): void {
    const file = this.files.get(url);
    if (!file) return;
    this.size -= file.body.length;
    this.files.delete(url);
  }
}

/** Bytes of static files kept per process. */
const MAX_STATIC_BYTES = 64 * 1024 * 1024;
/** The longest a static file is kept, whatever its headers say. */
const MAX_STATIC_MS = 24 * 3_600_000;

/** How long a response may be reused by its Cache-Control (`immutable` or `max-age`, never `no-store`, `no-cache` or `private`), in ms. */
export function reusableFor(cacheControl: string | undefined): number {
  const cc = (cacheControl ?? "").toLowerCase();
  if (!cc || /no-store|no-cache|private/.test(cc)) return 0;
  const maxAge = Number(/(?:^|[,\s])max-age=(\d+)/.exec(cc)?.[1] ?? (cc.includes("immutable") ? 86_400 : 0));
  return Math.min(maxAge * 1000, MAX_STATIC_MS);
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
  return treeKb(pid, (p) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${p}/status`, "utf8"))?.[1] ?? 0)) / 1024;
}

/**
 * Whether a browser's processes hold more than `limitMb` of memory. Chromium's processes share much
 * of theirs, which a sum of resident sizes counts once per process (four pages read as ~1.8 GB):
 * past the limit by that cheap sum, their proportional share (PSS, each shared page split among its
 * sharers) decides.
 */
function overMemory(pid: number | undefined, limitMb: number): boolean {
  if (rssMb(pid) <= limitMb) return false;
  const pss = treeKb(pid, (p) => Number(/^Pss:\s+(\d+)/m.exec(readFileSync(`/proc/${p}/smaps_rollup`, "utf8"))?.[1] ?? 0)) / 1024;
  return pss === 0 || pss > limitMb;
}

function treeKb(pid: number | undefined, kbOf: (pid: number) => number): number {
  if (!pid) return 0;
  let kb = 0;
  const stack = [pid];
  while (stack.length) {
    const p = stack.pop()!;
    try {
      kb += kbOf(p);
    } catch {
      continue;
    }
    stack.push(...childPids(p));
  }
  return kb;
}

/** The `browser` transport's entry in TRANSPORTS: the session's cookies are set on the page's context. */
export const browserTransport: Transport = {
  label: () => "browser",
  send: ({ url, headers, jar, profile, params, proxy, signal }, { browsers, settings }) => {
    const { device = "desktop", language, country } = params;
    return browsers().fetch({ url, headers, userAgent: profile.userAgent, device, language, country, proxy, signal, ...(jar?.size ? { cookies: jar } : {}) }, settings);
  },
};
