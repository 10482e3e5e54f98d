/**
 * Upstream settings: what the worker passes to `createUpstream`, their defaults, and a reader for
 * the environment variables a deployment sets (validated once, failing loudly at boot).
 */
import { readFileSync } from "node:fs";
import type { BrowserOptions } from "./browser.js";

export interface UpstreamOptions {
  /** Every upstream request goes here instead of the real hosts, path and query kept. */
  baseUrl?: string;
  /** http(s) proxy URLs, rotated round-robin. None: requests go out directly. */
  proxies?: string[];
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
  timeoutMs: 10_000,
  maxTries: 6,
  maxBodyBytes: 8 * 1024 * 1024,
  parseThreads: 0,
  tlsInsecure: false,
  breakerThreshold: 3,
  breakerRestMs: 30_000,
  breakerMaxRestMs: 30 * 60_000,
} as const;

export type ResolvedUpstreamOptions = Required<
  Pick<
    UpstreamOptions,
    "proxies" | "timeoutMs" | "maxTries" | "maxBodyBytes" | "parseThreads" | "tlsInsecure" | "breakerThreshold" | "breakerRestMs" | "breakerMaxRestMs"
  >
> &
  Pick<UpstreamOptions, "baseUrl" | "geotargetsDir" | "profilesFile" | "ca" | "browser">;

/** Defaults filled and values checked; throws with the offending setting's name. */
export function resolveUpstreamOptions(opts: UpstreamOptions): ResolvedUpstreamOptions {
  const out: ResolvedUpstreamOptions = {
    baseUrl: opts.baseUrl === undefined ? undefined : httpUrl("baseUrl", opts.baseUrl).replace(/\/+$/, ""),
    proxies: (opts.proxies ?? []).map((p, i) => httpUrl(`proxies[${i}]`, p)),
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
  if (out.breakerMaxRestMs < out.breakerRestMs) throw new Error("breakerMaxRestMs must be at least breakerRestMs");
  return out;
}

/**
 * Reads `UPSTREAM_BASE_URL`, `UPSTREAM_PROXIES` (comma or space separated), `UPSTREAM_TIMEOUT_MS`,
 * `UPSTREAM_MAX_TRIES`, `UPSTREAM_MAX_BODY_BYTES`, `GEOTARGETS_DIR`, `UPSTREAM_PROFILES_FILE`,
 * `UPSTREAM_CA_FILE` (read here, so a missing file fails at boot), `UPSTREAM_TLS_INSECURE` and
 * `UPSTREAM_BREAKER_THRESHOLD` / `_REST_MS` / `_MAX_REST_MS`, and the browser transport's `BROWSER_*`
 * (browser.ts). Unset or empty means default.
 */
export function upstreamOptionsFromEnv(env: Record<string, string | undefined> = process.env): UpstreamOptions {
  const str = (name: string) => env[name]?.trim() || undefined;
  const int = (name: string) => {
    const v = str(name);
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v)) throw new Error(`${name} must be a whole number, got "${v}"`);
    return Number(v);
  };
  const bool = (name: string) => {
    const v = str(name)?.toLowerCase();
    if (v === undefined) return undefined;
    if (v === "true" || v === "1") return true;
    if (v === "false" || v === "0") return false;
    throw new Error(`${name} must be true or false, got "${v}"`);
  };
  const proxies = str("UPSTREAM_PROXIES")?.split(/[\s,]+/).filter(Boolean);
  const caFile = str("UPSTREAM_CA_FILE");
  return resolveUpstreamOptions({
    baseUrl: str("UPSTREAM_BASE_URL"),
    proxies,
    timeoutMs: int("UPSTREAM_TIMEOUT_MS"),
    maxTries: int("UPSTREAM_MAX_TRIES"),
    maxBodyBytes: int("UPSTREAM_MAX_BODY_BYTES"),
    geotargetsDir: str("GEOTARGETS_DIR"),
    profilesFile: str("UPSTREAM_PROFILES_FILE"),
    ca: caFile === undefined ? undefined : readPem("UPSTREAM_CA_FILE", caFile),
    tlsInsecure: bool("UPSTREAM_TLS_INSECURE"),
    breakerThreshold: int("UPSTREAM_BREAKER_THRESHOLD"),
    breakerRestMs: int("UPSTREAM_BREAKER_REST_MS"),
    breakerMaxRestMs: int("UPSTREAM_BREAKER_MAX_REST_MS"),
    browser: defined({
      executablePath: str("BROWSER_EXECUTABLE_PATH"),
      cdpUrl: str("BROWSER_CDP_URL"),
      wsEndpoint: str("BROWSER_WS_ENDPOINT"),
      headless: bool("BROWSER_HEADLESS"),
      concurrency: int("BROWSER_CONCURRENCY"),
      recyclePages: int("BROWSER_RECYCLE_PAGES"),
      maxRssMb: int("BROWSER_MAX_RSS_MB"),
      cookieTtlMs: int("BROWSER_COOKIE_TTL_MS"),
    }),
  });
}

/** The object without its unset fields; undefined when none is set. */
function defined<T extends object>(o: T): Partial<T> | undefined {
  const set = Object.entries(o).filter(([, v]) => v !== undefined);
  return set.length ? (Object.fromEntries(set) as Partial<T>) : undefined;
}

function readPem(name: string, file: string): string {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new Error(`${name}: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  if (!text.includes("-----BEGIN CERTIFICATE-----")) throw new Error(`${name}: ${file} holds no PEM certificate`);
  return text;
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
