/**
 * What the upstream's pages mean beyond their HTML: result links behind its redirectors and the
 * Wayback Machine's rewriting, counts, ratings and prices as its locales write them, images and HTML
 * its scripts fill in. Parsers read these off what the HTML layer (`html/`) found.
 */
import type { AnyNode, Document, Element } from "domhandler";
import { isText } from "domhandler";
import { pageScripts, pageSource } from "./html/index.js";
import { ENGINE_ORIGIN, engineHostPattern } from "./hosts.js";

const GOOGLE_HOST = new RegExp(String.raw`^(?:https?:)?\/\/${engineHostPattern()}(?=\/)`, "i");

/**
 * The real target of a result link. Unwraps the upstream's redirectors (`/url?q=`, `/url?url=`,
 * `/aclk?…&adurl=`), makes relative links absolute on `base`, and leaves other http(s) links as they
 * are; anything else (`javascript:`, `data:`, any case or spacing) is no link.
 */
export function targetUrl(href: string | undefined, base = ENGINE_ORIGIN): string | undefined {
  if (!href || href.startsWith("javascript:") || href === "#") return undefined;
  let url: URL;
  try {
    url = new URL(href, base);
  } catch {
    return undefined;
  }
  const isGoogle = GOOGLE_HOST.test(`${url.protocol}//${url.host}/`);
  if (isGoogle && (url.pathname === "/url" || url.pathname === "/interstitial")) {
    const inner = url.searchParams.get("q") || url.searchParams.get("url");
    if (inner && /^https?:\/\//i.test(inner)) return inner;
  }
  if (isGoogle && url.pathname.startsWith("/aclk")) {
    const inner = url.searchParams.get("adurl");
    if (inner && /^https?:\/\//i.test(inner)) return inner;
  }
  return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined;
}

/**
 * Words and letters that scale a count shown in short form, by language: `1.2K`, `(1,5 mil)` (pt/es:
 * thousands), `2,3 mi` / `1,2 M` (millions), `12 Tsd.`, `3 Mio.`, `1,2 тыс.`, `1.5万`, `3천`. Longer
 * spellings first, so `mil` is never read as `mi` + `l`, nor `mill.` as `mil`.
 */
const COUNT_SCALES: readonly (readonly [RegExp, number])[] = [
  [/^(?:thousand|tausend|mille|mila|tys\.?|tsd\.?|тыс\.?|rb|ribu|mil(?:e)?)(?![\p{L}])/iu, 1_000],
  [/^(?:million(?:s|en|i)?|millones|millón|milhões|milhão|mill\.?|mio\.?|mln\.?|млн\.?|jt|juta|mi)(?![\p{L}])/iu, 1_000_000],
  [/^(?:billion(?:s)?|mrd\.?|bn|bi|млрд\.?)(?![\p{L}])/iu, 1_000_000_000],
  [/^[kK](?![\p{L}])/u, 1_000],
  [/^[mM](?![\p{L}])/u, 1_000_000],
  [/^[bB](?![\p{L}])/u, 1_000_000_000],
  [/^(?:千|천)/u, 1_000],
  [/^(?:万|萬|만)/u, 10_000],
  [/^(?:億|亿|억)/u, 100_000_000],
];

/** Spaces a page may use inside a number: no-break, narrow no-break and thin spaces, and apostrophes (de-CH). */
const NUMBER_SPACES = /[\u00a0\u202f\u2009\u2007]/g;

/**
 * A count as the page shows it, in any language → a whole number, or undefined: `1,234` and `1.234`
 * and `1 234` (groups) → 1234; `(1.4K)` → 1400; `(1,5 mil)` (pt-BR: thousands) → 1500; `12 mil` →
 * 12000; `2,3 mi` → 2300000; `1.5万` → 15000. With a scale word the mark before one or two digits is
 * the decimal mark; without one, `.` `,` `'` and spaces only group digits.
 */
export function parseCount(raw: string | undefined): number | undefined {
  if (!raw) return undefined;
  const s = raw.replace(NUMBER_SPACES, " ");
  const m = s.match(/\d(?:[\d.,'\u2019]|\s(?=\d{3}(?!\d)))*/);
  if (!m) return undefined;
  const digits = m[0];
  const rest = s.slice((m.index ?? 0) + digits.length).replace(/^\s+/, "");
  const scale = COUNT_SCALES.find(([word]) => word.test(rest))?.[1];
  if (scale) {
    const decimal = digits.match(/^(\d+)[.,](\d{1,2})$/);
    const n = decimal ? Number(`${decimal[1]}.${decimal[2]}`) : Number(digits.replace(/[^\d]/g, ""));
    return Number.isFinite(n) ? Math.round(n * scale) : undefined;
  }
  const n = Number(digits.replace(/[^\d]/g, ""));
  return Number.isFinite(n) ? n : undefined;
}

/** `4,6` / `4.6` → 4.6, or undefined. */
export function parseRating(raw: string | undefined): number | undefined {
  const m = raw?.match(/\d+(?:[.,]\d+)?/);
  if (!m) return undefined;
  const n = Number(m[0].replace(",", "."));
  return Number.isFinite(n) ? n : undefined;
}

/** `R$ 1.299,90` / `$27.00` / `1 299,90 €` → 1299.9, or undefined. */
export function parsePrice(raw: string | undefined): number | undefined {
  const m = raw?.replace(NUMBER_SPACES, " ").match(/\d(?:[\d.,'\u2019]|\s(?=\d))*/);
  if (!m) return undefined;
  let s = m[0].replace(/[\s'\u2019]/g, "");
  const lastComma = s.lastIndexOf(",");
  const lastDot = s.lastIndexOf(".");
  if (lastComma > lastDot) {
    // 1.299,90 or 12,50: comma is the decimal mark when one or two digits follow it.
    s = /,\d{1,2}$/.test(s) ? s.replace(/\./g, "").replace(",", ".") : s.replace(/,/g, "");
  } else {
    s = /\.\d{1,2}$/.test(s) ? s.replace(/,/g, "") : s.replace(/[.,]/g, "");
  }
  const n = Number(s);
  return Number.isFinite(n) ? n : undefined;
}

const WAYBACK = /^(?:(?:https?:)?\/\/(?:web\.)?archive\.org)?\/web\/\d{1,14}(?:[a-z]{2}_)?\/(.+)$/i;

/**
 * A link as it was before the Wayback Machine rewrote it: `https://web.archive.org/web/2017…/https://x`,
 * `/web/2017…im_/https://x` → `https://x`. Other links come back unchanged.
 */
export function unwrapWayback(href: string | undefined): string | undefined {
  const inner = href?.match(WAYBACK)?.[1];
  if (!inner) return href;
  // The archive sometimes collapses the scheme's double slash (`https:/x`).
  return inner.replace(/^(https?:)\/(?!\/)/i, "$1//");
}

const SCRIPTED_IMAGE = /var s='((?:data:image\/|https:\/\/)[^']+)';\s*var ii=\[([^\]]*)\]/g;
/** `google.ldi={"dimg_21":"https://encrypted-tbn0.gstatic.com/images?q\u003dtbn:…",…}` (also `google.ldilf`; `google.pim` for place photos): a JSON object of id → URL. */
const LAZY_IMAGES = /google\.(?:ldi|ldilf|pim)=(\{[^{}]*\})/g;

/**
 * Images a raw results page fills in by script: the `<img id="dimg_3">` it serves holds a 1×1
 * placeholder, and an inline script sets the real data URI or URL later (`var s='data:…';var ii=['dimg_3'];
 * _setImagesSrc(ii,s)`), or, for images below the first screen, the URL it loads them from
 * (`google.ldi={"dimg_21":"https://…"}`, `google.ldilf`, `google.pim` for a local pack's photos; 2019–2023 pages:
 * news/win10-iso-news-2019-wayback, web/coffee-desktop-2023). Reads
 * every such script once: image id → data URI or URL (a data URI wins for an id given both).
 */
export function scriptedImageSources(doc: Document): Map<string, string> {
  const sources = new Map<string, string>();
  const scripts = pageScripts(doc);
  if (scripts.length === 0) return sources;
  // The page's source when `parseHtml` kept it: one pass over it costs less than a first read of each
  // script's text in the tree (see `deferredHtml`).
  const source = pageSource(doc);
  const texts = source !== undefined ? [source] : scripts.map(scriptText);
  for (const code of texts) {
    for (const m of code.matchAll(SCRIPTED_IMAGE)) {
      const uri = m[1]!.replace(/\\x([0-9a-f]{2})/gi, (_, h: string) => String.fromCharCode(parseInt(h, 16)));
      for (const id of m[2]!.matchAll(/'([^']+)'/g)) sources.set(id[1]!, uri);
    }
    for (const m of code.matchAll(LAZY_IMAGES)) {
      let urls: unknown;
      try {
        urls = JSON.parse(m[1]!);
      } catch {
        continue;
      }
      for (const [id, url] of Object.entries(urls as Record<string, unknown>)) {
        if (typeof url === "string" && /^https:\/\//.test(url) && !sources.has(id)) sources.set(id, url);
      }
    }
  }
  return sources;
}

function scriptText(script: Element): string {
  const { children } = script;
  if (children.length === 1) return isText(children[0]!) ? children[0].data : "";
  return children.map((c) => (isText(c) ? c.data : "")).join("");
}

const DEFERRED_CALL = "jsl.dh('";

/**
 * HTML a raw results page serves in scripts and sets into an element on load: `window.jsl.dh('<id>',
 * '<escaped HTML>')` fills the (empty) element of that id. Answers of "People also ask" come this way
 * (web/tesla-manifesto-desktop-2025, 2019–2026 raw pages): they are part of the page as served, only
 * collapsed. Returns a lookup of id → the call's string literal, still escaped: a caller can test it
 * for what it looks for before decoding it (`servedHtml`) and parsing it.
 *
 * The calls are looked for in the HTML the page was parsed from when `parseHtml` built it: a
 * script's text in the tree is built by the parser in pieces, and its first read copies it whole,
 * which costs more than finding the calls (pages carry up to a megabyte of scripts, most of it
 * code). Each id is searched for itself, on from the call found last (an answer's parts come right
 * after it), else back from the end of the page, and its literal delimited only then, so the HTML
 * other calls carry is not read; after an id no call fills, one search through the page notes where
 * every call is, for the lookups to come. A tree `parseHtml` did not build has no
 * source and gives none. An id filled twice (rare) may give either call (the later, when looked up
 * from the end, as on the page).
 */
export function deferredHtml(doc: AnyNode): (id: string) => string | undefined {
  const source = pageSource(doc);
  // A page without scripts (a saved page, the basic layout) has no calls: its source is not searched.
  if (source === undefined || pageScripts(doc).length === 0) return () => undefined;
  return deferredInSource(source);
}

/** `deferredHtml` over a page's source. */
function deferredInSource(source: string): (id: string) => string | undefined {
  /** Where each call's id ends, noted once a lookup found no call. */
  let calls: Map<string, number> | undefined;
  // On from the call found last (an answer's parts follow it), else back from the page's end (the
  // calls come after the content they fill, most of them near the end).
  let from = -1;
  return (id) => {
    let idEnd: number | undefined;
    if (calls) idEnd = calls.get(id);
    else {
      const call = `${DEFERRED_CALL}${id}'`;
      let at = from < 0 ? -1 : source.indexOf(call, from);
      if (at < 0) at = source.lastIndexOf(call);
      if (at >= 0) idEnd = at + call.length - 1;
      else calls = callPositions(source);
    }
    const literal = idEnd === undefined ? undefined : literalAfter(source, idEnd);
    if (literal && !calls) from = literal.end;
    return literal && source.slice(literal.start, literal.end);
  };
}

/** Every `jsl.dh('<id>'` in `code`: id → where the id ends. */
function callPositions(code: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (let at = code.indexOf(DEFERRED_CALL); at >= 0; at = code.indexOf(DEFERRED_CALL, at + DEFERRED_CALL.length)) {
    const idStart = at + DEFERRED_CALL.length;
    const idEnd = code.indexOf("'", idStart);
    if (idEnd < 0) break;
    calls.set(code.slice(idStart, idEnd), idEnd);
  }
  return calls;
}

/** The second argument's string literal after a call's first one (closing quote at `idEnd`): its body's bounds. */
function literalAfter(code: string, idEnd: number): { start: number; end: number } | undefined {
  let p = idEnd + 1;
  while (code[p] === " ") p++;
  if (code[p++] !== ",") return undefined;
  while (code[p] === " ") p++;
  if (code[p] !== "'") return undefined;
  const start = p + 1;
  let end = code.indexOf("'", start);
  while (end >= 0 && escaped(code, end)) end = code.indexOf("'", end + 1);
  return end < 0 ? undefined : { start, end };
}

/** Whether the character at `i` is escaped: an odd run of backslashes before it. */
function escaped(code: string, i: number): boolean {
  let n = 0;
  while (code.charCodeAt(i - 1 - n) === 92) n++;
  return n % 2 === 1;
}

const JS_CHAR: Record<string, string> = { n: "\n", r: "\r", t: "\t", b: "\b", f: "\f", v: "\v", "0": "\0" };

/**
 * A JavaScript string literal's body as the string it stands for (`\x3cdiv` → `<div`): the HTML of a
 * `deferredHtml` call. Served HTML escapes every `<`, `>`, `"` and `=`, thousands per answer: the
 * escapes are found with `indexOf` and decoded by hand, not by a regex calling back per escape.
 */
export function servedHtml(literal: string): string {
  let at = literal.indexOf("\\");
  if (at < 0) return literal;
  const parts: string[] = [];
  let from = 0;
  while (at >= 0) {
    parts.push(literal.slice(from, at));
    const c = literal[at + 1] ?? "";
    const hex = c === "x" ? 2 : c === "u" ? 4 : 0;
    const code = hex ? hexValue(literal, at + 2, hex) : -1;
    if (code >= 0) {
      parts.push(String.fromCharCode(code));
      from = at + 2 + hex;
    } else {
      parts.push(JS_CHAR[c] ?? c);
      from = at + 2;
    }
    at = literal.indexOf("\\", from);
  }
  parts.push(literal.slice(from));
  return parts.join("");
}

/** The value of `length` hex digits at `at`, or -1 when they are not all hex digits. */
function hexValue(s: string, at: number, length: number): number {
  let n = 0;
  for (let i = at; i < at + length; i++) {
    const c = s.charCodeAt(i);
    const d = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
    if (d < 0) return -1;
    n = n * 16 + d;
  }
  return n;
}

/** The 1×1 GIF the upstream puts in an `<img>` until a script or lazy loader sets the real image. */
export function isPlaceholderImage(src: string | undefined): boolean {
  return !src || /^data:image\/gif;base64,R0lGODlhAQABA/i.test(src);
}

/**
 * Links of paid placements (text ads, shopping offers, sellers): the page links them through the
 * engine's click redirect (`/aclk?…&adurl=<destination>`). A result's `link` is only ever the
 * destination: read from `adurl` where the redirect carries it. A redirect without one (saved
 * pages often have `adurl=` empty) is kept as `tracking_link`, a field that does not claim to be
 * where the offer leads.
 */
/** The engine's ad-click redirect: `google.<tld>/aclk?`, `googleadservices.com/pagead/aclk?`, or a relative `/aclk?`. */
export const AD_CLICK = new RegExp(String.raw`^(?:https?:)?\/\/${engineHostPattern({ also: ["adservices"] })}\/(?:pagead\/)?aclk\?|^\/aclk\?`, "i");


/** The destination a click redirect names in `adurl`, when it names one (and it is not another redirect). */
export function adDestination(href: string | undefined): string | undefined {
  if (!href || !AD_CLICK.test(href)) return undefined;
  let inner: string | null;
  try {
    inner = new URL(href, ENGINE_ORIGIN).searchParams.get("adurl");
  } catch {
    return undefined;
  }
  return inner && /^https?:\/\//i.test(inner) && !AD_CLICK.test(inner) ? inner : undefined;
}

/**
 * `link` (the destination) and `tracking_link` (the click redirect) of a placement's anchor `href`:
 * a plain link is the destination; a redirect is the tracking link, and gives the destination from
 * its `adurl` when present.
 */
export function placementLinks(href: string | undefined): { link?: string; tracking_link?: string } {
  if (!href) return {};
  if (!AD_CLICK.test(href)) {
    const link = targetUrl(href);
    return link ? { link } : {};
  }
  let tracking_link: string;
  try {
    tracking_link = new URL(href, ENGINE_ORIGIN).href;
  } catch {
    return {};
  }
  const link = adDestination(href);
  return link ? { link, tracking_link } : { tracking_link };
}
