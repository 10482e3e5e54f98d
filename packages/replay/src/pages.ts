/**
 * Small hand-written stand-ins for the upstream's block and error pages. Each one carries the markers
 * of the real page it models (see blocked/ and consent/ in the captured fixtures), nothing more:
 * the "unusual traffic" CAPTCHA form of /sorry/index, the enablejs noscript wall, the "Error NNN (…)!!1"
 * template and the "browser isn't supported anymore" page old user agents get since 2025-09.
 */
import { randomBytes } from "node:crypto";

/** A random token like the upstream's `sei`/`q` values. */
export function randomToken(): string {
  return randomBytes(9).toString("base64url");
}

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** What one /sorry/ page's widget and form carry. */
export interface SorryCaptcha {
  siteKey: string;
  /** The one-time `data-s`. */
  dataS: string;
  /** The form's hidden `q` (the upstream's opaque block id). */
  q: string;
  /** Shown as "IP address:", as the upstream shows the client's. */
  address: string;
}

const PLACEHOLDER_CAPTCHA: SorryCaptcha = { siteKey: "replay-sitekey", dataS: "replay", q: "replay-token", address: "203.0.113.1" };

/**
 * The /sorry/index CAPTCHA page (served with 429), shaped like the 2026 capture: a reCAPTCHA div with
 * `data-sitekey` and a one-time `data-s`, and `form#captcha-form` posting `q` and `continue` back to
 * `index` (the widget adds `g-recaptcha-response`). `continueUrl` is the blocked request's URL.
 */
export function sorryPage(continueUrl: string, captcha: SorryCaptcha = PLACEHOLDER_CAPTCHA): string {
  const url = escapeHtml(continueUrl);
  return `<html><head><meta http-equiv="content-type" content="text/html; charset=utf-8"><meta name="viewport" content="initial-scale=1"><title>${url}</title></head>
<body style="font-family: arial, sans-serif; background-color: #fff; color: #000; padding:20px; font-size:18px; overscroll-behavior:contain;"><div style="max-width:400px;"><hr noshade size="1" style="color:#ccc; background-color:#ccc;"><br><form id="captcha-form" action="index" method="post">
<noscript><div style="font-size:13px">In order to continue, please enable javascript on your web browser.</div></noscript>
<script src="https://www.google.com/recaptcha/enterprise.js" async defer></script>
<script>var submitCallback=function(t){document.getElementById("captcha-form").submit()}</script>
<div id="recaptcha" class="g-recaptcha" data-sitekey="${escapeHtml(captcha.siteKey)}" data-callback="submitCallback" data-s="${escapeHtml(captcha.dataS)}"></div>
<input type="hidden" name="q" value="${escapeHtml(captcha.q)}"><input type="hidden" name="continue" value="${url}"></form>
<hr noshade size="1" style="color:#ccc; background-color:#ccc;"><div style="font-size:13px"><b>About this page</b><br><br>Our systems have detected unusual traffic from your computer network. This page checks to see if it's really you sending the requests, and not a robot.
<div style="font-size:13px;line-break:anywhere">IP address: ${escapeHtml(captcha.address)}<br>Time: ${new Date().toISOString().replace(/\.\d+Z$/, "Z")}<br>URL: ${url}<br></div></div></div></body></html>
`;
}

/**
 * The JavaScript wall: a noscript iframe to /httpservice/retry/enablejs and an empty #main. `script`
 * (trusted markup, e.g. the guard's challenge) goes after #main.
 */
export function enableJsPage(query: string, sei: string, script = ""): string {
  const title = query ? `${escapeHtml(query)} - Google Search` : "Google Search";
  return `<html><head><meta http-equiv="content-type" content="text/html; charset=UTF-8"><title>${title}</title></head><body><noscript><iframe src="/httpservice/retry/enablejs?sei=${escapeHtml(sei)}" frameborder="0" height="100%" width="100%"></iframe>Click here if you're not redirected within a few seconds.</noscript><div id="main"></div>${script}</body></html>
`;
}

/** What the upstream answers old user agents (200): no results, a pointer to upgrade. */
export function unsupportedBrowserPage(): string {
  return `<html><head><meta http-equiv="content-type" content="text/html; charset=UTF-8"><title>Google Search</title></head><body><div style="max-width:600px;margin:40px auto;font-family:arial,sans-serif"><p>Your browser isn't supported anymore. To continue your search, upgrade to a recent version.</p><p><a href="https://support.google.com/websearch/answer/181196">Learn more</a></p></div></body></html>
`;
}

