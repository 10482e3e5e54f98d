/**
 * Ways of asking the upstream (DECISIONS.md, Upstream): user agent, headers, cookies and URL form,
 * kept in ONE table per result kind and tried in order until one gives a page we can read.
 *
 * Why this order (reference/google-upstream.md §2, timeline):
 * - Richest layout first. The modern desktop (or mobile) page carries ads, AI overview, knowledge
 *   panel, local pack. Since 2025-01-16 the real upstream answers plain-HTTP clients with a
 *   JavaScript wall instead, which the classifier recognises from one cheap request; the profile
 *   stays first because it is what works through rendering proxies and the replay server, and a
 *   wall costs one request, not a wrong answer.
 * - Then the basic-HTML layout served to old browsers: a Lynx UA (googlesearch-python since
 *   2025-01-18; Lynx still got this page the day the wall went up) and an old-IE UA (google-sr
 *   since 2025-01-25). Organic results, news and image grids survive there, rich blocks do not.
 * - Then the Nokia feature-phone `/wml/search` layout (SearXNG since 2026-08-20, after the
 *   GSA/GoogleApp tricks died on 2026-07-01): the most recently proven way, and the leanest page.
 * GSA and GoogleApp user agents are left out: the upstream closed them on 2026-07-01.
 *
 * Autocomplete: `client=chrome` first (JSON with relevance and type per suggestion), then
 * `client=firefox` (plain list), then the old `output=toolbar` XML. Products: the immersive panel
 * (`ibp=oshop&prds=catalogid:…`), the only form since the product pages were retired on
 * 2024-10-31, then the legacy `/shopping/product/<id>` pages for mirrors and captures that have them.
 *
 * Cookies: `SOCS` + `CONSENT=PENDING+987` (googlesearch-python) or `CONSENT=YES+` (SearXNG) answer
 * the EU consent wall before it is shown.
 */
import type { Endpoint, JobParams } from "@serp/shared";

/** How a profile's URL is built (see urls.ts). */
export type UrlForm =
  | "search" // /search with today's kind switches (udm=2 images, udm=28 shopping)
  | "search-basic" // /search with the older switches (tbm=isch, tbm=shop) the basic layout knows
  | "wml" // /wml/search, the feature-phone layout
  | "product-panel" // /search?ibp=oshop&q=<id>&prds=catalogid:<id>,pvt:hg
  | "product-legacy" // /shopping/product/<id> and /shopping/product/<id>/online
  | "complete-chrome" // /complete/search?client=chrome
  | "complete-firefox" // /complete/search?client=firefox
  | "complete-toolbar"; // /complete/search?output=toolbar (XML)

export interface Profile {
  /** Short stable name, reported in each try. */
  name: string;
  form: UrlForm;
  userAgent: string;
  headers: Readonly<Record<string, string>>;
  cookie: string;
}

const UA = {
  chromeDesktop:
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/139.0.0.0 Safari/537.36",
  safariIphone:
    "Mozilla/5.0 (iPhone; CPU iPhone OS 18_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.5 Mobile/15E148 Safari/604.1",
  lynx: "Lynx/2.9.0 libwww-FM/2.14 SSL-MM/1.4.1 OpenSSL/3.0.13",
  msie: "Mozilla/5.0 (MSIE 10.0; Windows NT 6.1; Trident/5.0)",
  nokia: "Nokia6230i/2.0 (03.80) Profile/MIDP-2.0 Configuration/CLDC-1.1",
} as const;

const CONSENT_BYPASS = "CONSENT=PENDING+987; SOCS=CAESHAgBEhIaAB";
const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

const desktop: Profile = {
  name: "desktop",
  form: "search",
  userAgent: UA.chromeDesktop,
  headers: { accept: BROWSER_ACCEPT },
  cookie: CONSENT_BYPASS,
};
const mobile: Profile = {
  name: "mobile",
  form: "search",
  userAgent: UA.safariIphone,
  headers: { accept: BROWSER_ACCEPT },
  cookie: CONSENT_BYPASS,
};
const basicLynx: Profile = {
  name: "basic-lynx",
  form: "search-basic",
  userAgent: UA.lynx,
  headers: { accept: "*/*" },
  cookie: CONSENT_BYPASS,
};
const basicMsie: Profile = {
  name: "basic-msie",
  form: "search-basic",
  userAgent: UA.msie,
  // google-sr's request, Referer included.
  headers: { accept: "text/html, application/xhtml+xml, */*", referer: "https://www.google.com/" },
  cookie: CONSENT_BYPASS,
};
const wmlNokia: Profile = {
  name: "wml-nokia",
  form: "wml",
  userAgent: UA.nokia,
  headers: { accept: "*/*" },
  cookie: "CONSENT=YES+",
};
const productPanel: Profile = { ...desktop, name: "product-panel", form: "product-panel" };
const productLegacy: Profile = { ...desktop, name: "product-legacy", form: "product-legacy" };
const completeChrome: Profile = {
  name: "complete-chrome",
  form: "complete-chrome",
  userAgent: UA.chromeDesktop,
  headers: { accept: "*/*" },
  cookie: CONSENT_BYPASS,
};
const completeFirefox: Profile = { ...completeChrome, name: "complete-firefox", form: "complete-firefox" };
const completeToolbar: Profile = { ...completeChrome, name: "complete-toolbar", form: "complete-toolbar" };

export type ProfileSet = Endpoint | "web-search-mobile";

/** The one table: per kind, the profiles in the order they are tried. */
export const PROFILES: Readonly<Record<ProfileSet, readonly Profile[]>> = {
  "web-search": [desktop, basicLynx, basicMsie, wmlNokia],
  "web-search-mobile": [mobile, wmlNokia],
  "web-news": [desktop, basicLynx, basicMsie, wmlNokia],
  "web-images": [desktop, basicLynx, basicMsie, wmlNokia],
  // The feature-phone layout has no local or shopping tab.
  "web-local": [desktop, basicLynx, basicMsie],
  "web-shopping-search": [desktop, basicLynx, basicMsie],
  "web-shopping-product": [productPanel, productLegacy],
  "web-shopping-product-info": [productPanel, productLegacy],
  "web-autocomplete": [completeChrome, completeFirefox, completeToolbar],
};

export function profilesFor(endpoint: Endpoint, params: Pick<JobParams, "device">): readonly Profile[] {
  return endpoint === "web-search" && params.device === "mobile" ? PROFILES["web-search-mobile"] : PROFILES[endpoint];
}

/** `Accept-Language` for the job's language (`en` → `en-US,en;q=0.9`, `de` → `de,en;q=0.8`). */
export function acceptLanguage(language: string): string {
  return language === "en" ? "en-US,en;q=0.9" : `${language},en;q=0.8`;
}
