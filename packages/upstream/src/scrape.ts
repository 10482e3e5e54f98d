/**
 * The pipeline a worker calls: for each try (the kind's profiles in order, each through the next
 * proxy in turn) build the URL, fetch, classify, and parse only results pages. The first page
 * that parses into something wins; when every try fails, an UpstreamFailure says why in the
 * customer's words (JOB_ERRORS) and whether trying the whole job later could help.
 */
import { JOB_ERRORS, type BlocksByEndpoint, type Endpoint, type JobParams } from "@serp/shared";
import { classify, type PageClass } from "./classify.js";
import { resolveUpstreamOptions, type UpstreamOptions } from "./config.js";
import { fetchPage, type FetchResult } from "./fetch.js";
import { Locations } from "./locations.js";
import { createParsePool } from "./parse-pool.js";
import { PARSERS } from "./parsers/index.js";
import { acceptLanguage, profilesFor, type Profile } from "./profiles.js";
import { isResting, ProxyPool, type Proxy, type ProxyFailure, type ProxyPoolOptions } from "./proxies.js";
import { buildUrl, type UrlContext } from "./urls.js";

export type { UpstreamOptions } from "./config.js";

export type FailureKind = "blocked" | "consent" | "js_wall" | "upstream_error" | "timeout" | "unparseable";
export type TryOutcome = "results" | "no_results" | FailureKind;

export interface TryRecord {
  url: string;
  profile: string;
  outcome: TryOutcome;
  ms: number;
  /** HTTP status, when a response arrived. */
  status?: number;
  /** `host:port` of the proxy used (never its credentials). */
  proxy?: string;
  /** What exactly went wrong, for operators. */
  detail?: string;
}

const FAILURE_TEXT: Record<FailureKind, string> = {
  blocked: JOB_ERRORS.blocked,
  timeout: JOB_ERRORS.upstreamTimeout,
  unparseable: JOB_ERRORS.unparseable,
  upstream_error: JOB_ERRORS.upstreamError,
  consent: JOB_ERRORS.consent,
  js_wall: JOB_ERRORS.jsWall,
};

/** Blocks, time-outs and upstream faults pass; a page we cannot read or a wall we cannot pass stays. */
const RETRYABLE: Record<FailureKind, boolean> = {
  blocked: true,
  timeout: true,
  upstream_error: true,
  unparseable: false,
  consent: false,
  js_wall: false,
};

/**
 * Which failure speaks for the job when every try failed: a block or time-out first (the page was
 * never seen and a later try may pass), then a results page we could not read, then the rest.
 */
const TELLING: readonly FailureKind[] = ["blocked", "timeout", "unparseable", "upstream_error", "consent", "js_wall"];

export class UpstreamFailure extends Error {
  readonly retryable: boolean;
  constructor(
    readonly kind: FailureKind,
    readonly tries: TryRecord[] = [],
  ) {
    super(FAILURE_TEXT[kind]);
    this.name = "UpstreamFailure";
    this.retryable = RETRYABLE[kind];
  }
}

export interface ScrapeOutcome<E extends Endpoint> {
  blocks: BlocksByEndpoint[E];
  upstreamUrl: string;
  pageClass: "results" | "no_results";
  tries: TryRecord[];
}

export type ParserTable = { [E in Endpoint]: (body: string) => BlocksByEndpoint[E] };

/** Replaceable parts, for tests and for callers that bring their own. */
export interface UpstreamDeps {
  parsers?: Partial<ParserTable>;
  proxyPool?: ProxyPoolOptions;
  locations?: Locations;
}

export interface Upstream {
  scrape<E extends Endpoint>(endpoint: E, params: JobParams, signal?: AbortSignal): Promise<ScrapeOutcome<E>>;
  locations: Locations;
  /** Pages parsed so far on the event loop and on the parse threads. */
  parses(): { inline: number; threads: number };
  /** Closes the proxies' kept-alive connections and stops the parse threads. */
  close(): Promise<void>;
}

