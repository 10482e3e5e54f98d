/**
 * The exits file (UPSTREAM_PROXIES_FILE): pools of proxies by tier and country. A pool has either
 * static `proxies` or a provider `gateway` whose URL template takes `{country}` and `{session}`
 * (reference/proxies-2026.md §3). Checked with Zod; a problem names its field, never a URL's
 * credentials. UPSTREAM_PROXIES is one tier-1 pool without countries (`poolsOfList`).
 */
import { z } from "zod";
import { readConfigFile } from "../config-file.js";

/** The protocols every transport takes (got: hpagent or a SOCKS agent; impit; playwright). */
export const PROXY_PROTOCOLS = ["http:", "https:", "socks5:", "socks5h:"] as const;
/** The exits file is a few kilobytes; a bound keeps a wrong path from filling memory. */
export const EXITS_FILE_MAX_BYTES = 1 << 20;

export const EXIT_DEFAULTS = { sessionTtlSeconds: 600, maxUsesPerSession: 50 } as const;

export class ExitsConfigError extends Error {
  override readonly name = "ExitsConfigError";
  constructor(
    readonly problems: string[],
    prefix = "",
  ) {
    super(prefix + problems.join("; "));
  }
}

/** A proxy URL's problem, without the URL (it may hold a password). */
function proxyProblem(value: string): string | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "is not a URL";
  }
  if (!(PROXY_PROTOCOLS as readonly string[]).includes(url.protocol)) return "protocol is not one of http, https, socks5";
  if (!url.hostname || !url.port) return "needs a host and a port";
  return undefined;
}

const proxyUrl = z.string().superRefine((v, ctx) => {
  const problem = proxyProblem(v);
  if (problem) ctx.addIssue({ code: "custom", message: `proxy URL ${problem}` });
});

const gatewayTemplate = z.string().superRefine((v, ctx) => {
  const problem = proxyProblem(fillGateway(v, { country: "us", session: "s0" }));
  if (problem) ctx.addIssue({ code: "custom", message: `gateway URL ${problem} (once {country} and {session} are filled)` });
});

const country = z
  .string()
  .regex(/^[a-zA-Z]{2}$/, "a two-letter country code")
  .transform((c) => (c.toLowerCase() === "uk" ? "gb" : c.toLowerCase()));

const poolSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, "letters, digits, _ and -, at most 40"),
    tier: z.number().int().min(1).max(9).default(1),
    proxies: z.array(proxyUrl).min(1).optional(),
    gateway: gatewayTemplate.optional(),
    countries: z.array(country).min(1).optional(),
    sessionTtlSeconds: z.number().int().min(1).max(86_400).default(EXIT_DEFAULTS.sessionTtlSeconds),
    maxUsesPerSession: z.number().int().min(1).max(100_000).default(EXIT_DEFAULTS.maxUsesPerSession),
  })
  .strict()
  .superRefine((p, ctx) => {
    if ((p.proxies === undefined) === (p.gateway === undefined)) ctx.addIssue({ code: "custom", message: "a pool has either proxies or a gateway" });
  });

const fileSchema = z
  .object({ pools: z.array(poolSchema).min(1) })
  .strict()
  .superRefine((f, ctx) => {
    const seen = new Set<string>();
    f.pools.forEach((p, i) => {
      if (seen.has(p.name)) ctx.addIssue({ code: "custom", path: ["pools", i, "name"], message: `pool name ${p.name} is used twice` });
      seen.add(p.name);
    });
  });

export type PoolConfig = z.output<typeof poolSchema>;
export interface ExitsConfig {
  pools: PoolConfig[];
  /** Where the pools came from, for logs: the file, or `UPSTREAM_PROXIES`. */
  source: string;
}

/** The pools of a file's text; throws ExitsConfigError naming each bad field (`pools[1].gateway: …`). */
export function parseExitsConfig(text: string, source = "UPSTREAM_PROXIES_FILE"): ExitsConfig {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ExitsConfigError([`not JSON: ${(error as Error).message.split("\n")[0]}`]);
  }
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) {
    throw new ExitsConfigError(parsed.error.issues.map((i) => `${pathText(i.path)}: ${i.message}`));
  }
  return { pools: parsed.data.pools, source };
}

/** Reads and checks the file (regular file, size bound, UTF-8: config-file.ts). */
export function readExitsFile(file: string): ExitsConfig {
  const text = readConfigFile(file, { setting: "UPSTREAM_PROXIES_FILE", maxBytes: EXITS_FILE_MAX_BYTES });
  try {
    return parseExitsConfig(text, file);
  } catch (error) {
    if (error instanceof ExitsConfigError) throw new ExitsConfigError(error.problems, `UPSTREAM_PROXIES_FILE: ${file}: `);
    throw error;
  }
}

/** UPSTREAM_PROXIES: one tier-1 pool that exits anywhere. None: no pools, requests go out directly. */
export function poolsOfList(urls: readonly string[]): ExitsConfig {
  if (!urls.length) return { pools: [], source: "UPSTREAM_PROXIES" };
  const problems = urls.flatMap((u, i) => {
    const p = proxyProblem(u);
    return p ? [`UPSTREAM_PROXIES[${i}]: proxy URL ${p}`] : [];
  });
  if (problems.length) throw new ExitsConfigError(problems);
  return { pools: [{ name: "default", tier: 1, proxies: [...urls], ...EXIT_DEFAULTS }], source: "UPSTREAM_PROXIES" };
}

/**
 * A gateway URL for a country and session: `{country}` (lower case) and `{COUNTRY}` (upper case),
 * `{session}`. Either may be absent from the template (a provider without sticky sessions).
 */
export function fillGateway(template: string, fill: { country: string; session: string }): string {
  return template
    .replaceAll("{country}", encodeURIComponent(fill.country.toLowerCase()))
    .replaceAll("{COUNTRY}", encodeURIComponent(fill.country.toUpperCase()))
    .replaceAll("{session}", encodeURIComponent(fill.session));
}

/** `host:port` of a proxy URL: what logs, metrics and records show. */
export function proxyLabel(url: string): string {
  return new URL(url).host;
}

function pathText(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, p) => (typeof p === "number" ? `${out}[${p}]` : out ? `${out}.${String(p)}` : String(p)), "") || "(file)";
}
