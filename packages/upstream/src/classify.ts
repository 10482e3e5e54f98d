/**
 * What an upstream answer is, decided with string checks only (no parse): it runs on every
 * response, pages are up to 2 MB, and only `results` / `no_results` pages go on to a parser.
 * Signals come from reference/google-upstream.md §2 (SearXNG `detect_google_sorry`) and from
 * reading the captured block, consent and error pages.
 */
import type { Endpoint } from "@serp/shared";
import type { PageClass } from "./failures.js";
import { kindOf } from "./kinds/index.js";
import { ENGINE_ORIGIN } from "./hosts.js";

export interface UpstreamResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The URL that was requested (redirects are not followed). */
  url: string;
}

/** Block, consent and JS-wall interstitials are a few KB; a results page is never this small. */
const INTERSTITIAL_MAX = 64 * 1024;
/** SearXNG's rule: a body this small that mentions `/sorry/` is a redirect to the block page. */
const SORRY_MENTION_MAX = 2_000;

/** Markup only the block ("sorry") pages carry: captcha forms, the sorry paths, reCAPTCHA. */
const SORRY_MARKUP = [
  'id="captcha-form"',
  'action="CaptchaRedirect"',
  "/sorry/index",
  "/sorry/image",
  "sorry.google.com",
  'class="g-recaptcha"',
];
/** Google's own error pages: `<title>Error 403 (Forbidden)!!1</title>`, `Error 502 (Server Error)!!1`. */
const GOOGLE_ERROR_TITLE = /<title>Error \d{3} \([^)<]*\)!!1<\/title>/;
/** The consent interstitial posts its choice to consent.google.<tld>; its picture is the cookie wall. */
const CONSENT_MARKUP = ['action="https://consent.google.', "scene_cookie_wall"];
const ENABLEJS = "/httpservice/retry/enablejs";
/** The page old browsers get since 2025-09 (googlesearch#113): "Your browser isn't supported anymore". */
const UNSUPPORTED_BROWSER = ["isn't supported anymore", "isn&#39;t supported anymore", "isn’t supported anymore"];
/**
 * Markup of result items: result-block ids (`data-hveid`, `#rso`), basic-layout result links
 * (`/url?q=`). Interstitials have none. Results pages that hold the inline consent dialog, or
 * the `<noscript>` enablejs fallback every page has carried since 2025, have plenty.
 */
const RESULT_MARKUP = ["data-hveid", 'id="rso"', "id=rso", "/url?q=", 'class="g"'];
/** The "did not match any documents" card; its markup is the same in every language. */
const NO_RESULTS_MARKUP = ['card-section"><p aria-level="3" role="heading"', "- did not match any documents"];

export function classify(res: UpstreamResponse, endpoint: Endpoint): PageClass {
  const { statusCode: status, body } = res;
  if (status >= 300 && status < 400) return classifyRedirect(header(res, "location"));
  if (status === 429) return "blocked";
  if (isSorryUrl(res.url) || isSorryPage(body)) return "blocked";
  if (status === 403) return "refused";
  if (status >= 400 || status < 200) return "upstream_error";
  if (!body.trim()) return "upstream_error";
  const errorTitle = GOOGLE_ERROR_TITLE.exec(body.slice(0, 4096))?.[0];
  if (errorTitle) return errorTitle.includes("Error 403") ? "refused" : "upstream_error";
  // A kind whose answers are data (suggestion lists) reads them itself; its HTML answers are pages like any other.
  const classifyData = kindOf(endpoint).classifyData;
  if (classifyData && !looksLikeHtml(body)) return classifyData(body);
  const small = body.length <= INTERSTITIAL_MAX;
  if (small && hostOf(res.url).startsWith("consent.")) return "consent";
  if (small && includesAny(body, CONSENT_MARKUP) && !includesAny(body, RESULT_MARKUP)) return "consent";
  if (isJsWall(body)) return "js_wall";
  if (small && includesAny(body, UNSUPPORTED_BROWSER) && !includesAny(body, RESULT_MARKUP)) return "refused";
  if (small && looksLikeHtml(body) && !/<\/html>/i.test(body)) return "upstream_error"; // cut short
  if (includesAny(body, NO_RESULTS_MARKUP)) return "no_results";
  return "results";
}

/** A JavaScript wall or challenge page: the enablejs fallback, and no result markup. */
export function isJsWall(body: string): boolean {
  return body.includes(ENABLEJS) && !includesAny(body, RESULT_MARKUP);
}

function classifyRedirect(location: string | undefined): PageClass {
  if (!location) return "upstream_error";
  if (isSorryUrl(location)) return "blocked";
  if (hostOf(location).startsWith("consent.")) return "consent";
  if (location.includes(ENABLEJS)) return "js_wall";
  return "upstream_error";
}

function isSorryUrl(url: string): boolean {
  try {
    const u = new URL(url, ENGINE_ORIGIN);
    return u.hostname.startsWith("sorry.") || u.pathname.startsWith("/sorry");
  } catch {
    return false;
  }
}

function isSorryPage(body: string): boolean {
  if (body.length > INTERSTITIAL_MAX) return false;
  // Markup only (a suggestion list may quote these words), and never a page that holds results.
  if (!body.trimStart().startsWith("<") || includesAny(body, RESULT_MARKUP)) return false;
  // A challenge page's script may name /sorry/ as where it sends a browser it distrusts: a wall.
  if (body.includes(ENABLEJS)) return false;
  if (body.length <= SORRY_MENTION_MAX && body.includes("/sorry/")) return true;
  if (!looksLikeHtml(body)) return false;
  return includesAny(body, SORRY_MARKUP) || (body.includes("unusual traffic") && body.includes("<form"));
}

function looksLikeHtml(body: string): boolean {
  // An XML declaration may come first (the feature-phone layout is XHTML), and a comment.
  return /^\s*\ufeff?\s*(?:<\?xml[^>]*>\s*)?(?:<!--[^]*?-->\s*)?<(?:!doctype\s+html|html)[\s>]/i.test(body.slice(0, 1024));
}

function includesAny(body: string, needles: readonly string[]): boolean {
  return needles.some((n) => body.includes(n));
}

function header(res: UpstreamResponse, name: string): string | undefined {
  const v = res.headers[name] ?? res.headers[name.toLowerCase()];
  return Array.isArray(v) ? v[0] : v;
}

function hostOf(url: string): string {
  try {
    return new URL(url, ENGINE_ORIGIN).hostname;
  } catch {
    return "";
  }
}