export function createUpstream(opts: UpstreamOptions = {}, deps: UpstreamDeps = {}): Upstream {
  const config = resolveUpstreamOptions(opts);
  const locations =
    deps.locations ?? (config.geotargetsDir ? Locations.fromDirectory(config.geotargetsDir) : Locations.empty());
  const pool = new ProxyPool(config.proxies, deps.proxyPool);
  const parsers: ParserTable = { ...PARSERS, ...deps.parsers } as ParserTable;
  const threads = config.parseThreads > 0 ? createParsePool(config.parseThreads) : undefined;
  /** Scrapes in progress in this process. */
  let scraping = 0;
  const parsed = { inline: 0, threads: 0 };
  /**
   * On a thread while other scrapes are in progress, so their responses are read while this page is
   * parsed; alone, here, where the hand-over to a thread and back would only add to the job's
   * latency (about 1.5 ms a live job, bench/live-latency.ts). A parser a caller brought runs here.
   */
  const parse = <E extends Endpoint>(endpoint: E, body: string): BlocksByEndpoint[E] | Promise<BlocksByEndpoint[E]> => {
    if (threads && scraping > 1 && !deps.parsers?.[endpoint]) {
      parsed.threads++;
      return threads.parse(endpoint, body);
    }
    parsed.inline++;
    return (parsers[endpoint] as ParserTable[E])(body);
  };
  const urlContext: UrlContext = { baseUrl: config.baseUrl, uuleFor: (name) => locations.uuleFor(name) };
  const settings = { timeoutMs: config.timeoutMs, maxBodyBytes: config.maxBodyBytes };

  async function scrape<E extends Endpoint>(endpoint: E, params: JobParams, signal?: AbortSignal): Promise<ScrapeOutcome<E>> {
    scraping++;
    try {
      return await scrapeOnce(endpoint, params, signal);
    } finally {
      scraping--;
    }
  }

  async function scrapeOnce<E extends Endpoint>(endpoint: E, params: JobParams, signal?: AbortSignal): Promise<ScrapeOutcome<E>> {
    const profiles = profilesFor(endpoint, params);
    const tries: TryRecord[] = [];
    let index = 0;
    let sameProfileRetries = 0;
    while (index < profiles.length && tries.length < config.maxTries) {
      signal?.throwIfAborted();
      const profile = profiles[index]!;
      const proxy = pool.next();
      if (isResting(proxy)) throw new UpstreamFailure(mostTelling(tries) ?? restingKind(proxy.resting), tries);
      const url = buildUrl(endpoint, params, profile, urlContext);
      const fetched = await fetchPage({ url, headers: headersFor(profile, params), proxy, signal }, settings);
      const attempt = await judge(endpoint, fetched, (body) => parse(endpoint, body));
      tries.push({
        url,
        profile: profile.name,
        outcome: attempt.outcome,
        ms: fetched.ms,
        ...(fetched.ok ? { status: fetched.response.statusCode } : {}),
        ...(proxy ? { proxy: proxy.label } : {}),
        ...(attempt.detail ? { detail: attempt.detail } : {}),
      });
      if (proxy) report(pool, proxy, attempt.proxyFailure);
      if (attempt.blocks) {
        return { blocks: attempt.blocks, upstreamUrl: url, pageClass: attempt.outcome as "results" | "no_results", tries };
      }
      // A block or a dead connection is about the address: the same profile may pass through another proxy.
      if (attempt.proxyFailure && pool.available() > 0 && sameProfileRetries < pool.size - 1) {
        sameProfileRetries++;
      } else {
        index++;
        sameProfileRetries = 0;
      }
    }
    throw new UpstreamFailure(mostTelling(tries) ?? "upstream_error", tries);
  }

  const close = async () => {
    pool.close();
    await threads?.close();
  };
  return { scrape, locations, parses: () => ({ ...parsed }), close };
}

interface Attempt<E extends Endpoint> {
  outcome: TryOutcome;
  blocks?: BlocksByEndpoint[E];
  detail?: string;
  /** Set when the outcome says something about the proxy's address or connection. */
  proxyFailure?: ProxyFailure;
}

