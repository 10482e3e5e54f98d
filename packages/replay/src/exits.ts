/**
 * Exits, as the upstream sees them: every client is its source address. The model gives each address a
 * country and a class (datacenter, residential, mobile), a search budget per window (past it the address is
 * flagged and sent to /sorry/ for `flagMs`), one-time `data-s` values for the /sorry/ reCAPTCHA it serves,
 * and the GOOGLE_ABUSE_EXEMPTION cookie a solved CAPTCHA earns, which lifts the flag of the address that
 * earned it and of no other. Tests tell exits apart on loopback: all of 127.0.0.0/8 is local on Linux, so a
 * test proxy opens its upstream connections from its own 127.x address (`localAddress`).
 */
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const EXIT_CLASSES = ["datacenter", "residential", "mobile"] as const;
export type ExitClass = (typeof EXIT_CLASSES)[number];

export interface ExitProfile {
  /** ISO 3166-1 alpha-2, lower case. */
  country: string;
  class: ExitClass;
}

export interface ExitRule extends ExitProfile {
  /** Matches addresses starting with this text, e.g. "127.101." (the longest matching prefix wins). */
  prefix: string;
}

export interface ExitBudget {
  /** Searches one address may make per window; the one past it is sent to /sorry/ and flags the address. */
  searches: number;
  windowMs: number;
  /** How long a flagged address gets /sorry/ for every search (unless it presents its exemption cookie). */
  flagMs: number;
}

export interface ExitConfig {
  /** Exact addresses (IPv4 dotted, as the socket reports them without `::ffff:`). */
  addresses?: Record<string, ExitProfile>;
  rules?: ExitRule[];
  /** For addresses nothing above matches. Default `{ country: "us", class: "datacenter" }`. */
  default?: ExitProfile;
  /** Per-address search budget. Unset: unlimited. */
  budget?: ExitBudget;
  /** The reCAPTCHA site key the /sorry/ page carries. Default REPLAY_SITE_KEY. */
  siteKey?: string;
  /** How long a `data-s` may be redeemed after its page was served. Default 300 000 (5 min). */
  dataSTtlMs?: number;
  /** How long the GOOGLE_ABUSE_EXEMPTION cookie is good for. Default 3 600 000 (1 h). */
  exemptionTtlMs?: number;
}

export const REPLAY_SITE_KEY = "6LreplayAAAAAExitModelSiteKeyForTestsOnly00";
export const EXEMPTION_COOKIE = "GOOGLE_ABUSE_EXEMPTION";
const DEFAULT_PROFILE: ExitProfile = { country: "us", class: "datacenter" };
const MAX_ENTRIES = 10_000;

export class ExitsError extends Error {}

/**
 * The token the fake solver hands back for a /sorry/ page: what a real solver would get from Google for
 * that site key and `data-s`. The replay accepts exactly this value, once, for a `data-s` it issued.
 */
export function recaptchaTokenFor(siteKey: string, dataS: string): string {
  return `03A${createHash("sha256").update(`${siteKey}\n${dataS}`).digest("base64url")}`;
}

/** `::ffff:127.0.0.9` → `127.0.0.9`; undefined stays "". */
export function clientAddress(remote: string | undefined): string {
  if (!remote) return "";
  return remote.startsWith("::ffff:") ? remote.slice(7) : remote;
}

const COUNTRY = /^[a-z]{2}$/;

function profile(value: unknown, name: string): ExitProfile {
  if (typeof value !== "object" || value === null) throw new ExitsError(`${name} must be an object`);
  const fields = value as Record<string, unknown>;
  const country = typeof fields.country === "string" ? fields.country.toLowerCase() : "";
  if (!COUNTRY.test(country)) throw new ExitsError(`${name}.country must be a two-letter country code`);
  if (!(EXIT_CLASSES as readonly unknown[]).includes(fields.class)) throw new ExitsError(`${name}.class must be one of ${EXIT_CLASSES.join(", ")}`);
  return { country, class: fields.class as ExitClass };
}

function whole(value: unknown, name: string, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) throw new ExitsError(`${name} must be an integer from ${min} to ${max}`);
  return value;
}

const KEYS = new Set(["addresses", "rules", "default", "budget", "siteKey", "dataSTtlMs", "exemptionTtlMs"]);

