/**
 * The upstream's settings, as Zod env fragments: each variable's rule and default is written here
 * only. The worker composes `upstreamEnv` into its schema, the API `locationsEnv`, and the CLI's
 * canary reads `upstreamEnv` alone (`readUpstreamEnv`). `createUpstream` takes what the fragment
 * parses (`UpstreamConfig`); programmatic callers build one with `readUpstreamEnv({ NAME: value })`.
 * Unset or empty means default.
 */
import { z } from "zod";
import { loadConfig } from "@serp/shared";
import { BREAKER_DEFAULTS } from "./breakers.js";
import { BROWSER_DEFAULTS, type BrowserOptions } from "./browser.js";
import { CAPTCHA_DEFAULTS, type CaptchaSolverOptions } from "./captcha.js";
import { ConfigFileError, readConfigFile } from "./config-file.js";
import { EXIT_HEALTH_DEFAULTS, type ExitHealthOptions } from "./exits/health.js";
import { ExitsConfigError, poolsOfList } from "./exits/config.js";

/**
 * `NAME=` in a .env file is unset, as an operator expects; values are trimmed. A programmatic
 * caller's number or boolean is read as its text, as the environment would give it.
 */
const setting = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (typeof v === "string" ? v.trim() || undefined : typeof v === "number" || typeof v === "boolean" ? String(v) : v), schema);
const text = setting(z.string().optional());
const whole = (min: number, fallback: number, max = Number.MAX_SAFE_INTEGER) => setting(z.coerce.number().int().min(min).max(max).default(fallback));
const flag = (fallback: boolean) => setting(z.stringbool().default(fallback));
const httpUrl = setting(z.string().url("must be an http(s) URL").regex(/^https?:\/\//i, "must be an http(s) URL").optional());

/** The location list: the API refuses unknown locations with it, the workers check and look up with it. */
export const locationsEnv = z.object({
  /** Folder of geotargets CSV files. */
  GEOTARGETS_DIR: text,
});

/** How the upstream is reached: hosts, proxies, limits, profile table, TLS, breakers and the browser transport (browser.ts). */
export const upstreamEnv = z.object({
  ...locationsEnv.shape,
  /** Every upstream request goes here instead of the real hosts, path and query kept (the replay upstream). */
  UPSTREAM_BASE_URL: httpUrl.transform((u) => u?.replace(/\/+$/, "")),
  /** Proxy URLs (http, https, socks5), comma or space separated: one tier-1 pool without countries. */
  UPSTREAM_PROXIES: setting(
    z
      .union([z.string().transform((s) => s.split(/[\s,]+/).filter(Boolean)), z.array(z.string())])
      .default([])
      // Checked here so that a bad list is a setting's error (no URL echoed: it may hold a password).
      .superRefine((urls, ctx) => {
        try {
          poolsOfList(urls);
        } catch (error) {
          if (!(error instanceof ExitsConfigError)) throw error;
          for (const message of error.problems) ctx.addIssue({ code: "custom", message });
        }
      }),
  ),
  /** The proxy pools file (tiers, countries, gateways, sessions): docs/proxies.md. Read at start (a bad one stops the worker) and re-read when it changes. */
  UPSTREAM_PROXIES_FILE: text,
  /** First cooldown of an exit after a block (doubles per block in a row), of one after a proxy error, and the longest. */
  EXIT_BLOCK_COOLDOWN_MS: whole(1, EXIT_HEALTH_DEFAULTS.blockCooldownMs),
  EXIT_ERROR_COOLDOWN_MS: whole(1, EXIT_HEALTH_DEFAULTS.errorCooldownMs),
  EXIT_MAX_COOLDOWN_MS: whole(1, EXIT_HEALTH_DEFAULTS.maxCooldownMs),
  /** Per-request time limit: what a deployed worker has always run with. */
  UPSTREAM_TIMEOUT_MS: whole(100, 15_000),
  /** Most requests one job may make across profiles and proxies. */
  UPSTREAM_MAX_TRIES: whole(1, 6),
  /** Largest body read, after decompression. */
  UPSTREAM_MAX_BODY_BYTES: whole(1, 8 * 1024 * 1024),
  /**
   * Threads parsing pages beside the event loop (parse-pool.ts), so parsing never delays I/O; 0 parses
   * on the event loop. A worker running many jobs at once wants at least one.
   */
  PARSE_THREADS: whole(0, 1, 64),
  /** A profile table file to use instead of the shipped one; watched and re-read when it changes. */
  UPSTREAM_PROFILES_FILE: text,
  /** A PEM file (at most 1 MiB, a regular file) to trust for an https:// base URL, read when the upstream is built so that a missing one fails at boot. */
  UPSTREAM_CA_FILE: text,
  /** Turn certificate checks off for upstream requests only (a transport that cannot take a CA). */
  UPSTREAM_TLS_INSECURE: flag(false),
  /** Failures in a row that set a profile aside, and its first and longest rest. */
  UPSTREAM_BREAKER_THRESHOLD: whole(1, BREAKER_DEFAULTS.threshold),
  UPSTREAM_BREAKER_REST_MS: whole(1, BREAKER_DEFAULTS.restMs),
  UPSTREAM_BREAKER_MAX_REST_MS: whole(1, BREAKER_DEFAULTS.maxRestMs),
  /** The product the canary asks the product kinds about (one the upstream knows). */
  CANARY_PRODUCT_ID: setting(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).optional()),
  BROWSER_EXECUTABLE_PATH: setting(z.string().default(BROWSER_DEFAULTS.executablePath)),
  /** A remote browser over CDP, or a remote Playwright server: nothing is launched. */
  BROWSER_CDP_URL: setting(z.string().regex(/^(wss?|https?):\/\//, "must be a ws(s):// or http(s):// URL").optional()),
  BROWSER_WS_ENDPOINT: setting(z.string().regex(/^(wss?|https?):\/\//, "must be a ws(s):// or http(s):// URL").optional()),
  BROWSER_HEADLESS: flag(BROWSER_DEFAULTS.headless),
  BROWSER_CONCURRENCY: whole(1, BROWSER_DEFAULTS.concurrency),
  BROWSER_RECYCLE_PAGES: whole(1, BROWSER_DEFAULTS.recyclePages),
  BROWSER_MAX_RSS_MB: whole(1, BROWSER_DEFAULTS.maxRssMb),
  BROWSER_COOKIE_TTL_MS: whole(0, BROWSER_DEFAULTS.cookieTtlMs),
  BROWSER_RENDER_ALWAYS: flag(BROWSER_DEFAULTS.renderAlways),
  /**
   * The opt-in CAPTCHA rung (see captcha.ts): a createTask/getTaskResult solver API and its account
   * key. Off unless both are set; one without the other is refused.
   */
  CAPTCHA_SOLVER_URL: setting(z.string().url().optional()),
  CAPTCHA_SOLVER_KEY: text,
  /** One solve's limit, createTask to token. */
  CAPTCHA_JOB_TIMEOUT_MS: whole(1000, CAPTCHA_DEFAULTS.jobTimeoutMs, 600_000),
  /** Solves started per clock hour across the fleet (counted in Redis). */
  CAPTCHA_MAX_PER_HOUR: whole(1, CAPTCHA_DEFAULTS.maxPerHour, 1_000_000),
});
export type UpstreamEnv = z.infer<typeof upstreamEnv>;
/** What `createUpstream` takes: the parsed fragment, alone or within a process's schema. */
export type UpstreamConfig = Readonly<UpstreamEnv>;

/** What upstreamEnv's fields cannot say one by one; each schema that composes it refines with it (`schema.superRefine(checkUpstreamEnv)`). */
export function checkUpstreamEnv(env: UpstreamEnv, ctx: z.RefinementCtx): void {
  const problem = (path: keyof UpstreamEnv, message: string) => ctx.addIssue({ code: "custom", path: [path], message });
  if (env.UPSTREAM_PROXIES_FILE && env.UPSTREAM_PROXIES.length) problem("UPSTREAM_PROXIES_FILE", "give UPSTREAM_PROXIES_FILE or UPSTREAM_PROXIES, not both");
  if (env.BROWSER_CDP_URL && env.BROWSER_WS_ENDPOINT) problem("BROWSER_CDP_URL", "give BROWSER_CDP_URL or BROWSER_WS_ENDPOINT, not both");
  if (env.UPSTREAM_BREAKER_MAX_REST_MS < env.UPSTREAM_BREAKER_REST_MS) problem("UPSTREAM_BREAKER_MAX_REST_MS", "must be at least UPSTREAM_BREAKER_REST_MS");
  if (env.EXIT_MAX_COOLDOWN_MS < Math.max(env.EXIT_BLOCK_COOLDOWN_MS, env.EXIT_ERROR_COOLDOWN_MS)) {
    problem("EXIT_MAX_COOLDOWN_MS", "EXIT_MAX_COOLDOWN_MS must be at least EXIT_BLOCK_COOLDOWN_MS and EXIT_ERROR_COOLDOWN_MS");
  }
  if ((env.CAPTCHA_SOLVER_URL === undefined) !== (env.CAPTCHA_SOLVER_KEY === undefined)) {
    problem(env.CAPTCHA_SOLVER_URL === undefined ? "CAPTCHA_SOLVER_URL" : "CAPTCHA_SOLVER_KEY", "CAPTCHA_SOLVER_URL and CAPTCHA_SOLVER_KEY turn the CAPTCHA rung on together: set both or neither");
  }
}

const upstreamSchema = upstreamEnv.superRefine(checkUpstreamEnv);

/**
 * The upstream's settings alone (the CLI's canary, and programmatic callers such as tests, which may
 * give numbers, booleans and lists as they are); throws ConfigError naming each refused one.
 */
export function readUpstreamEnv(source: Record<string, unknown> = process.env): UpstreamConfig {
  return loadConfig(upstreamSchema, "upstream", source);
}

/** The browser pool's options from the settings. */
export function browserOptionsOf(env: UpstreamConfig): BrowserOptions {
  return {
    executablePath: env.BROWSER_EXECUTABLE_PATH,
    cdpUrl: env.BROWSER_CDP_URL,
    wsEndpoint: env.BROWSER_WS_ENDPOINT,
    headless: env.BROWSER_HEADLESS,
    concurrency: env.BROWSER_CONCURRENCY,
    recyclePages: env.BROWSER_RECYCLE_PAGES,
    maxRssMb: env.BROWSER_MAX_RSS_MB,
    cookieTtlMs: env.BROWSER_COOKIE_TTL_MS,
    renderAlways: env.BROWSER_RENDER_ALWAYS,
  };
}

/** The exits' cooldowns from the settings. */
export function exitHealthOptionsOf(env: UpstreamConfig): ExitHealthOptions {
  return { ...EXIT_HEALTH_DEFAULTS, blockCooldownMs: env.EXIT_BLOCK_COOLDOWN_MS, errorCooldownMs: env.EXIT_ERROR_COOLDOWN_MS, maxCooldownMs: env.EXIT_MAX_COOLDOWN_MS };
}

/** The CAPTCHA solver's options, or undefined when the rung is off (neither CAPTCHA_SOLVER_URL nor CAPTCHA_SOLVER_KEY set). */
export function captchaOptionsOf(env: UpstreamConfig): CaptchaSolverOptions | undefined {
  const { CAPTCHA_SOLVER_URL: url, CAPTCHA_SOLVER_KEY: key } = env;
  if (url === undefined || key === undefined) return undefined;
  return { url, key, jobTimeoutMs: env.CAPTCHA_JOB_TIMEOUT_MS, maxPerHour: env.CAPTCHA_MAX_PER_HOUR };
}

/** A CA bundle is a few kilobytes; a whole system store about 200 KB. */
const PEM_FILE_MAX_BYTES = 1 << 20;

/** UPSTREAM_CA_FILE's certificates; throws ConfigFileError (one line naming the setting and the file) when it cannot be used. */
export function readCaFile(file: string): string {
  const text = readConfigFile(file, { setting: "UPSTREAM_CA_FILE", maxBytes: PEM_FILE_MAX_BYTES });
  if (!text.includes("-----BEGIN CERTIFICATE-----")) throw new ConfigFileError(`UPSTREAM_CA_FILE: ${file}: holds no PEM certificate`);
  return text;
}
