/**
 * Gatekeeping ("guard") mode: what the upstream does to clients that do not look like a browser, each
 * behaviour switchable on its own and changeable at run time. Decides per request; the server turns the
 * verdict into the upstream's answer. Presets reproduce what the upstream showed at a date.
 */
import { ChallengeSigner, type IssuedChallenge } from "./challenge.js";
import type { HelloDescription, TlsFamily } from "./fingerprint.js";

export type GuardTlsLevel = "off" | "browser" | "chrome";

export interface GuardConfig {
  /** Refuse (403) ClientHellos below this level: not browser-shaped, or not chrome-shaped. */
  tls?: GuardTlsLevel;
  /** Refuse (403) a UA that claims a browser family its ClientHello's family differs from. */
  uaConsistency?: boolean;
  /** Path prefixes that need the SG_SS challenge cookie; `ttlMs` is how long one stays valid. */
  jsChallenge?: { paths: string[]; ttlMs: number } | false;
  /** UA regex sources (case-insensitive) answered with the "isn't supported anymore" page. */
  deadAgents?: { always: string[]; unlessBrowserTls: string[] } | false;
  /** Per client (JA4, or "plain" without TLS, plus remote address), at most `limit` per fixed window. */
  rate?: { limit: number; windowMs: number; answer: "429" | "sorry" } | false;
  /**
   * Headless browsers on the challenged paths (so it needs `jsChallenge`): a `HeadlessChrome` UA is sent to
   * /sorry/ at once, and the challenge page's script sends a browser showing automation markers there too.
   */
  headlessDetect?: boolean;
}

export const GUARD_PRESETS = {
  /** The upstream as of the 2026-11-24 scan (/work/shared/reference/upstream-2026.md §1). */
  "2026-11": {
    // 2026-08-23: "Google are doing TLS inspection now"; from 2026-09-02 SearXNG passes only with curl_cffi
    // impersonating Chrome (searxng#6570, PR #6620).
    tls: "chrome",
    // 2026-08-23: a Nokia UA passes from a Chrome ClientHello (chrome99_android) but not from its own
    // client's (searxng#6570), i.e. the UA is read together with the TLS fingerprint.
    uaConsistency: true,
    // 2025-10: the normal results page runs a JS challenge that sets SG_SS (searxng#5286,
    // mat-1/metasearch2#31); SearXNG's 2026-08-20 move to /wml/search avoids it (searxng a4cb7df0).
    jsChallenge: { paths: ["/search", "/shopping/"], ttlMs: 600_000 },
    deadAgents: {
      // 2025-09-10: Lynx gets "Your browser isn't supported anymore" (Nv7-GitHub/googlesearch#113);
      // 2025-12/2026-01: old-browser UAs dead in general (comdlg32/google2009#5), old IE included (google-sr).
      always: ["Lynx", "MSIE", "Trident"],
      // 2026-07-24: Whoogle's last working UAs (Opera Mini, IEMobile) killed (whoogle e8032ce);
      // 2026-08-23: Nokia "fully blocked" unless the ClientHello is a browser's (searxng#6570).
      unlessBrowserTls: ["Nokia", "MIDP", "Opera Mini", "IEMobile"],
    },
    // 2026-04-09: SearXNG gets the CAPTCHA (/sorry/) again (searxng#5958); Firecrawl users see "Too many
    // requests" (firecrawl#1140). The limit itself is not published: 600/min is a stand-in.
    rate: { limit: 600, windowMs: 60_000, answer: "sorry" },
    // 2025–2026: headless Chrome gets CAPTCHAs where headed passes (BotBrowser#73 with --headless=new;
    // SeleniumBase#3988 on every request; undetected-chromedriver#2270). Enforced through the challenge page.
    headlessDetect: true,
  },
} as const satisfies Record<string, GuardConfig>;
export type GuardPresetName = keyof typeof GUARD_PRESETS;

export class GuardError extends Error {}

const TLS_LEVELS: readonly GuardTlsLevel[] = ["off", "browser", "chrome"];
const KEYS = new Set(["tls", "uaConsistency", "jsChallenge", "deadAgents", "rate", "headlessDetect"]);
const MAX_LIST = 64;
const MAX_TEXT = 200;

/** A copy of the named preset. */
export function guardPreset(name: string): GuardConfig {
  if (!Object.hasOwn(GUARD_PRESETS, name)) throw new GuardError(`no guard preset ${name}; presets: ${Object.keys(GUARD_PRESETS).join(", ")}`);
  return structuredClone(GUARD_PRESETS[name as GuardPresetName]) as GuardConfig;
}

function record(value: unknown, name: string, keys: string[]): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new GuardError(`${name} must be an object or false`);
  const fields = value as Record<string, unknown>;
  const wrong = Object.keys(fields).filter((k) => !keys.includes(k));
  const missing = keys.filter((k) => fields[k] === undefined);
  if (wrong.length > 0) throw new GuardError(`unknown ${name} keys: ${wrong.join(", ")}`);
  if (missing.length > 0) throw new GuardError(`${name} needs ${missing.join(", ")}`);
  return fields;
}