/** Validates untrusted input (options, the control endpoint) into an ExitConfig. */
export function parseExits(input: unknown): ExitConfig {
  if (typeof input !== "object" || input === null || Array.isArray(input)) throw new ExitsError("exits must be an object");
  const fields = input as Record<string, unknown>;
  const wrong = Object.keys(fields).filter((k) => !KEYS.has(k));
  if (wrong.length > 0) throw new ExitsError(`unknown exits keys: ${wrong.join(", ")}`);
  const config: ExitConfig = {};
  if (fields.addresses !== undefined) {
    if (typeof fields.addresses !== "object" || fields.addresses === null) throw new ExitsError("exits.addresses must be an object");
    const entries = Object.entries(fields.addresses as Record<string, unknown>);
    if (entries.length > MAX_ENTRIES) throw new ExitsError(`exits.addresses takes at most ${MAX_ENTRIES}`);
    config.addresses = Object.fromEntries(entries.map(([address, p]) => [clientAddress(address), profile(p, `exits.addresses["${address}"]`)]));
  }
  if (fields.rules !== undefined) {
    if (!Array.isArray(fields.rules) || fields.rules.length > 1000) throw new ExitsError("exits.rules must be a list of at most 1000");
    config.rules = fields.rules.map((rule: unknown, i) => {
      const prefix = (rule as { prefix?: unknown } | null)?.prefix;
      if (typeof prefix !== "string" || prefix.length === 0 || prefix.length > 64) throw new ExitsError(`exits.rules[${i}].prefix must be a text of 1 to 64 characters`);
      return { prefix, ...profile(rule, `exits.rules[${i}]`) };
    });
  }
  if (fields.default !== undefined) config.default = profile(fields.default, "exits.default");
  if (fields.budget !== undefined) {
    const budget = fields.budget as Record<string, unknown> | null;
    if (typeof budget !== "object" || budget === null) throw new ExitsError("exits.budget must be an object");
    config.budget = {
      searches: whole(budget.searches, "exits.budget.searches", 1, 1_000_000),
      windowMs: whole(budget.windowMs, "exits.budget.windowMs", 1, 86_400_000),
      flagMs: whole(budget.flagMs, "exits.budget.flagMs", 1, 86_400_000),
    };
  }
  if (fields.siteKey !== undefined) {
    if (typeof fields.siteKey !== "string" || !/^[A-Za-z0-9_-]{1,100}$/.test(fields.siteKey)) throw new ExitsError("exits.siteKey must be 1 to 100 of A-Z a-z 0-9 _ -");
    config.siteKey = fields.siteKey;
  }
  if (fields.dataSTtlMs !== undefined) config.dataSTtlMs = whole(fields.dataSTtlMs, "exits.dataSTtlMs", 1, 86_400_000);
  if (fields.exemptionTtlMs !== undefined) config.exemptionTtlMs = whole(fields.exemptionTtlMs, "exits.exemptionTtlMs", 1, 86_400_000);
  return config;
}

/** What the replay saw of one address (`GET /__replay/exits`, `exitStats()`). */
export interface ExitAddressStats extends ExitProfile {
  address: string;
  /** Searches answered with a page (those the budget counts). */
  searches: number;
  /** Searches whose `gl` named another country than the address's. */
  glMismatches: number;
  /** Searches per requested `gl` ("" when the URL had none). */
  gl: Record<string, number>;
  /** Times the address went over its budget. */
  flags: number;
  /** Epoch ms the current flag ends; 0 when not flagged. */
  flaggedUntil: number;
  /** Searches sent to /sorry/ because the address was flagged (the one that flagged it included). */
  sorried: number;
  /** /sorry/ pages served to it (each with a fresh data-s). */
  sorryPages: number;
  /** Exemption cookies it earned with a solved token. */
  exemptionsEarned: number;
  /** Searches let through while flagged thanks to its exemption cookie. */
  exemptedSearches: number;
  /** Tokens it posted that were refused (unknown, spent, expired or issued to another address). */
  tokensRefused: number;
  /** Cookies (SG_SS or GOOGLE_ABUSE_EXEMPTION) it presented that another address had earned. */
  foreignCookies: number;
}

