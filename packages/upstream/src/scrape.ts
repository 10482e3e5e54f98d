/**
 * The pipeline a worker calls: for each try (the kind's profiles in order, each through the next
 * proxy in turn, each behind its circuit breakers) build the URL, fetch over the profile's
 * transport (transports.ts), classify, and parse only results pages. The first page that parses into something,
 * and whose coverage figure (coverage.ts) clears its kind's threshold, wins: a results page
 * understood only in part is treated like a wall, and the next rung is asked. When every try fails, an UpstreamFailure says why in the customer's words (JOB_ERRORS),
 * whether trying the whole job later could help, and, for operators, how each rung ended.
 */
import { JOB_ERRORS, type BlocksByEndpoint, type Endpoint, type JobParams, type ServedLayout } from "@serp/shared";
import { Breakers, isSkip, type BreakerStatus, type Skip } from "./breakers.js";
import { classify } from "./classify.js";
import { FAILURES, TELLING, failureOfOutcome, outcomeOf, type FailureKind, type Outcome, type PageClass, type TryOutcome } from "./failures.js";
import { DirectAgents, fetchPage, postForm, withJar, type FetchResult, type FetchSettings } from "./fetch.js";
import { CaptchaError, exemptionRequest, readSorryPage, type CaptchaSolver } from "./captcha.js";
import { BrowserPool, type BrowserPages } from "./browser.js";
import { browserOptionsOf, readCaFile, type UpstreamConfig } from "./env.js";
import { ImpersonatingClients } from "./impersonate.js";
import { Locations } from "./locations.js";
import { COVERAGE_THRESHOLDS, parsePage, understood, type Coverage, type Parsed } from "./coverage.js";
import { createParsePool } from "./parse-pool.js";
import { kindOf, PARSERS } from "./kinds/index.js";
import { fixedProfileSource, profileSource, type ProfileSource, type UpstreamLog } from "./profile-source.js";
import { acceptLanguage, layoutOf, profilesFor, rungsFor, type Profile, type ProfileTable } from "./profiles.js";
import type { ProxyFailure } from "./proxies.js";
import { exitsSource } from "./exits/source.js";
import { MemoryExitHealth, type ExitEvent, type ExitHealth, type ExitHealthOptions } from "./exits/health.js";
import { ExitRouter, isLease, type Lease, type RouterEvents } from "./exits/router.js";
import { TRANSPORTS, type TransportClients } from "./transports.js";
import { buildUrl, type UrlContext } from "./urls.js";


export interface TryRecord {
  url: string;
  profile: string;
  /** `http`, or `impersonate <browser>`. */
  transport: string;
  outcome: TryOutcome;
  ms: number;
  /** HTTP status, when a response arrived. */
  status?: number;
  /** `host:port` of the static proxy used, or `pool/country/session` of a gateway session (never credentials). */
  proxy?: string;
  /** The pool the try left through. */
  pool?: string;
  /** The exit as metrics label it: the static proxy where its pool lists at most 16, else `*` (a gateway's sessions come and go). */
  exitLabel?: string;
  /** Bytes the try moved through its exit (request and response, all of a page's subresources on the browser rung). */
  bytes?: number;
  /** What exactly went wrong, for operators. */
  detail?: string;
  /** How much of the page the parse understood, when a results or no-results page was parsed. */
  coverage?: Coverage;
}

/** A rung not tried because one of its breakers rests (or has its probe out). */
export interface SkipRecord extends Skip {
  profile: string;
}

/** Which exit served a search, for the job record (never credentials). */
export interface ExitRecord {
  pool: string;
  tier: number;
  /** The country the search asked for; the pool exits there unless `fallback`. */
  country: string;
  /** No pool lists the country: a pool without countries served it. */
  fallback?: true;
  /** CAPTCHAs solved for the search (the opt-in rung) and what they cost, USD. */
  captcha?: { solves: number; cost: number };
}