function integer(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw new GuardError(`${name} must be an integer from ${min} to ${max}`);
  }
  return value;
}

function texts(value: unknown, name: string, check: (text: string) => boolean, rule: string): string[] {
  if (!Array.isArray(value) || value.length > MAX_LIST) throw new GuardError(`${name} must be a list of at most ${MAX_LIST}`);
  for (const text of value) {
    if (typeof text !== "string" || text.length === 0 || text.length > MAX_TEXT || !check(text)) {
      throw new GuardError(`${name} entries must be ${rule} of 1 to ${MAX_TEXT} characters`);
    }
  }
  return [...(value as string[])];
}

function isRegex(source: string): boolean {
  try {
    new RegExp(source, "i");
    return true;
  } catch {
    return false;
  }
}

function flag(value: unknown, name: string): boolean {
  if (typeof value !== "boolean") throw new GuardError(`${name} must be true or false`);
  return value;
}

/** Validates untrusted input (the HTTP control body, CLI, options): a config, `{ preset }` or a preset name. */
export function parseGuard(input: unknown): GuardConfig {
  if (typeof input === "string") return guardPreset(input);
  if (typeof input !== "object" || input === null || Array.isArray(input)) throw new GuardError("guard must be an object");
  const fields = input as Record<string, unknown>;
  if ("preset" in fields) {
    if (Object.keys(fields).length !== 1 || typeof fields.preset !== "string") throw new GuardError("preset takes a name and nothing else");
    return guardPreset(fields.preset);
  }
  const wrong = Object.keys(fields).filter((k) => !KEYS.has(k));
  if (wrong.length > 0) throw new GuardError(`unknown guard keys: ${wrong.join(", ")}`);
  const config: GuardConfig = {};
  if (fields.tls !== undefined) {
    if (!TLS_LEVELS.includes(fields.tls as GuardTlsLevel)) throw new GuardError(`tls must be one of ${TLS_LEVELS.join(", ")}`);
    config.tls = fields.tls as GuardTlsLevel;
  }
  if (fields.uaConsistency !== undefined) config.uaConsistency = flag(fields.uaConsistency, "uaConsistency");
  if (fields.headlessDetect !== undefined) config.headlessDetect = flag(fields.headlessDetect, "headlessDetect");
  if (fields.jsChallenge === false) config.jsChallenge = false;
  else if (fields.jsChallenge !== undefined) {
    const challenge = record(fields.jsChallenge, "jsChallenge", ["paths", "ttlMs"]);
    config.jsChallenge = {
      paths: texts(challenge.paths, "jsChallenge.paths", (p) => p.startsWith("/"), "paths starting with /"),
      ttlMs: integer(challenge.ttlMs, "jsChallenge.ttlMs", 1000, 86_400_000),
    };
  }
  if (fields.deadAgents === false) config.deadAgents = false;
  else if (fields.deadAgents !== undefined) {
    const dead = record(fields.deadAgents, "deadAgents", ["always", "unlessBrowserTls"]);
    config.deadAgents = {
      always: texts(dead.always, "deadAgents.always", isRegex, "regular expressions"),
      unlessBrowserTls: texts(dead.unlessBrowserTls, "deadAgents.unlessBrowserTls", isRegex, "regular expressions"),
    };
  }
  if (fields.rate === false) config.rate = false;
  else if (fields.rate !== undefined) {
    const rate = record(fields.rate, "rate", ["limit", "windowMs", "answer"]);
    if (rate.answer !== "429" && rate.answer !== "sorry") throw new GuardError('rate.answer must be "429" or "sorry"');
    config.rate = {
      limit: integer(rate.limit, "rate.limit", 1, 1_000_000),
      windowMs: integer(rate.windowMs, "rate.windowMs", 1, 3_600_000),
      answer: rate.answer,
    };
  }
  if (config.headlessDetect && !config.jsChallenge) throw new GuardError("headlessDetect works through the JS challenge: set jsChallenge too");
  return config;
}

/** True when some behaviour of `config` reads the TLS fingerprint, which only an https server has. */
export function needsFingerprint(config: GuardConfig): boolean {
  const tlsExemption = config.deadAgents ? config.deadAgents.unlessBrowserTls.length > 0 : false;
  return (config.tls !== undefined && config.tls !== "off") || config.uaConsistency === true || tlsExemption;
}

export type UaFamily = Exclude<TlsFamily, "other"> | "safari";

/** The browser family a User-Agent claims, or undefined when it claims none (Nokia, Lynx, curl). */
export function uaFamily(userAgent: string | undefined): UaFamily | undefined {
  if (!userAgent) return undefined;
  if (/Chrome|Chromium|CriOS|Edg/.test(userAgent)) return "chrome";
  if (/Firefox|FxiOS/.test(userAgent)) return "firefox";
  if (/Safari/.test(userAgent)) return "safari";
  return undefined;
}

