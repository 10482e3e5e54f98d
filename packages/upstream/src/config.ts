/**
 * Upstream settings: what the worker passes to `createUpstream`, and their defaults (the only ones:
 * env.ts reads the environment variables and leaves what is unset to these).
 */
import { BREAKER_DEFAULTS } from "./breakers.js";
import type { BrowserOptions } from "./browser.js";
import { poolsOfList } from "./exits/config.js";

export interface UpstreamOptions {
  /** Every upstream request goes here instead of the real hosts, path and query kept. */
  baseUrl?: string;
  /** Proxy URLs (http, https, socks5): one tier-1 pool without countries. None, and no `proxiesFile`: requests go out directly. */
  proxies?: string[];
  /** The proxy pools file (exits/config.ts); watched and re-read when it changes. Takes the place of `proxies`. */
  proxiesFile?: string;
  /** Per-request time limit. */
  timeoutMs?: number;
  /** Folder of geotargets CSV files; enables location checks and the look-up. */
  geotargetsDir?: string;
  /** Most requests one job may make across profiles and proxies. */
  maxTries?: number;
  /** Largest body read, after decompression. */
  maxBodyBytes?: number;
  /**
   * Threads that parse pages (see parse-pool.ts); 0 parses on the caller's event loop. A worker
   * running many jobs at once wants at least one, so that parsing never holds up its I/O.
   */
  parseThreads?: number;
  /** A profile table file to use instead of the shipped one; watched and re-read when it changes. */
  profilesFile?: string;
  /** A private CA (PEM text) to trust for an https:// base URL. */
  ca?: string;
  /** Turn certificate checks off for upstream requests only (a transport that cannot take `ca`). */
  tlsInsecure?: boolean;
  /** Failures in a row that set a profile aside, and its first and longest rest. */
  breakerThreshold?: number;
  breakerRestMs?: number;
  breakerMaxRestMs?: number;
  /** The browser transport: where the browser is and how the pool behaves (browser.ts). */
  browser?: BrowserOptions;
}

export const UPSTREAM_DEFAULTS = {
  /** What a deployed worker has always run with (UPSTREAM_TIMEOUT_MS). */
  timeoutMs: 15_000,
  maxTries: 6,
  maxBodyBytes: 8 * 1024 * 1024,
  parseThreads: 0,
  tlsInsecure: false,
  breakerThreshold: BREAKER_DEFAULTS.threshold,
  breakerRestMs: BREAKER_DEFAULTS.restMs,
  breakerMaxRestMs: BREAKER_DEFAULTS.maxRestMs,
} as const;

export type ResolvedUpstreamOptions = Required<
  Pick<
    UpstreamOptions,
    "proxies" | "timeoutMs" | "maxTries" | "maxBodyBytes" | "parseThreads" | "tlsInsecure" | "breakerThreshold" | "breakerRestMs" | "breakerMaxRestMs"
  >
> &
  Pick<UpstreamOptions, "baseUrl" | "geotargetsDir" | "profilesFile" | "proxiesFile" | "ca" | "browser">;

/** Defaults filled and values checked; throws with the offending setting's name. */
export function resolveUpstreamOptions(opts: UpstreamOptions): ResolvedUpstreamOptions {
  const out: ResolvedUpstreamOptions = {
    baseUrl: opts.baseUrl === undefined ? undefined : httpUrl("baseUrl", opts.baseUrl).replace(/\/+$/, ""),
    proxies: [...(opts.proxies ?? [])],
    proxiesFile: opts.proxiesFile || undefined,
    timeoutMs: positiveInt("timeoutMs", opts.timeoutMs ?? UPSTREAM_DEFAULTS.timeoutMs),
    maxTries: positiveInt("maxTries", opts.maxTries ?? UPSTREAM_DEFAULTS.maxTries),
    maxBodyBytes: positiveInt("maxBodyBytes", opts.maxBodyBytes ?? UPSTREAM_DEFAULTS.maxBodyBytes),
    parseThreads: wholeNumber("parseThreads", opts.parseThreads ?? UPSTREAM_DEFAULTS.parseThreads),
    geotargetsDir: opts.geotargetsDir || undefined,
    profilesFile: opts.profilesFile || undefined,
    ca: opts.ca || undefined,
    tlsInsecure: opts.tlsInsecure ?? UPSTREAM_DEFAULTS.tlsInsecure,
    breakerThreshold: positiveInt("breakerThreshold", opts.breakerThreshold ?? UPSTREAM_DEFAULTS.breakerThreshold),
    breakerRestMs: positiveInt("breakerRestMs", opts.breakerRestMs ?? UPSTREAM_DEFAULTS.breakerRestMs),
    breakerMaxRestMs: positiveInt("breakerMaxRestMs", opts.breakerMaxRestMs ?? UPSTREAM_DEFAULTS.breakerMaxRestMs),
    browser: opts.browser,
  };
  if (opts.browser?.cdpUrl && opts.browser.wsEndpoint) throw new Error("give BROWSER_CDP_URL or BROWSER_WS_ENDPOINT, not both");
  for (const [name, value] of Object.entries({ cdpUrl: opts.browser?.cdpUrl, wsEndpoint: opts.browser?.wsEndpoint })) {
    if (value !== undefined && !/^(wss?|https?):\/\//.test(value)) throw new Error(`browser.${name} must be a ws(s):// or http(s):// URL`);
  }
  // Checked here so that a bad list is a setting's error (no URL echoed: it may hold a password).
  poolsOfList(out.proxies);
  if (out.proxiesFile && out.proxies.length) throw new Error("give UPSTREAM_PROXIES_FILE or UPSTREAM_PROXIES, not both");
  if (out.breakerMaxRestMs < out.breakerRestMs) throw new Error("breakerMaxRestMs must be at least breakerRestMs");
  return out;
}

function httpUrl(name: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`${name} must be an http(s) URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`${name} must be an http(s) URL`);
  return value;
}

function wholeNumber(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0 || value > 64) throw new Error(`${name} must be a whole number from 0 to 64`);
  return value;
}

function positiveInt(name: string, value: number): number {
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number`);
  return value;
}