export class UpstreamFailure extends Error {
  readonly retryable: boolean;
  constructor(
    readonly kind: FailureKind,
    readonly tries: TryRecord[] = [],
    readonly skipped: SkipRecord[] = [],
    readonly exit?: ExitRecord,
    /** A full-page job whose full rungs all failed while a light rung answered: `layout: "any"` would have had a result. */
    readonly lightAnswered = false,
  ) {
    super(lightAnswered ? JOB_ERRORS.fullUnavailable(FAILURES[kind].text) : FAILURES[kind].text);
    this.name = "UpstreamFailure";
    this.retryable = FAILURES[kind].retryable;
  }

  /** How each rung ended, in words an operator can act on (the customer sees only `message`). */
  get rungs(): string {
    return rungSummary(this.tries, this.skipped);
  }

  /** The best coverage figure among the pages that were parsed, for the job record; none when no page was. */
  get coverage(): Coverage | undefined {
    return bestCoverage(this.tries);
  }
}

function bestCoverage(tries: readonly TryRecord[]): Coverage | undefined {
  let best: Coverage | undefined;
  for (const t of tries) if (t.coverage && (!best || t.coverage.ratio > best.ratio)) best = t.coverage;
  return best;
}

/** `desktop (http): refused, HTTP 403; wml-chrome: skipped, resting until 12:00:03Z after wall`. */
export function rungSummary(tries: readonly TryRecord[], skipped: readonly SkipRecord[]): string {
  const tried = tries.map((t) => {
    const via = t.proxy ? ` via ${t.proxy}` : "";
    const detail = t.detail ?? (t.status ? `HTTP ${t.status}` : "");
    return `${t.profile} (${t.transport}${via}): ${t.outcome}${detail ? `, ${detail}` : ""}`;
  });
  const rested = skipped.map((s) => {
    const until = s.restUntil ? `resting until ${new Date(s.restUntil).toISOString().slice(11, 19)}Z` : "its probe is out";
    return `${s.profile}: skipped, ${until}${s.lastOutcome ? ` after ${s.lastOutcome}` : ""} (${s.key})`;
  });
  return [...tried, ...rested].join("; ") || "no rung was tried";
}

export interface ScrapeOutcome<E extends Endpoint> {
  blocks: BlocksByEndpoint[E];
  /** The layout of the page the result came from (its profile's URL form: profiles.ts `layoutOf`). */
  layout: ServedLayout;
  upstreamUrl: string;
  pageClass: "results" | "no_results";
  tries: TryRecord[];
  skipped: SkipRecord[];
  /**
   * How much of the page that made the result the parse understood (at least its kind's threshold);
   * absent only for a no-results page its parser could not read.
   */
  coverage?: Coverage;
  /** The page the result was parsed from, as received (kept by the worker for re-parsing and `output=html`). */
  page: UpstreamPage;
  /** The exit that served the result; absent when requests go out directly. */
  exit?: ExitRecord;
}

/** An upstream response body and its declared type (HTML; JSON for autocomplete). */
export interface UpstreamPage {
  body: string;
  contentType?: string;
}

export type ParserTable = { [E in Endpoint]: (body: string) => BlocksByEndpoint[E] };

/** Replaceable parts, for tests and for callers that bring their own. */
export interface UpstreamDeps {
  parsers?: Partial<ParserTable>;
  /** Where exit health is kept: Redis for a fleet (@serp/store RedisExitHealth); default this process only. */
  exitHealth?: ExitHealth;
  /** Cooldowns of the in-process health (when `exitHealth` is not given). */
  exitHealthOptions?: Partial<ExitHealthOptions>;
  /** Told when sessions open and close (the worker's sessions gauge). */
  exitEvents?: RouterEvents;
  /**
   * The opt-in CAPTCHA rung (captcha.ts): a /sorry/ page met through a session is solved through that
   * same exit, its form posted, and the exemption cookie kept with the session. Unset: a block.
   */
  captcha?: CaptchaSolver;
  /** Told of each CAPTCHA met and each solve (the worker's metrics). */
  onCaptcha?: (event: { pool: string; result: "met" | "solved" | "failed" | "capped"; cost?: number }) => void;
  locations?: Locations;
  /** A fixed profile table instead of the shipped file or `profilesFile`. */
  profiles?: ProfileTable;
  /** Where the profile source reports a table taken or refused, and other news for operators. */
  log?: UpstreamLog;
  /** How often a `profilesFile` is checked for changes. Default 1000 ms. */
  profilesWatchIntervalMs?: number;
}