/**
 * The upstream's "did not match any documents" page (modelled on web/no-results-desktop-2023.html:
 * the same card markup, which the service's classifier reads as an empty result), for `query`.
 * Directory mode answers it when nothing was captured for a search, instead of another query's page.
 */
export function noResultsPage(query: string): string {
  const q = escapeHtml(query);
  return `<!doctype html><html lang="en"><head><meta charset="UTF-8"><title>${q} - Google Search</title></head><body><div id="main"><div id="cnt"><div id="center_col"><div id="topstuff"><div class="mnr-c"><div class="card-section"><p aria-level="3" role="heading" style="padding-top:.33em">Your search - <span><em>${q}</em></span> - did not match any documents.</p><p style="margin-top:1em">Suggestions:</p><ul style="margin-left:1.3em;margin-bottom:2em"><li>Make sure that all words are spelled correctly.</li><li>Try different keywords.</li><li>Try more general keywords.</li></ul></div></div></div></div></div></div></body></html>
`;
}

const ERROR_TEXT: Record<number, [title: string, message: string]> = {
  400: ["Bad Request", "Your client has issued a malformed or illegal request."],
  403: ["Forbidden", "Your client does not have permission to get URL <code>{path}</code> from this server."],
  404: ["Not Found", "The requested URL <code>{path}</code> was not found on this server."],
  405: ["Method Not Allowed", "The request method is not supported for <code>{path}</code>."],
  413: ["Request Entity Too Large", "Your client issued a request that was too large."],
  429: ["Too Many Requests", "We're sorry, but you have sent too many requests to us recently. Please try again later."],
  500: ["Server Error", "The server encountered an error and could not complete your request."],
  502: ["Server Error", "The server encountered a temporary error and could not complete your request.<p>Please try again in 30 seconds."],
};

/** The upstream's "Error NNN (Title)!!1" page. */
export function errorPage(status: number, path = "/"): string {
  const [title, message] = ERROR_TEXT[status] ?? ERROR_TEXT[500]!;
  return `<!DOCTYPE html>
<html lang=en>
  <meta charset=utf-8>
  <title>Error ${status} (${title})!!1</title>
  <a href=//www.google.com/><span id=logo aria-label=Google></span></a>
  <p><b>${status}.</b> <ins>That’s an error.</ins>
  <p>${message.replace("{path}", escapeHtml(path))}  <ins>That’s all we know.</ins>
`;
}

export interface BlockAnswer {
  status: number;
  body: string;
  headers: Record<string, string>;
}

/** Fault modes that answer a block or error instead of the page. */
export type BlockMode = "captcha" | "sorry-redirect" | "rate-limit" | "consent-redirect" | "js-wall" | "js-redirect" | "server-error";

/**
 * What the upstream answers when it blocks `requestUrl` (absolute, on this server's `origin`).
 * Redirects point where the upstream's do; /sorry/index and the enablejs path are served here too.
 */
export function blockAnswer(mode: BlockMode, requestUrl: URL, origin: string, captcha?: SorryCaptcha): BlockAnswer {
  const here = requestUrl.href;
  const continued = encodeURIComponent(here);
  switch (mode) {
    case "captcha":
      return { status: 429, body: sorryPage(here, captcha), headers: {} };
    case "sorry-redirect":
      return { status: 302, body: "", headers: { location: `${origin}/sorry/index?continue=${continued}&q=${randomToken()}` } };
    case "rate-limit":
      return { status: 429, body: errorPage(429, requestUrl.pathname), headers: {} };
    case "consent-redirect":
      return { status: 302, body: "", headers: { location: `https://consent.google.com/ml?continue=${continued}&gl=DE&m=0&pc=srp&hl=en&src=1` } };
    case "js-wall":
      return { status: 200, body: enableJsPage(requestUrl.searchParams.get("q") ?? "", randomToken()), headers: {} };
    case "js-redirect":
      return { status: 302, body: "", headers: { location: `/httpservice/retry/enablejs?sei=${randomToken()}` } };
    case "server-error":
      return { status: 502, body: errorPage(502, requestUrl.pathname), headers: {} };
  }
}
