/**
 * Upstream settings: what the worker passes to `createUpstream`, their defaults, and a reader for
 * the environment variables a deployment sets (validated once, failing loudly at boot).
 */

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
}

export const UPSTREAM_DEFAULTS = {
  timeoutMs: 10_000,
  maxTries: 6,
  maxBodyBytes: 8 * 1024 * 1024,
  parseThreads: 0,
} as const;

export type ResolvedUpstreamOptions = Required<Pick<UpstreamOptions, "proxies" | "timeoutMs" | "maxTries" | "maxBodyBytes" | "parseThreads">> &
  Pick<UpstreamOptions, "baseUrl" | "geotargetsDir">;

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
  };
  return out;
}

/**
 * Reads `UPSTREAM_BASE_URL`, `UPSTREAM_PROXIES` (comma or space separated), `UPSTREAM_TIMEOUT_MS`,
 * `UPSTREAM_MAX_TRIES`, `UPSTREAM_MAX_BODY_BYTES` and `GEOTARGETS_DIR`. Unset or empty means default.
 */
export function upstreamOptionsFromEnv(env: Record<string, string | undefined> = process.env): UpstreamOptions {
  const str = (name: string) => env[name]?.trim() || undefined;
  const int = (name: string) => {
    const v = str(name);
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v)) throw new Error(`${name} must be a whole number, got "${v}"`);
    return Number(v);
  };
  const proxies = str("UPSTREAM_PROXIES")?.split(/[\s,]+/).filter(Boolean);
  return resolveUpstreamOptions({
    baseUrl: str("UPSTREAM_BASE_URL"),
    proxies,
    timeoutMs: int("UPSTREAM_TIMEOUT_MS"),
    maxTries: int("UPSTREAM_MAX_TRIES"),
    maxBodyBytes: int("UPSTREAM_MAX_BODY_BYTES"),
    geotargetsDir: str("GEOTARGETS_DIR"),
  });
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