/** What an operator sees: the table in force and every breaker that has seen a try. */
export interface UpstreamStatus {
  tableVersion: string;
  breakers: BreakerStatus[];
}

/** The pools as configured (labels only, never URLs) and the sessions each holds now. */
export type ExitPools = ReturnType<ExitRouter["describe"]>;

export interface Upstream {
  scrape<E extends Endpoint>(endpoint: E, params: JobParams, signal?: AbortSignal): Promise<ScrapeOutcome<E>>;
  /**
   * One request with one named profile of the kind, past the breakers and without counting in
   * them: what the canary asks of every rung.
   */
  tryProfile(endpoint: Endpoint, params: JobParams, profile: string, signal?: AbortSignal): Promise<TryRecord>;
  /** The profile table in force now. */
  profiles(): ProfileTable;
  status(): UpstreamStatus;
  /** The proxy pools in force (labels only) and their open sessions. */
  exits(): ExitPools;
  /** The fleet's exit health, as the store holds it. */
  exitHealth: ExitHealth;
  locations: Locations;
  /** Pages parsed so far on the event loop and on the parse threads. */
  parses(): { inline: number; threads: number };
  /** The browser tier's pages in this process (its capacity even before a browser profile first runs). */
  browserPages(): BrowserPages;
  /** Closes kept-alive connections, stops watching the profile file and stops the parse threads. */
  close(): Promise<void>;
}

