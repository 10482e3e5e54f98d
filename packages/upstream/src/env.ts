/**
 * The upstream's settings as Zod env fragments: the worker composes `upstreamEnv` into its schema,
 * the API `locationsEnv`, and the CLI's canary reads `upstreamEnv` alone (`readUpstreamEnv`).
 * Unset or empty means default; the defaults themselves are UPSTREAM_DEFAULTS and BROWSER_DEFAULTS,
 * filled by resolveUpstreamOptions, so programmatic callers get the same ones.
 */
import { z } from "zod";
import { envProblems } from "@serp/shared";
import { CAPTCHA_DEFAULTS, type CaptchaSolverOptions } from "./captcha.js";
import { ConfigFileError, readConfigFile } from "./config-file.js";
import { resolveUpstreamOptions, type UpstreamOptions } from "./config.js";
import { EXIT_HEALTH_DEFAULTS, type ExitHealthOptions } from "./exits/health.js";
import { readExitsFile } from "./exits/config.js";

/** `NAME=` in a .env file is unset, as an operator expects. */
const text = z
  .string()
  .optional()
  .transform((s) => s?.trim() || undefined);

const whole = text.transform((v, ctx) => {
  if (v === undefined || /^\d+$/.test(v)) return v === undefined ? undefined : Number(v);
  ctx.issues.push({ code: "custom", message: `must be a whole number, got "${v}"`, input: v });
  return z.NEVER;
});

const bool = text.transform((v, ctx) => {
  const lower = v?.toLowerCase();
  if (lower === undefined) return undefined;
  if (lower === "true" || lower === "1") return true;
  if (lower === "false" || lower === "0") return false;
  ctx.issues.push({ code: "custom", message: `must be true or false, got "${lower}"`, input: v });
  return z.NEVER;
});

/** The location list: the API refuses unknown locations with it, the workers check and look up with it. */
export const locationsEnv = z.object({
  /** Folder of geotargets CSV files. */
  GEOTARGETS_DIR: text,
});

/** How the upstream is reached: hosts, proxies, limits, profile table, TLS, breakers and the browser transport (browser.ts). */
export const upstreamEnv = z.object({
  ...locationsEnv.shape,
  /** Every upstream request goes here instead of the real hosts, path and query kept (the replay upstream). */
  UPSTREAM_BASE_URL: text.pipe(z.string().url().optional()),
  /** Proxy URLs (http, https, socks5), comma or space separated: one tier-1 pool without countries. */
  UPSTREAM_PROXIES: text.transform((s) => s?.split(/[\s,]+/).filter(Boolean)),
  /** The proxy pools file (tiers, countries, gateways, sessions): docs/proxies.md. Re-read when it changes. */
  UPSTREAM_PROXIES_FILE: text,
  /** First cooldown of an exit after a block (doubles per block in a row), of one after a proxy error, and the longest. */
  EXIT_BLOCK_COOLDOWN_MS: whole.pipe(z.number().int().min(1).optional()),
  EXIT_ERROR_COOLDOWN_MS: whole.pipe(z.number().int().min(1).optional()),
  EXIT_MAX_COOLDOWN_MS: whole.pipe(z.number().int().min(1).optional()),
  UPSTREAM_TIMEOUT_MS: whole.pipe(z.number().int().min(100).optional()),
  UPSTREAM_MAX_TRIES: whole,
  UPSTREAM_MAX_BODY_BYTES: whole,
  UPSTREAM_PROFILES_FILE: text,
  /** A PEM file (at most 1 MiB, a regular file), read at boot so that a missing one fails there. */
  UPSTREAM_CA_FILE: text,
  UPSTREAM_TLS_INSECURE: bool,
  UPSTREAM_BREAKER_THRESHOLD: whole,
  UPSTREAM_BREAKER_REST_MS: whole,
  UPSTREAM_BREAKER_MAX_REST_MS: whole,
  /** The product the canary asks the product kinds about (one the upstream knows). */
  CANARY_PRODUCT_ID: text.pipe(z.string().regex(/^[A-Za-z0-9_-]{1,64}$/).optional()),
  BROWSER_EXECUTABLE_PATH: text,
  BROWSER_CDP_URL: text,
  BROWSER_WS_ENDPOINT: text,
  BROWSER_HEADLESS: bool,
  BROWSER_CONCURRENCY: whole,
  BROWSER_RECYCLE_PAGES: whole,
  BROWSER_MAX_RSS_MB: whole,
  BROWSER_COOKIE_TTL_MS: whole,
  /**
   * The opt-in CAPTCHA rung (see captcha.ts): a createTask/getTaskResult solver API and its account
   * key. Off unless both are set; `captchaOptionsOf` refuses one without the other (call it at boot).
   */
  CAPTCHA_SOLVER_URL: text.pipe(z.string().url().optional()),
  CAPTCHA_SOLVER_KEY: text,
  /** One solve's limit, createTask to token. Default 180000. */
  CAPTCHA_JOB_TIMEOUT_MS: whole.pipe(z.number().int().min(1000).max(600_000).optional()),
  /** Solves started per clock hour across the fleet (counted in Redis). Default 100. */
  CAPTCHA_MAX_PER_HOUR: whole.pipe(z.number().int().min(1).max(1_000_000).optional()),
  BROWSER_RENDER_ALWAYS: bool,
});
export type UpstreamEnv = z.infer<typeof upstreamEnv>;

