/**
 * The guard's JavaScript challenge, modelled on the upstream's since 2025-10 (a script on the normal
 * results page sets the `SG_SS` cookie; searxng#5286): the page carries a server-issued nonce and a script
 * that does real work over it, sets `SG_SS=<nonce>.<expiry>.<token>` and reloads. The nonce is an
 * HMAC over a random part and the expiry under a per-server secret, so the cookie is checked statelessly.
 * `challengeToken` is the one implementation: run here to verify, stringified into the page for browsers.
 * With headless detection on, the script first runs `isAutomated` (also defined once here and stringified)
 * and sends an automated browser to the /sorry/ CAPTCHA instead of setting the cookie.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { enableJsPage } from "./pages.js";

export const CHALLENGE_COOKIE = "SG_SS";

/**
 * The work a browser must do: integer hashing over the nonce, a few hundred thousand rounds (a few ms).
 * Self-contained (no outside names, no inner functions) so that its source runs as is in the page.
 */
export function challengeToken(nonce: string): string {
  // One global lookup: inside vm contexts (jest, node:vm) each global access in the loop is slow.
  const imul = Math.imul;
  let hash = 0x811c9dc5;
  for (let round = 0; round < 300000; round++) {
    hash = imul(hash ^ nonce.charCodeAt(round % nonce.length) ^ round, 0x01000193);
    hash ^= hash >>> 15;
  }
  return (hash >>> 0).toString(16).padStart(8, "0");
}

/** What `isAutomated` reads of the page's `navigator`. */
export interface AutomationNavigator {
  webdriver?: boolean;
  userAgent?: string;
  userAgentData?: { brands?: readonly { brand: string }[] };
  languages?: readonly string[];
}

/** What `isAutomated` reads of the page's `window`. */
export interface AutomationWindow {
  outerWidth?: number;
  outerHeight?: number;
}

/**
 * True when the browser shows one of the usual automation markers, each enough on its own: `webdriver`
 * set, "Headless" in the user agent or its client-hint brands, no languages, or a zero-sized outer window
 * (old headless). A headless Chromium launched with `--disable-blink-features=AutomationControlled`, a
 * user agent without "Headless" and a locale shows none of them: plugins and timing are not looked at.
 * Self-contained like `challengeToken`, so that its source runs as is in the page.
 */
export function isAutomated(nav: AutomationNavigator, win: AutomationWindow): boolean {
  if (nav.webdriver === true) return true;
  if (/Headless/.test(nav.userAgent ?? "")) return true;
  for (const { brand } of nav.userAgentData?.brands ?? []) if (/Headless/.test(brand)) return true;
  if (!nav.languages || nav.languages.length === 0) return true;
  return win.outerWidth === 0 && win.outerHeight === 0;
}

/** `<random hex>-<signature hex>`: neither part contains the cookie's `.` separator. */
const NONCE = /^([0-9a-f]{16})-([0-9a-f]{32})$/;
const COOKIE_VALUE = /^([0-9a-f]{16}-[0-9a-f]{32})\.(\d{1,15})\.([0-9a-f]{8})$/;

export interface IssuedChallenge {
  nonce: string;
  /** Epoch ms after which the cookie no longer passes. */
  expiry: number;
}

/** Bound challenges remember who earned them (to tell a foreign cookie from a forged one) up to this many. */
const MAX_REMEMBERED = 10_000;

/**
 * Issues and checks challenge nonces. `client` (the exit model's source address; "" when exits are not
 * modelled) is signed into the nonce, so a cookie earned by one address does not pass from another.
 */
export class ChallengeSigner {
  private readonly secret = randomBytes(32);
  private readonly issuedTo = new Map<string, string>();

  private sign(random: string, expiry: number, client: string): string {
    const input = client === "" ? `${random}.${expiry}` : `${random}.${expiry}.${client}`;
    return createHmac("sha256", this.secret).update(input).digest("hex").slice(0, 32);
  }

  issue(ttlMs: number, now = Date.now(), client = ""): IssuedChallenge {
    const random = randomBytes(8).toString("hex");
    const expiry = now + ttlMs;
    if (client !== "") {
      if (this.issuedTo.size >= MAX_REMEMBERED) this.issuedTo.delete(this.issuedTo.keys().next().value as string);
      this.issuedTo.set(random, client);
    }
    return { nonce: `${random}-${this.sign(random, expiry, client)}`, expiry };
  }

  /** True when `cookieHeader` carries an SG_SS this server issued to `client`, unexpired, with the right token. */
  verify(cookieHeader: string | undefined, now = Date.now(), client = ""): boolean {
    return this.check(cookieHeader, now, client) === "valid";
  }

  /** "foreign" when the cookie is one this server issued to another client (and would pass there). */
  check(cookieHeader: string | undefined, now = Date.now(), client = ""): "valid" | "invalid" | "foreign" {
    const value = cookieOf(cookieHeader, CHALLENGE_COOKIE);
    const parts = value === undefined ? null : COOKIE_VALUE.exec(value);
    if (!parts) return "invalid";
    const [, nonce = "", expiryText = "", token = ""] = parts;
    const [, random = "", signature = ""] = NONCE.exec(nonce) ?? [];
    const expiry = Number(expiryText);
    if (expiry <= now || token !== challengeToken(nonce)) return "invalid";
    const signedFor = (who: string) => timingSafeEqual(Buffer.from(signature), Buffer.from(this.sign(random, expiry, who)));
    if (signedFor(client)) return "valid";
    const earner = this.issuedTo.get(random);
    return earner !== undefined && earner !== client && signedFor(earner) ? "foreign" : "invalid";
  }
}

function cookieOf(header: string | undefined, name: string): string | undefined {
  for (const pair of header?.split(";") ?? []) {
    const at = pair.indexOf("=");
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}

/**
 * The challenge: the enablejs wall (what a client without JS sees) plus the script that earns the cookie.
 * With `headlessDetect`, an automated browser is sent to /sorry/index instead (the CAPTCHA page).
 */
export function challengePage(query: string, sei: string, issued: IssuedChallenge, ttlMs: number, headlessDetect: boolean): string {
  const detect = headlessDetect
    ? `if((${isAutomated.toString()})(navigator,window)){location.replace("/sorry/index?continue="+encodeURIComponent(location.href));return;}`
    : "";
  // Nonce (hex and `-`) and numbers only: nothing here can close the script element.
  const script = `<script>(function(){${detect}var nonce=${JSON.stringify(issued.nonce)};var token=(${challengeToken.toString()})(nonce);document.cookie="${CHALLENGE_COOKIE}="+nonce+".${issued.expiry}."+token+"; path=/; max-age=${Math.ceil(ttlMs / 1000)}";location.reload();})();</script>`;
  return enableJsPage(query, sei, script);
}