async function judge<E extends Endpoint>(
  endpoint: E,
  fetched: FetchResult,
  parse: (body: string) => BlocksByEndpoint[E] | Promise<BlocksByEndpoint[E]>,
): Promise<Attempt<E>> {
  if (!fetched.ok) {
    const detail = `${fetched.failure}: ${fetched.detail}`;
    if (fetched.failure === "timeout") return { outcome: "timeout", detail, proxyFailure: "timeout" };
    return { outcome: "upstream_error", detail, ...(fetched.failure !== "too_large" ? { proxyFailure: "network" } : {}) };
  }
  const page: PageClass = classify(fetched.response, endpoint);
  if (page !== "results" && page !== "no_results") {
    return { outcome: page, detail: `HTTP ${fetched.response.statusCode}`, ...(page === "blocked" ? { proxyFailure: "blocked" } : {}) };
  }
  let blocks: BlocksByEndpoint[E] | undefined;
  try {
    blocks = await parse(fetched.response.body);
  } catch (error) {
    blocks = page === "no_results" ? (EMPTY[endpoint]?.() as BlocksByEndpoint[E] | undefined) : undefined;
    if (!blocks) return { outcome: "unparseable", detail: `parser failed: ${(error as Error).message}` };
  }
  const found = hasContent(endpoint, blocks);
  if (page === "results" && !found) return { outcome: "unparseable", detail: "parser found nothing on a results page" };
  return { outcome: found ? "results" : "no_results", blocks };
}

const filled = (v: unknown): boolean =>
  Array.isArray(v) ? v.length > 0 : v !== null && typeof v === "object" ? Object.values(v).some(filled) : Boolean(v);

const HAS_CONTENT: { [E in Endpoint]: (b: BlocksByEndpoint[E]) => boolean } = {
  "web-search": (b) => Object.entries(b).some(([key, v]) => key !== "search_information" && filled(v)),
  "web-news": (b) => filled(b.news_results),
  "web-local": (b) => filled(b.local_results),
  "web-images": (b) => filled(b.images_results),
  "web-shopping-search": (b) => filled(b.shopping_results),
  "web-shopping-product": (b) => filled(b.sellers),
  "web-shopping-product-info": (b) => Boolean(b.product_results?.title),
  "web-autocomplete": (b) => filled(b.suggestions),
};

function hasContent<E extends Endpoint>(endpoint: E, blocks: BlocksByEndpoint[E]): boolean {
  return blocks !== null && typeof blocks === "object" && (HAS_CONTENT[endpoint] as (b: BlocksByEndpoint[E]) => boolean)(blocks);
}

/** What a page that says "nothing matched" holds when its parser cannot read it. Product details have no such page. */
const EMPTY: Partial<{ [E in Endpoint]: () => BlocksByEndpoint[E] }> = {
  "web-search": () => ({ organic_results: [] }),
  "web-news": () => ({ news_results: [] }),
  "web-local": () => ({ local_results: [] }),
  "web-images": () => ({ images_results: [] }),
  "web-shopping-search": () => ({ shopping_results: [] }),
  "web-shopping-product": () => ({ sellers: [] }),
  "web-autocomplete": () => ({ suggestions: [] }),
};

function headersFor(profile: Profile, params: JobParams): Record<string, string> {
  return {
    "user-agent": profile.userAgent,
    "accept-language": acceptLanguage(params.language),
    cookie: profile.cookie,
    ...profile.headers,
  };
}

function report(pool: ProxyPool, proxy: Proxy, failure: ProxyFailure | undefined): void {
  if (failure) pool.failed(proxy, failure);
  else pool.succeeded(proxy);
}

function mostTelling(tries: TryRecord[]): FailureKind | undefined {
  const seen = new Set(tries.map((t) => t.outcome));
  return TELLING.find((k) => seen.has(k));
}

function restingKind(why: ProxyFailure): FailureKind {
  return why === "network" ? "upstream_error" : why;
}