/** Built from the upstream's parsed settings (env.ts: `readUpstreamEnv`, or a process's schema that composes `upstreamEnv`). */
export function createUpstream(config: UpstreamConfig, deps: UpstreamDeps = {}): Upstream {
  const locations =
    deps.locations ?? (config.GEOTARGETS_DIR ? Locations.fromDirectory(config.GEOTARGETS_DIR) : Locations.empty());
  const tls = { ca: config.UPSTREAM_CA_FILE === undefined ? undefined : readCaFile(config.UPSTREAM_CA_FILE), insecure: config.UPSTREAM_TLS_INSECURE };
  const direct = new DirectAgents(tls);
  const impersonating = new ImpersonatingClients(config.UPSTREAM_TLS_INSECURE);
  const exitsConfig = exitsSource({ file: config.UPSTREAM_PROXIES_FILE, list: config.UPSTREAM_PROXIES, log: deps.log, watchIntervalMs: deps.profilesWatchIntervalMs });
  const source: ProfileSource = deps.profiles
    ? fixedProfileSource(deps.profiles)
    : profileSource({ file: config.UPSTREAM_PROFILES_FILE, log: deps.log, watchIntervalMs: deps.profilesWatchIntervalMs });
  const health = deps.exitHealth ?? new MemoryExitHealth(deps.exitHealthOptions);
  const router = new ExitRouter(exitsConfig.current(), health, deps.exitEvents, Date.now, (proxy) => impersonating.forget(proxy.url));
  exitsConfig.onChange((c) => router.configure(c));
  /** Launched (or connected) only when a browser profile is first used. */
  let browsers: BrowserPool | undefined;
  const breakers = new Breakers({ threshold: config.UPSTREAM_BREAKER_THRESHOLD, restMs: config.UPSTREAM_BREAKER_REST_MS, maxRestMs: config.UPSTREAM_BREAKER_MAX_REST_MS });
  const parsers: ParserTable = { ...PARSERS, ...deps.parsers } as ParserTable;
  const threads = config.PARSE_THREADS > 0 ? createParsePool(config.PARSE_THREADS) : undefined;
  /** Scrapes in progress in this process. */
  let scraping = 0;
  const parsed = { inline: 0, threads: 0 };
  /**
   * On a thread while other scrapes are in progress, so their responses are read while this page is
   * parsed; alone, here, where the hand-over to a thread and back would only add to the job's
   * latency (about 1.5 ms a live job, bench/live-latency.ts). A parser a caller brought runs here.
   * Either way the page's coverage figure comes back with its blocks.
   */
  const parse = <E extends Endpoint>(endpoint: E, body: string): Parsed<E> | Promise<Parsed<E>> => {
    if (threads && scraping > 1 && !deps.parsers?.[endpoint]) {
      parsed.threads++;
      return threads.parse(endpoint, body);
    }
    parsed.inline++;
    return parsePage(endpoint, body, parsers[endpoint] as ParserTable[E]);
  };
  const urlContext: UrlContext = { baseUrl: config.UPSTREAM_BASE_URL, uuleFor: (name) => locations.uuleFor(name) };
  const settings: FetchSettings = { timeoutMs: config.UPSTREAM_TIMEOUT_MS, maxBodyBytes: config.UPSTREAM_MAX_BODY_BYTES, tls };

  const clients: TransportClients = { settings, direct, impersonating, browsers: () => (browsers ??= new BrowserPool(browserOptionsOf(config), tls)) };

  /** One try: build, send, judge. */
  async function attempt<E extends Endpoint>(endpoint: E, params: JobParams, profile: Profile, lease: Lease | undefined, signal?: AbortSignal) {
    const url = buildUrl(endpoint, params, profile, urlContext);
    const proxy = lease?.session.proxy;
    const transport = TRANSPORTS[profile.transport];
    const fetched = await transport.send({ url, profile, params, headers: headersFor(profile, params), proxy, signal, jar: lease?.session.cookies }, clients);
    const judged = await judge(endpoint, fetched, (body) => parse(endpoint, body), proxy !== undefined);
    const record: TryRecord = {
      url,
      profile: profile.name,
      transport: transport.label(profile),
      outcome: judged.outcome,
      ms: fetched.ms,
      ...(fetched.ok ? { status: fetched.response.statusCode } : {}),
      ...(proxy ? { proxy: proxy.label, pool: lease!.pool, exitLabel: router.metricLabel(lease!) } : {}),
      ...(fetched.bytes !== undefined ? { bytes: fetched.bytes.up + fetched.bytes.down } : {}),
      // A transport's error text may quote a proxy URL: its credentials never reach a record or a log.
      ...(judged.detail ? { detail: judged.detail.replace(/\/\/[^/\s@]*@/g, "//") } : {}),
      ...(judged.coverage ? { coverage: judged.coverage } : {}),
    };
    const page: UpstreamPage | undefined = fetched.ok ? { body: fetched.response.body, contentType: headerText(fetched.response.headers["content-type"]) } : undefined;
    return { ...judged, record, url, outcome: outcomeOf(judged.outcome), page, fetched };
  }

  /** The upstream's absolute URL, on the base URL when one stands in for the real hosts. */
  const rebase = (url: string): string => {
    if (!config.UPSTREAM_BASE_URL) return url;
    const u = new URL(url);
    return `${config.UPSTREAM_BASE_URL}${u.pathname}${u.search}`;
  };

  /**
   * The CAPTCHA rung: the /sorry/ page (followed from its redirect) through the session's exit, its
   * site key and one-time data-s to the solver with that exit, the token posted back through it; the
   * exemption cookie the post earns is kept in the session's jar. True when the session holds one.
   */
  async function solveSorry(lease: Lease, fetched: FetchResult, signal: AbortSignal | undefined, spent: { solves: number; cost: number }): Promise<boolean> {
    const solver = deps.captcha;
    if (!solver || !fetched.ok) return false;
    deps.onCaptcha?.({ pool: lease.pool, result: "met" });
    const proxy = lease.session.proxy;
    try {
      let page = fetched.response;
      const location = headerText(page.headers.location);
      if (page.statusCode >= 300 && page.statusCode < 400 && location) {
        const followed = await fetchPage({ url: rebase(new URL(location, page.url).href), headers: withJar({ "accept-language": "en-US,en;q=0.9" }, lease.session.cookies), proxy, signal }, settings);
        if (!followed.ok) return false;
        page = followed.response;
      }
      const sorry = readSorryPage(page.body, page.url);
      if (!sorry) return false;
      const solved = await solver.solve({ siteKey: sorry.siteKey, dataS: sorry.dataS, pageUrl: page.url, proxyUrl: proxy.url }, signal);
      spent.solves++;
      spent.cost += solved.cost;
      deps.onCaptcha?.({ pool: lease.pool, result: "solved", cost: solved.cost });
      const post = exemptionRequest(sorry, solved.token);
      const answer = await postForm({ url: rebase(post.url), headers: withJar(post.headers, lease.session.cookies), body: post.body, proxy, signal }, settings);
      for (const [name, value] of answer.cookies) lease.session.cookies.set(name, value);
      return answer.cookies.has("GOOGLE_ABUSE_EXEMPTION");
    } catch (error) {
      if (signal?.aborted) throw error;
      const capped = error instanceof CaptchaError && error.failure === "capped";
      deps.onCaptcha?.({ pool: lease.pool, result: capped ? "capped" : "failed" });
      deps.log?.("warn", `captcha not solved: ${error instanceof CaptchaError ? error.message : (error as Error).name}`, { pool: lease.pool });
      return false;
    }
  }

  async function scrape<E extends Endpoint>(endpoint: E, params: JobParams, signal?: AbortSignal): Promise<ScrapeOutcome<E>> {
    scraping++;
    try {
      return await scrapeOnce(endpoint, params, signal);
    } finally {
      scraping--;
    }
  }

  async function scrapeOnce<E extends Endpoint>(endpoint: E, params: JobParams, signal?: AbortSignal): Promise<ScrapeOutcome<E>> {
    const rungs = rungsFor(source.current(), endpoint, params);
    const tries: TryRecord[] = [];
    const skipped: SkipRecord[] = [];
    /** Exits that failed this search: its next try leaves from another. */
    const avoid = new Set<string>();
    let lease: Lease | undefined;
    let served: ExitRecord | undefined;
    let index = 0;
    let exitSwitches = 0;
    /** The CAPTCHA rung's spend on this search: at most one solve per search. */
    const captcha = { solves: 0, cost: 0 };
    const withCaptcha = (e: ExitRecord | undefined): ExitRecord | undefined => (e && captcha.solves ? { ...e, captcha: { ...captcha } } : e);
    const nextExit = () => {
      if (lease) {
        avoid.add(lease.session.exit);
        router.release(lease);
        lease = undefined;
      }
    };
    try {
      while (index < rungs.length && tries.length < config.UPSTREAM_MAX_TRIES) {
        signal?.throwIfAborted();
        const { profile, sells } = rungs[index]!;
        // The rungs of one search stay on one session (its challenge and its results page), unless it failed.
        if (!lease) {
          const picked = await router.lease(params.country, avoid);
          if (picked !== undefined && !isLease(picked)) {
            throw new UpstreamFailure(mostTelling(tries) ?? restingKind(picked.resting), tries, skipped, served);
          }
          lease = picked;
          if (lease) served = exitRecord(lease);
        }
        const ran = await breakers.run(profile.name, lease && breakerKey(lease), () => attempt(endpoint, params, profile, lease, signal));
        if (isSkip(ran)) {
          skipped.push({ profile: profile.name, ...ran });
          // A rest of this profile through this exit only: another exit may carry it.
          const pairOnly = ran.key !== profile.name && lease !== undefined && exitSwitches < MAX_EXIT_SWITCHES;
          if (pairOnly) {
            exitSwitches++;
            nextExit();
          } else [index, exitSwitches] = [index + 1, 0];
          continue;
        }
        tries.push(ran.record);
        // A /sorry/ page with the solver on: solved through this session, then the same rung again through it.
        if (lease && ran.proxyFailure === "blocked" && deps.captcha && captcha.solves === 0 && (await solveSorry(lease, ran.fetched, signal, captcha))) continue;
        if (lease) await router.report(lease, exitEvent(ran.outcome, ran.proxyFailure), ran.proxyItself).catch((error: Error) => deps.log?.("warn", `exit health not recorded: ${error.message}`));
        // Only a page understood well enough has blocks: one below its kind's threshold goes on down the ladder.
        if (ran.blocks) {
          // A light page a full-page job may not take: it only tells the customer that `layout: "any"` would have answered.
          if (!sells) {
            throw new UpstreamFailure(tellingKind(tries, skipped), tries, skipped, withCaptcha(served), true);
          }
          const pageClass = ran.record.outcome as "results" | "no_results";
          return {
            blocks: ran.blocks, layout: layoutOf(profile), upstreamUrl: ran.url, pageClass, tries, skipped, ...(ran.coverage ? { coverage: ran.coverage } : {}), page: ran.page!,
            ...(served ? { exit: withCaptcha(served)! } : {}),
          };
        }
        // A block or a dead connection is about the exit: the same profile may pass through another.
        if (ran.proxyFailure && lease && exitSwitches < MAX_EXIT_SWITCHES) {
          exitSwitches++;
          nextExit();
        } else {
          if (ran.proxyFailure) nextExit();
          index++;
          exitSwitches = 0;
        }
      }
    } finally {
      if (lease) router.release(lease);
    }
    throw new UpstreamFailure(tellingKind(tries, skipped), tries, skipped, withCaptcha(served));
  }

  async function tryProfile(endpoint: Endpoint, params: JobParams, name: string, signal?: AbortSignal): Promise<TryRecord> {
    const profile = profilesFor(source.current(), endpoint, params).find((p) => p.name === name);
    if (!profile) throw new Error(`no profile ${name} for ${endpoint}`);
    const picked = await router.lease(params.country);
    const lease = isLease(picked) ? picked : undefined;
    try {
      return (await attempt(endpoint, params, profile, lease, signal)).record;
    } finally {
      if (lease) router.release(lease);
    }
  }

  const close = async () => {
    source.close();
    exitsConfig.close();
    router.shutdown();
    direct.close();
    impersonating.close();
    await browsers?.close();
    await threads?.close();
  };
  return {
    scrape,
    tryProfile,
    profiles: () => source.current(),
    status: () => ({ tableVersion: source.current().version, breakers: breakers.statuses() }),
    exits: () => router.describe(),
    exitHealth: health,
    locations,
    parses: () => ({ ...parsed }),
    browserPages: () => browsers?.pages() ?? { capacity: config.BROWSER_CONCURRENCY, inUse: 0, waiting: 0 },
    close,
  };
}