/** The options `createUpstream` takes, from parsed settings: defaults filled, values checked, the CA file read. */
export function upstreamOptionsOf(env: UpstreamEnv): UpstreamOptions {
  return resolveUpstreamOptions({
    baseUrl: env.UPSTREAM_BASE_URL,
    proxies: env.UPSTREAM_PROXIES,
    // Read once here so that a bad file at boot is a setting's error (one line, exit 78); the upstream reads and watches it.
    proxiesFile: env.UPSTREAM_PROXIES_FILE === undefined ? undefined : (readExitsFile(env.UPSTREAM_PROXIES_FILE), env.UPSTREAM_PROXIES_FILE),
    timeoutMs: env.UPSTREAM_TIMEOUT_MS,
    maxTries: env.UPSTREAM_MAX_TRIES,
    maxBodyBytes: env.UPSTREAM_MAX_BODY_BYTES,
    geotargetsDir: env.GEOTARGETS_DIR,
    profilesFile: env.UPSTREAM_PROFILES_FILE,
    ca: env.UPSTREAM_CA_FILE === undefined ? undefined : readPem("UPSTREAM_CA_FILE", env.UPSTREAM_CA_FILE),
    tlsInsecure: env.UPSTREAM_TLS_INSECURE,
    breakerThreshold: env.UPSTREAM_BREAKER_THRESHOLD,
    breakerRestMs: env.UPSTREAM_BREAKER_REST_MS,
    breakerMaxRestMs: env.UPSTREAM_BREAKER_MAX_REST_MS,
    browser: defined({
      executablePath: env.BROWSER_EXECUTABLE_PATH,
      cdpUrl: env.BROWSER_CDP_URL,
      wsEndpoint: env.BROWSER_WS_ENDPOINT,
      headless: env.BROWSER_HEADLESS,
      concurrency: env.BROWSER_CONCURRENCY,
      recyclePages: env.BROWSER_RECYCLE_PAGES,
      maxRssMb: env.BROWSER_MAX_RSS_MB,
      cookieTtlMs: env.BROWSER_COOKIE_TTL_MS,
      renderAlways: env.BROWSER_RENDER_ALWAYS,
    }),
  });
}

/** The exits' cooldowns from the settings, defaults filled. */
export function exitHealthOptionsOf(env: UpstreamEnv): ExitHealthOptions {
  const o = {
    ...EXIT_HEALTH_DEFAULTS,
    ...defined({ blockCooldownMs: env.EXIT_BLOCK_COOLDOWN_MS, errorCooldownMs: env.EXIT_ERROR_COOLDOWN_MS, maxCooldownMs: env.EXIT_MAX_COOLDOWN_MS }),
  };
  if (o.maxCooldownMs < Math.max(o.blockCooldownMs, o.errorCooldownMs)) throw new Error("EXIT_MAX_COOLDOWN_MS must be at least EXIT_BLOCK_COOLDOWN_MS and EXIT_ERROR_COOLDOWN_MS");
  return o;
}

/**
 * The CAPTCHA solver's options, or undefined when the rung is off (neither CAPTCHA_SOLVER_URL nor
 * CAPTCHA_SOLVER_KEY set). Throws when only one is set: a half-configured solver is a mistake to report.
 */
export function captchaOptionsOf(env: UpstreamEnv): CaptchaSolverOptions | undefined {
  const { CAPTCHA_SOLVER_URL: url, CAPTCHA_SOLVER_KEY: key } = env;
  if (url === undefined && key === undefined) return undefined;
  if (url === undefined || key === undefined) throw new Error("CAPTCHA_SOLVER_URL and CAPTCHA_SOLVER_KEY turn the CAPTCHA rung on together: set both or neither");
  return {
    url,
    key,
    jobTimeoutMs: env.CAPTCHA_JOB_TIMEOUT_MS ?? CAPTCHA_DEFAULTS.jobTimeoutMs,
    maxPerHour: env.CAPTCHA_MAX_PER_HOUR ?? CAPTCHA_DEFAULTS.maxPerHour,
  };
}

/** For a process that reads only the upstream's settings (the CLI's canary); throws naming each bad one. */
export function readUpstreamEnv(source: Record<string, string | undefined> = process.env): UpstreamEnv {
  const parsed = upstreamEnv.safeParse(source);
  if (!parsed.success) throw new Error(envProblems(parsed.error).join("; "));
  return parsed.data;
}

/** The object without its unset fields; undefined when none is set. */
function defined<T extends object>(o: T): Partial<T> | undefined {
  const set = Object.entries(o).filter(([, v]) => v !== undefined);
  return set.length ? (Object.fromEntries(set) as Partial<T>) : undefined;
}

/** A CA bundle is a few kilobytes; a whole system store about 200 KB. */
const PEM_FILE_MAX_BYTES = 1 << 20;

function readPem(name: string, file: string): string {
  const text = readConfigFile(file, { setting: name, maxBytes: PEM_FILE_MAX_BYTES });
  if (!text.includes("-----BEGIN CERTIFICATE-----")) throw new ConfigFileError(`${name}: ${file}: holds no PEM certificate`);
  return text;
}