/** What the guard did to a request: "pass" lets it through to the normal answer (and faults). */
export type GuardAction = "tls" | "ua" | "dead-agent" | "headless" | "challenge" | "rate";
export type GuardVerdict =
  | { action: "pass"; challengePassed: boolean }
  | { action: "tls" | "ua" | "dead-agent" | "headless" }
  | { action: "rate"; answer: "429" | "sorry" }
  | { action: "challenge"; issued: IssuedChallenge; ttlMs: number; headlessDetect: boolean; foreignCookie: boolean };

export interface GuardRequest {
  path: string;
  userAgent: string | undefined;
  /** The ClientHello, undefined over plain HTTP. */
  tls: HelloDescription | undefined;
  remoteAddress: string | undefined;
  cookie: string | undefined;
  /** With the exit model on: the source address the challenge cookie is bound to. Unset: unbound. */
  bindTo?: string;
}

/** Rate windows are pruned once this many clients are tracked. */
const MAX_TRACKED_CLIENTS = 10_000;

interface Compiled {
  always: RegExp[];
  unlessBrowserTls: RegExp[];
}

/** The current config, the rate windows and the challenge signer. */
export class Guard {
  private config: GuardConfig = {};
  private deadAgents: Compiled = { always: [], unlessBrowserTls: [] };
  private windows = new Map<string, { start: number; count: number }>();
  private readonly signer = new ChallengeSigner();

  /** `fingerprints`: whether requests carry a ClientHello (an https server). */
  constructor(private readonly fingerprints: boolean) {}

  /** Validates `input` (a config, `{ preset }` or a preset name) and makes it current. */
  set(input: unknown): void {
    const config = parseGuard(input);
    if (needsFingerprint(config) && !this.fingerprints) {
      throw new GuardError("tls, uaConsistency and deadAgents.unlessBrowserTls read the TLS fingerprint: start the server with https");
    }
    const compile = (sources: string[]) => sources.map((source) => new RegExp(source, "i"));
    this.deadAgents = config.deadAgents
      ? { always: compile(config.deadAgents.always), unlessBrowserTls: compile(config.deadAgents.unlessBrowserTls) }
      : { always: [], unlessBrowserTls: [] };
    this.config = config;
    this.windows.clear();
  }

  clear(): void {
    this.set({});
  }

  current(): GuardConfig {
    return structuredClone(this.config);
  }

  /** Checks in the upstream's order: rate, tls, dead agents, UA consistency, headless UA, JS challenge. */
  check(req: GuardRequest, now = Date.now()): GuardVerdict {
    const { config } = this;
    if (config.rate && this.overRate(config.rate, `${req.tls?.ja4 ?? "plain"} ${req.remoteAddress ?? ""}`, now)) {
      return { action: "rate", answer: config.rate.answer };
    }
    if (config.tls === "browser" && !req.tls?.browserShaped) return { action: "tls" };
    if (config.tls === "chrome" && !req.tls?.chromeShaped) return { action: "tls" };
    const ua = req.userAgent ?? "";
    if (this.deadAgents.always.some((re) => re.test(ua))) return { action: "dead-agent" };
    if (!req.tls?.browserShaped && this.deadAgents.unlessBrowserTls.some((re) => re.test(ua))) return { action: "dead-agent" };
    const claimed = uaFamily(req.userAgent);
    if (config.uaConsistency && claimed && claimed !== (req.tls?.family ?? "other")) return { action: "ua" };
    if (config.jsChallenge && config.jsChallenge.paths.some((prefix) => req.path.startsWith(prefix))) {
      const headlessDetect = config.headlessDetect === true;
      if (headlessDetect && ua.includes("HeadlessChrome")) return { action: "headless" };
      const cookie = this.signer.check(req.cookie, now, req.bindTo);
      if (cookie !== "valid") {
        const issued = this.signer.issue(config.jsChallenge.ttlMs, now, req.bindTo);
        return { action: "challenge", issued, ttlMs: config.jsChallenge.ttlMs, headlessDetect, foreignCookie: cookie === "foreign" };
      }
      return { action: "pass", challengePassed: true };
    }
    return { action: "pass", challengePassed: false };
  }

  /** Counts one request of `client` in its fixed window; true once the window holds more than `limit`. */
  private overRate(rate: { limit: number; windowMs: number }, client: string, now: number): boolean {
    let window = this.windows.get(client);
    if (!window || now - window.start >= rate.windowMs) {
      if (this.windows.size >= MAX_TRACKED_CLIENTS) {
        for (const [key, old] of this.windows) if (now - old.start >= rate.windowMs) this.windows.delete(key);
      }
      window = { start: now, count: 0 };
      this.windows.set(client, window);
    }
    window.count += 1;
    return window.count > rate.limit;
  }
}
