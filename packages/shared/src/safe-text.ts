/**
 * Page text made harmless before it reaches anyone (issue 26): a results page is written by whoever
 * ranks on it, so its text may carry terminal control sequences (ESC/OSC, BEL, BS, DEL, NEL, CSI)
 * that act on the screen of whoever prints a result, and bidi controls (RLO…) that show text in
 * another order than it is read. `safeResult` drops them from every string of a result and keeps
 * only http(s) targets in its link fields; buildResult applies it, so every output (the job JSON,
 * the compatibility endpoint, MCP, the cache and the archive) reads cleaned text.
 */

/**
 * C0 controls except tab and line feed (a field that holds several lines keeps them), DEL, C1
 * controls, and the bidi controls: embeddings and overrides (U+202A–202E), isolates (U+2066–2069),
 * the marks LRM, RLM (U+200E/F) and ALM (U+061C).
 */
const UNSAFE_CHARACTERS = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;
/** The same set (CR among them), to test first: almost every string has none, and is returned as it is. */
const HAS_UNSAFE = new RegExp(UNSAFE_CHARACTERS.source);

/** The text without control and bidi characters; a CR or CRLF line end becomes a line feed. */
export function safeText(text: string): string {
  return HAS_UNSAFE.test(text) ? text.replace(/\r\n?/g, "\n").replace(UNSAFE_CHARACTERS, "") : text;
}

/** Whether `value` is an absolute http(s) URL: the only link target a result gives out. */
export function isHttpUrl(value: string): boolean {
  if (!/^https?:\/\//i.test(value)) return false;
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

/** Fields that are link targets (`link`, `product_link`, `website`…); `displayed_link` is text shown for one. */
const isLinkField = (key: string) => key !== "displayed_link" && (key === "link" || key === "website" || key.endsWith("_link"));
/** Fields that are images: an http(s) URL or an inline image (the page's own `data:image/…` thumbnails). */
const IMAGE_FIELDS = new Set(["thumbnail", "original", "images"]);
const isImage = (value: string) => isHttpUrl(value) || /^data:image\/[a-z0-9.+-]+[;,]/i.test(value);

/**
 * A copy of a result's value with every string (object keys too) through `safeText`, every link
 * field that is not an http(s) URL left out, and every image field that is not an image left out.
 */
export function safeResult<T>(value: T): T {
  return clean(value, undefined) as T;
}

function clean(value: unknown, key: string | undefined): unknown {
  if (typeof value === "string") return safeText(value);
  if (Array.isArray(value)) {
    const items = value.map((v) => clean(v, key));
    return key !== undefined && IMAGE_FIELDS.has(key) ? items.filter((v) => typeof v !== "string" || isImage(v)) : items;
  }
  if (typeof value !== "object" || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const name = safeText(k);
    const cleaned = clean(v, name);
    if (typeof cleaned === "string" && ((isLinkField(name) && !isHttpUrl(cleaned)) || (IMAGE_FIELDS.has(name) && !isImage(cleaned)))) continue;
    out[name] = cleaned;
  }
  return out;
}
