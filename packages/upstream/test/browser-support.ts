/**
 * What the browser test files share (browser.test.ts, browser-captured.test.ts): the Chromium they
 * drive and whether it is there, the request they make, and how a rendered page's parse is compared
 * with the captured page's.
 */
import { existsSync } from "node:fs";
import type { ReplayServer } from "@serp/replay";
import { BROWSER_DEFAULTS, type BrowserRequest } from "../src/browser.js";
import { fixturesAvailable } from "./fixtures-dir.js";

export const CHROMIUM = process.env.BROWSER_EXECUTABLE_PATH ?? BROWSER_DEFAULTS.executablePath;
export const browserAvailable = existsSync(CHROMIUM);
/** The describe of a test that needs both the browser and the captured pages (none outside Jest: a work module imports this file too). */
export const d = typeof describe === "undefined" ? undefined! : fixturesAvailable && browserAvailable ? describe : describe.skip;
if (!browserAvailable) console.warn(`browser tests skipped: no Chromium at ${CHROMIUM} (npm test installs Debian's chromium as root)`);

export const settings = { timeoutMs: 20_000, maxBodyBytes: 8 * 1024 * 1024 };
export const ask = (replay: ReplayServer, path: string, over: Partial<BrowserRequest> = {}): BrowserRequest => ({
  url: `${replay.url}${path}`,
  headers: { "accept-language": "en-US,en;q=0.9" },
  device: "desktop",
  language: "en",
  country: "us",
  ...over,
});

/** The path to the first leaf where two parses differ, with both values. */
export function firstDifference(a: unknown, b: unknown, path = ""): string {
  if (a && b && typeof a === "object" && typeof b === "object") {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    const key = keys.find((k) => JSON.stringify((a as Record<string, unknown>)[k]) !== JSON.stringify((b as Record<string, unknown>)[k]));
    if (key !== undefined) return firstDifference((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], path ? `${path}.${key}` : key);
  }
  const show = (v: unknown) => JSON.stringify(v)?.slice(0, 200);
  return `${path}: captured ${show(a)} / rendered ${show(b)}`;
}

/**
 * Fields the page's own scripts set or rewrite after load: pictures (a URL or a data URI), and the
 * click redirect a result reports to (`ping`, which the script decorates with its click tracking).
 */
export const SCRIPTED_FIELDS = new Set(["thumbnail", "favicon", "image", "header_images", "serpapi_thumbnail", "redirect_link"]);

/**
 * The parse without what the page's scripts set. The served page holds a placeholder picture and a
 * script with its data URI or URL (which the parser reads); the rendered DOM holds whatever the
 * script has put in by the time it is read (the same picture as a data URI instead of a URL, one the
 * served page had no source for, or none yet), and click redirects the script has rewritten. Every
 * other field is compared exactly.
 */
export function withoutScripted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutScripted);
  if (!value || typeof value !== "object") return value;
  return Object.fromEntries(Object.entries(value).filter(([k]) => !SCRIPTED_FIELDS.has(k)).map(([k, v]) => [k, withoutScripted(v)]));
}