export interface ExitStats {
  addresses: ExitAddressStats[];
  totals: { searches: number; glMismatches: number; flags: number; sorried: number; sorryPages: number; exemptionsEarned: number; tokensRefused: number; foreignCookies: number };
}

interface IssuedDataS {
  address: string;
  siteKey: string;
  expiry: number;
}

/** The per-server exit state: config, counts, flags, issued data-s values and the exemption signer. */
export class ExitModel {
  private config: ExitConfig | undefined;
  private readonly byAddress = new Map<string, ExitAddressStats & { windowStart: number; windowCount: number }>();
  private readonly issued = new Map<string, IssuedDataS>();
  private readonly secret = randomBytes(32);

  /** Off until configured: then the model answers for every request. */
  get enabled(): boolean {
    return this.config !== undefined;
  }

  set(input: unknown): void {
    this.config = parseExits(input);
    this.byAddress.clear();
    this.issued.clear();
  }

  clear(): void {
    this.config = undefined;
    this.byAddress.clear();
    this.issued.clear();
  }

  current(): ExitConfig | null {
    return this.config ? structuredClone(this.config) : null;
  }

  get siteKey(): string {
    return this.config?.siteKey ?? REPLAY_SITE_KEY;
  }

  profileOf(address: string): ExitProfile {
    const config = this.config ?? {};
    const exact = config.addresses?.[address];
    if (exact) return exact;
    let best: ExitRule | undefined;
    for (const rule of config.rules ?? []) if (address.startsWith(rule.prefix) && (!best || rule.prefix.length > best.prefix.length)) best = rule;
    if (best) return { country: best.country, class: best.class };
    return config.default ?? DEFAULT_PROFILE;
  }

  private entry(address: string) {
    let entry = this.byAddress.get(address);
    if (!entry) {
      if (this.byAddress.size >= MAX_ENTRIES) this.byAddress.delete(this.byAddress.keys().next().value as string);
      entry = {
        address,
        ...this.profileOf(address),
        searches: 0,
        glMismatches: 0,
        gl: {},
        flags: 0,
        flaggedUntil: 0,
        sorried: 0,
        sorryPages: 0,
        exemptionsEarned: 0,
        exemptedSearches: 0,
        tokensRefused: 0,
        foreignCookies: 0,
        windowStart: 0,
        windowCount: 0,
      };
      this.byAddress.set(address, entry);
    }
    return entry;
  }

  /**
   * Checked before anything else answers a search from `address`: true (counted) while the address is
   * flagged and presents no exemption cookie of its own; the caller sends it to /sorry/.
   */
  flagged(address: string, cookie: string | undefined, now = Date.now()): boolean {
    if (!this.config?.budget) return false;
    const entry = this.entry(address);
    if (entry.flaggedUntil <= now || this.exemption(cookie, address, now)) return false;
    entry.sorried += 1;
    return true;
  }

  /**
   * One search from `address` about to be answered with a page: counted against the budget. "sorry" when
   * it goes over the budget (the address is flagged from now on) without an exemption cookie of its own.
   */
  search(address: string, gl: string | undefined, cookie: string | undefined, now = Date.now()): { action: "pass" | "sorry"; profile: ExitProfile } {
    const entry = this.entry(address);
    const profile = { country: entry.country, class: entry.class };
    const budget = this.config?.budget;
    if (budget) {
      if (now - entry.windowStart >= budget.windowMs) {
        entry.windowStart = now;
        entry.windowCount = 0;
      }
      entry.windowCount += 1;
      const exempt = this.exemption(cookie, address, now);
      if (entry.windowCount > budget.searches && !exempt) {
        entry.flags += 1;
        entry.flaggedUntil = now + budget.flagMs;
        entry.sorried += 1;
        return { action: "sorry", profile };
      }
      if (exempt && (entry.flaggedUntil > now || entry.windowCount > budget.searches)) entry.exemptedSearches += 1;
    }
    entry.searches += 1;
    const wanted = gl?.toLowerCase() ?? "";
    entry.gl[wanted] = (entry.gl[wanted] ?? 0) + 1;
    if (wanted && wanted !== entry.country) entry.glMismatches += 1;
    return { action: "pass", profile };
  }