interface Attempt<E extends Endpoint> {
  outcome: TryOutcome;
  blocks?: BlocksByEndpoint[E];
  detail?: string;
  /** Set when the outcome says something about the proxy's address or connection. */
  proxyFailure?: ProxyFailure;
  /** The proxy itself refused: credentials (407) or its port closed, not the path beyond it. */
  proxyItself?: boolean;
  coverage?: Coverage;
}

async function judge<E extends Endpoint>(
  endpoint: E,
  fetched: FetchResult,
  parse: (body: string) => Parsed<E> | Promise<Parsed<E>>,
  proxied = false,
): Promise<Attempt<E>> {
  if (!fetched.ok) {
    const detail = `${fetched.failure}: ${fetched.detail}`;
    if (fetched.failure === "timeout") return { outcome: "timeout", detail, proxyFailure: "timeout" };
    // No answer at all (DNS, refused, reset, TLS): not the upstream's error page; the code is in `detail`.
    if (fetched.failure === "network") return { outcome: "network", detail, proxyFailure: "network", ...(proxied && /ECONNREFUSED|\b407\b/.test(detail) ? { proxyItself: true } : {}) };
    return { outcome: "upstream_error", detail, ...(fetched.failure !== "too_large" ? { proxyFailure: "network" } : {}) };
  }
  // The proxy's own refusals: credentials refused, or no way through to the upstream.
  const status = fetched.response.statusCode;
  if (proxied && (status === 407 || status === 502)) {
    return { outcome: "network", detail: `proxy answered HTTP ${status}`, proxyFailure: "network", ...(status === 407 ? { proxyItself: true } : {}) };
  }
  const page: PageClass = classify(fetched.response, endpoint);
  if (page !== "results" && page !== "no_results") {
    return { outcome: page, detail: `HTTP ${fetched.response.statusCode}`, ...(page === "blocked" ? { proxyFailure: "blocked" } : {}) };
  }
  let blocks: BlocksByEndpoint[E] | undefined;
  let coverage: Coverage | undefined;
  try {
    ({ blocks, coverage } = await parse(fetched.response.body));
  } catch (error) {
    blocks = page === "no_results" ? kindOf(endpoint).empty?.() : undefined;
    if (!blocks) return { outcome: "unparseable", detail: `parser failed: ${(error as Error).message}` };
  }
  const measured = coverage ? { coverage } : {};
  const found = blocks !== null && typeof blocks === "object" && kindOf(endpoint).hasContent(blocks);
  if (page === "results" && !found) return { outcome: "unparseable", detail: "parser found nothing on a results page", ...measured };
  // A results page understood only in part is no result: like a wall, the next rung is asked.
  if (page === "results" && coverage && !understood(endpoint, coverage)) {
    return { outcome: "partial", detail: partialDetail(endpoint, coverage), coverage };
  }
  return { outcome: found ? "results" : "no_results", blocks, ...measured };
}

