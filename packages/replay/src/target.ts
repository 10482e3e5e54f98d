/** What an incoming request asks the upstream for, read from the upstream's own paths and params. */

export const REPLAY_KINDS = [
  "web",
  "news",
  "images",
  "videos",
  "local",
  "shopping",
  "product-panel",
  "product",
  "sellers",
  "autocomplete",
] as const;
export type ReplayKind = (typeof REPLAY_KINDS)[number];

/** Which captured layout a web page should come in: the fixture folder name. */
export type WebLayout = "web" | "web-mobile" | "web-nojs";

export interface Target {
  kind: ReplayKind;
  /** `q` for searches, the product id for product and sellers pages. */
  key: string;
  layout: WebLayout;
  /** Autocomplete: the file extension the client's format implies. */
  format?: "xml" | "json";
}

export function isReplayKind(value: unknown): value is ReplayKind {
  return typeof value === "string" && (REPLAY_KINDS as readonly string[]).includes(value);
}

const NOJS_UA = /lynx|msie|nokia/i;
const MOBILE_UA = /mobile|iphone|android/i;

/** Legacy clients (Lynx, old IE, Nokia) get the basic layout; phones the mobile one. */
export function layoutFor(userAgent: string | undefined): WebLayout {
  if (!userAgent) return "web";
  if (NOJS_UA.test(userAgent)) return "web-nojs";
  if (MOBILE_UA.test(userAgent)) return "web-mobile";
  return "web";
}

function searchKind(params: URLSearchParams): ReplayKind {
  if (params.get("ibp") === "oshop") return "product-panel";
  const tbm = params.get("tbm");
  const udm = params.get("udm");
  if (tbm === "nws") return "news";
  if (tbm === "isch" || udm === "2") return "images";
  if (tbm === "vid" || udm === "7") return "videos";
  if (tbm === "lcl") return "local";
  if (tbm === "shop" || udm === "28") return "shopping";
  return "web";
}

const PRODUCT_PATH = /^\/shopping\/product\/([A-Za-z0-9_-]{1,64})(?:\/(online|offers))?\/?$/;

/** The target of an upstream path, or undefined when the upstream has no such page. */
export function targetOf(path: string, params: URLSearchParams, userAgent: string | undefined): Target | undefined {
  const q = params.get("q") ?? "";
  const layout = layoutFor(userAgent);
  if (path === "/search") return { kind: searchKind(params), key: q, layout };
  // The light endpoint always answers the basic layout, whatever the UA.
  if (path === "/wml/search") return { kind: searchKind(params), key: q, layout: "web-nojs" };
  if (path === "/complete/search") {
    const xml = params.get("output") === "toolbar" || params.get("client") === "toolbar";
    return { kind: "autocomplete", key: q, layout, format: xml ? "xml" : "json" };
  }
  const product = PRODUCT_PATH.exec(path);
  if (product) return { kind: product[2] ? "sellers" : "product", key: product[1] ?? "", layout };
  return undefined;
}

/** Lower-case words joined by dashes, accents dropped: the way fixture file names spell a query. */
export function slugOf(text: string): string {
  return text
    .normalize("NFKD")
    .replace(/\p{M}+/gu, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "-")
    .replace(/^-+|-+$/g, "");
}