  /** A fresh one-time data-s for a /sorry/ page served to `address`. */
  issueDataS(address: string, now = Date.now()): string {
    const entry = this.entry(address);
    entry.sorryPages += 1;
    if (this.issued.size >= MAX_ENTRIES) {
      for (const [key, old] of this.issued) if (old.expiry <= now) this.issued.delete(key);
      if (this.issued.size >= MAX_ENTRIES) this.issued.delete(this.issued.keys().next().value as string);
    }
    const dataS = randomBytes(48).toString("base64url");
    this.issued.set(dataS, { address, siteKey: this.siteKey, expiry: now + (this.config?.dataSTtlMs ?? 300_000) });
    return dataS;
  }

  /**
   * A posted `g-recaptcha-response` from `address`: the exemption cookie's value when it is the token for a
   * data-s this server issued to that same address, unspent and unexpired; undefined (counted) otherwise.
   */
  redeem(address: string, token: string, now = Date.now()): string | undefined {
    const entry = this.entry(address);
    for (const [dataS, issued] of this.issued) {
      if (recaptchaTokenFor(issued.siteKey, dataS) !== token) continue;
      if (issued.address !== address || issued.expiry <= now) break;
      this.issued.delete(dataS);
      entry.exemptionsEarned += 1;
      return this.exemptionValue(address, now + (this.config?.exemptionTtlMs ?? 3_600_000), now);
    }
    entry.tokensRefused += 1;
    return undefined;
  }

  get exemptionTtlMs(): number {
    return this.config?.exemptionTtlMs ?? 3_600_000;
  }

  /** Counts a cookie `address` presented that was earned elsewhere. */
  foreignCookie(address: string): void {
    this.entry(address).foreignCookies += 1;
  }

  private sign(address: string, expiry: number): string {
    return createHmac("sha256", this.secret).update(`${address}|${expiry}`).digest("hex").slice(0, 32);
  }

  /** Shaped like the upstream's: `ID=…:TM=…:C=r:IP=<address>-:S=<signature>` plus our expiry. */
  private exemptionValue(address: string, expiry: number, now: number): string {
    return `ID=${randomBytes(8).toString("hex")}:TM=${Math.floor(now / 1000)}:C=r:IP=${address}-:EX=${expiry}:S=${this.sign(address, expiry)}`;
  }

  /** True when `cookieHeader` carries an unexpired exemption earned by `address`; a foreign one is counted. */
  private exemption(cookieHeader: string | undefined, address: string, now: number): boolean {
    const value = cookieValue(cookieHeader, EXEMPTION_COOKIE);
    const parts = value === undefined ? null : /:IP=([0-9a-fA-F.:]{1,45})-:EX=(\d{1,15}):S=([0-9a-f]{32})$/.exec(value);
    if (!parts) return false;
    const [, earnedBy = "", expiryText = "", signature = ""] = parts;
    const expiry = Number(expiryText);
    if (!timingSafeEqual(Buffer.from(signature), Buffer.from(this.sign(earnedBy, expiry))) || expiry <= now) return false;
    if (earnedBy !== address) {
      this.foreignCookie(address);
      return false;
    }
    return true;
  }

  stats(now = Date.now()): ExitStats {
    const addresses = [...this.byAddress.values()].map(({ windowStart: _start, windowCount: _count, ...entry }) => ({
      ...structuredClone(entry),
      flaggedUntil: entry.flaggedUntil > now ? entry.flaggedUntil : 0,
    }));
    const sum = (key: keyof ExitStats["totals"]) => addresses.reduce((total, a) => total + a[key], 0);
    return {
      addresses,
      totals: {
        searches: sum("searches"),
        glMismatches: sum("glMismatches"),
        flags: sum("flags"),
        sorried: sum("sorried"),
        sorryPages: sum("sorryPages"),
        exemptionsEarned: sum("exemptionsEarned"),
        tokensRefused: sum("tokensRefused"),
        foreignCookies: sum("foreignCookies"),
      },
    };
  }

  /** Forgets counts and flags (the config and issued data-s stay). */
  reset(): void {
    this.byAddress.clear();
  }
}

export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const pair of header?.split(";") ?? []) {
    const at = pair.indexOf("=");
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}