/** `coverage 0.41 < 0.7: 12 of 29 result links in blocks (full layout)`, or the page was cut short. */
function partialDetail(endpoint: Endpoint, c: Coverage): string {
  if (c.cut) return `the page ends inside its results region (cut short; ${c.accounted} of ${c.links} result links before the cut in blocks, ${c.layout} layout)`;
  return `coverage ${c.ratio.toFixed(2)} < ${COVERAGE_THRESHOLDS[endpoint]}: ${c.accounted} of ${c.links} result links in blocks (${c.layout} layout)`;
}

/** An impersonating profile without its own agent sends the impersonated browser's. */
function headersFor(profile: Profile, params: JobParams): Record<string, string> {
  return {
    ...(profile.userAgent ? { "user-agent": profile.userAgent } : {}),
    "accept-language": acceptLanguage(params.language),
    ...(profile.cookie ? { cookie: profile.cookie } : {}),
    ...profile.headers,
  };
}

const headerText = (v: string | string[] | undefined): string | undefined => (Array.isArray(v) ? v[0] : v);

/** Exits a search may switch to after a block or a dead connection before it goes on down the ladder. */
const MAX_EXIT_SWITCHES = 3;

/** What a try says about its exit: a block, a proxy or network fault, a success; a wall or a parse failure says nothing. */
function exitEvent(outcome: Outcome, failure: ProxyFailure | undefined): ExitEvent | undefined {
  if (failure === "blocked") return "blocked";
  if (failure) return "proxy_error";
  return outcome === "results" || outcome === "no_results" ? "success" : undefined;
}

function exitRecord(lease: Lease): ExitRecord {
  return { pool: lease.pool, tier: lease.tier, country: lease.country, ...(lease.fallback ? { fallback: true as const } : {}) };
}

/** A breaker pairs a profile with a static exit, or with a whole gateway pool (its sessions come and go). */
function breakerKey(lease: Lease): string {
  return lease.session.exit === lease.session.proxy.label && !lease.session.exit.includes("/") ? lease.session.exit : lease.pool;
}

function mostTelling(tries: TryRecord[]): FailureKind | undefined {
  const seen = new Set(tries.map((t) => t.outcome));
  return TELLING.find((k) => seen.has(k));
}

/** The failure that speaks for a job whose every rung failed: its tries' most telling, else its skips'. */
function tellingKind(tries: TryRecord[], skipped: SkipRecord[]): FailureKind {
  const fromSkips = new Set(skipped.map((s) => s.lastOutcome && failureOfOutcome(s.lastOutcome)));
  return mostTelling(tries) ?? TELLING.find((k) => fromSkips.has(k)) ?? "upstream_error";
}

function restingKind(why: "blocked" | "proxy_error"): FailureKind {
  return why === "blocked" ? "blocked" : "network";
}
