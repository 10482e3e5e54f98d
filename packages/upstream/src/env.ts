/**
 * The upstream's settings as Zod env fragments: the worker composes `upstreamEnv` into its schema,
 * the API `locationsEnv`, and the CLI's canary reads `upstreamEnv` alone (`readUpstreamEnv`).
 * Unset or empty means default; the defaults themselves are UPSTREAM_DEFAULTS and BROWSER_DEFAULTS,
 * filled by resolveUpstreamOptions, so programmatic callers get the same ones.
 */
import { readFileSync } from "node:fs";
import { z } from "zod";
import { envProblems } from "@serp/shared";
import { resolveUpstreamOptions, type UpstreamOptions } from "./config.js";

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
  /** http(s) proxy URLs, comma or space separated, rotated. */
  UPSTREAM_PROXIES: text.transform((s) => s?.split(/[\s,]+/).filter(Boolean)),
  UPSTREAM_TIMEOUT_MS: whole.pipe(z.number().int().min(100).optional()),
  UPSTREAM_MAX_TRIES: whole,
  UPSTREAM_MAX_BODY_BYTES: whole,
  UPSTREAM_PROFILES_FILE: text,
  /** A PEM file, read at boot so that a missing one fails there. */
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
  BROWSER_RENDER_ALWAYS: bool,
});
export type UpstreamEnv = z.infer<typeof upstreamEnv>;

/** The options `createUpstream` takes, from parsed settings: defaults filled, values checked, the CA file read. */
export function upstreamOptionsOf(env: UpstreamEnv): UpstreamOptions {
  return resolveUpstreamOptions({
    baseUrl: env.UPSTREAM_BASE_URL,
    proxies: env.UPSTREAM_PROXIES,
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
