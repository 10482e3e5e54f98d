/**
 * The page side of the field audit (fields.ts, shown.ts): a parse5 tree of a captured page, the
 * cards of the items our answer returned located in it, and detectors that say which fields a
 * card SHOWS. Nothing here calls our parsers: every rule below reads the page's HTML on its own
 * (plain parse5, text and attribute patterns), so what a detector finds is what the page shows,
 * whatever our parsers made of it.
 */
import { parse, type DefaultTreeAdapterMap } from "parse5";

export type El = DefaultTreeAdapterMap["element"];
type Node = DefaultTreeAdapterMap["node"];
type Parent = DefaultTreeAdapterMap["parentNode"];

const SKIP = new Set(["script", "style", "noscript", "template", "svg"]);

export const isEl = (n: Node | null | undefined): n is El => !!n && "tagName" in n;
export const attr = (el: El, name: string): string | undefined => el.attrs.find((a) => a.name === name)?.value;

/** Every element under `root`, in document order (script, style and noscript contents left out). */
export function elementsOf(root: Parent): El[] {
  const out: El[] = [];
  const stack: Node[] = [...root.childNodes].reverse();
  while (stack.length) {
    const n = stack.pop()!;
    if (!isEl(n)) continue;
    out.push(n);
    if (SKIP.has(n.tagName)) continue;
    const kids = n.tagName === "template" ? [] : n.childNodes;
    for (let i = kids.length - 1; i >= 0; i--) stack.push(kids[i]!);
  }
  return out;
}

const textCache = new WeakMap<El, string>();
/** The element's visible text (script, style, noscript, svg left out), blanks collapsed. */
export function textOf(el: El): string {
  const hit = textCache.get(el);
  if (hit !== undefined) return hit;
  const parts: string[] = [];
  const walk = (n: Node) => {
    if (n.nodeName === "#text") parts.push((n as DefaultTreeAdapterMap["textNode"]).value);
    else if (isEl(n)) {
      if (SKIP.has(n.tagName)) return;
      if (n.tagName === "br" || BLOCKY.has(n.tagName)) parts.push(" ");
      for (const c of n.childNodes) walk(c);
      if (BLOCKY.has(n.tagName)) parts.push(" ");
    }
  };
  walk(el);
  const text = parts.join("").replace(/\s+/g, " ").trim();
  textCache.set(el, text);
  return text;
}
const BLOCKY = new Set(["div", "p", "li", "tr", "td", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "table"]);

export function contains(outer: El, inner: Node): boolean {
  for (let n: Node | null = inner; n; n = (n as El).parentNode as Node | null) if (n === outer) return true;
  return false;
}

export function parentEl(el: El): El | undefined {
  const p = el.parentNode;
  return isEl(p as Node) ? (p as El) : undefined;
}

export function ancestors(el: El): El[] {
  const out: El[] = [];
  for (let p = parentEl(el); p; p = parentEl(p)) out.push(p);
  return out;
}

// ---- links ---------------------------------------------------------------------------------------

/**
 * Where an href leads, comparable across forms: Google's `/url?q=`/`url=` redirect, the ad redirect
 * and a Wayback prefix are undone; scheme, `www.`, a trailing slash and case of the host are ignored.
 */
export function targetOf(href: string | undefined): string | undefined {
  if (!href) return undefined;
  let h = href.trim();
  const wayback = /^(?:https?:\/\/web\.archive\.org)?\/web\/\d+[a-z_]*\/(.*)$/i.exec(h);
  if (wayback) h = wayback[1]!;
  const redirect = /^(?:https?:\/\/(?:www\.)?google\.[a-z.]+)?\/url\?(.*)$/i.exec(h);
  if (redirect) {
    const q = new URLSearchParams(redirect[1]!.replace(/&amp;/g, "&"));
    const to = q.get("q") ?? q.get("url");
    if (to && /^https?:/i.test(to)) h = to;
  }
  if (!/^https?:\/\//i.test(h)) return undefined;
  try {
    const u = new URL(h);
    const host = u.hostname.toLowerCase().replace(/^www\./, "");
    let path = u.pathname.replace(/\/+$/, "");
    try {
      path = decodeURI(path);
    } catch {
      /* keep as is */
    }
    for (const k of [...u.searchParams.keys()]) if (TRACKING.has(k)) u.searchParams.delete(k);
    return `${host}${path}${u.search}${u.hash}`;
  } catch {
    return undefined;
  }
}

/** Click-tracking and session parameters: two links differing only in these lead to the same place. */
const TRACKING = new Set(["ved", "sa", "ei", "usg", "sxsrf", "biw", "bih", "source", "opi", "rct", "cd", "cad", "uact", "sqi", "oq", "gs_lcp", "gs_lp", "sclient", "uds", "fbs", "sca_esv", "sei", "psig", "ust", "prmd", "iflsig"]);

/** A target without its `#fragment`. */
export const baseOf = (target: string | undefined) => target?.split("#")[0];

export function hostOf(target: string): string {
  return target.split(/[/?#]/)[0]!;
}

export const isGoogleHost = (host: string) => /(^|\.)(google|gstatic|googleusercontent|googleadservices|youtube-nocookie)\.[a-z.]+$|^web\.archive\.org$/.test(host);

// ---- the page ------------------------------------------------------------------------------------

export interface Page {
  html: string;
  all: El[];
  anchors: Array<{ el: El; target: string | undefined; href: string }>;
}

export function loadPage(html: string): Page {
  const doc = parse(html);
  const all = elementsOf(doc);
  const anchors = all.filter((e) => e.tagName === "a").map((el) => {
    const href = attr(el, "href") ?? "";
    return { el, href, target: targetOf(href) };
  });
  return { html, all, anchors };
}

/** Elements whose whole text is exactly `text` (blanks collapsed), smallest first. */
export function elementsWithText(page: Page, text: string): El[] {
  const want = text.replace(/\s+/g, " ").trim();
  if (!want) return [];
  return page.all.filter((e) => !SKIP.has(e.tagName) && textOf(e) === want).reverse();
}

// ---- cards ---------------------------------------------------------------------------------------

/** Containers that are a whole results region, never one card. */
const REGION_IDS = new Set(["rso", "search", "center_col", "rcnt", "main", "rhs", "res", "ires", "islrg", "islmp", "botstuff", "bres", "cnt", "taw", "tads", "tvcap"]);

/**
 * The card around `start`: the largest element around it that holds no other result's anchor or
 * heading (`others`), whose text stays under `maxText` characters, and that is no results region.
 */
export function cardAround(start: El, isOther: (el: El) => boolean, maxText: number): El {
  let card = start;
  for (let p = parentEl(card); p; p = parentEl(p)) {
    if (p.tagName === "body" || p.tagName === "html" || p.tagName === "form") break;
    const id = attr(p, "id");
    if (id && REGION_IDS.has(id)) break;
    if (textOf(p).length > maxText) break;
    if (elementsOf(p).some(isOther)) break;
    card = p;
  }
  return card;
}

// ---- what a card shows ----------------------------------------------------------------------------

const MONTHS =
  "jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june|july|august|september|october|november|december|" +
  "janv|févr|mars|avr|mai|juin|juil|août|sept|déc|janvier|février|avril|juillet|septembre|octobre|novembre|décembre|" +
  "sty|lut|kwi|maj|cze|lip|sie|wrz|paź|lis|gru|stycznia|lutego|marca|kwietnia|maja|czerwca|lipca|sierpnia|września|października|listopada|grudnia|" +
  "jän|mär|okt|dez|januar|februar|märz|juni|juli|oktober|dezember|" +
  "ene|abr|ago|dic|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|" +
  "fev|set|out|dez|janeiro|fevereiro|março|maio|junho|julho|setembro|outubro|novembro|dezembro|" +
  "янв|фев|мар|апр|мая|июн|июл|авг|сен|окт|ноя|дек|января|февраля|марта|апреля|июня|июля|августа|сентября|октября|ноября|декабря";
/** A date written out in full: `Jul 7, 2023`, `7 juil. 2023`, `2023/07/07`, `2023年7月7日`, `07.07.2023`. */
export const ABSOLUTE_DATE = new RegExp(
  `^(?:(?:${MONTHS})\\.? \\d{1,2},? \\d{4}|\\d{1,2}\\.? (?:de )?(?:${MONTHS})\\.?(?: de)? \\d{4}(?: г\\.?)?|\\d{4}(?<a>[/.-])\\d{1,2}\\k<a>\\d{1,2}|\\d{1,2}(?<b>[/.])\\d{1,2}\\k<b>\\d{2,4}|\\d{4}年\\d{1,2}月\\d{1,2}日|(?:${MONTHS})\\.? \\d{4})$`,
  "iu",
);
/** An age: `7 days ago`, `il y a 3 jours`, `3 dni temu`, `vor 2 Tagen`, `3 日前`, `3天前`, `2 часа назад`. */
export const RELATIVE_DATE =
  /^(?:\d{1,3} (?:sec|secs|second|seconds|min|mins|minute|minutes|hour|hours|day|days|week|weeks|month|months|year|years) ago|il y a \d{1,3} \p{L}+|\d{1,3} \p{L}+ temu|vor \d{1,3} \p{L}+|hace \d{1,3} \p{L}+|há \d{1,3} \p{L}+|\d{1,3} ?(?:秒|分|時間|日|週間|か月|ヶ月|年)前|\d{1,3} ?(?:秒|分钟|小时|天|周|个月|年)前|\d{1,3} \p{L}+ назад|yesterday|hier|wczoraj|gestern|ayer|ontem|вчера|昨日|昨天)$/iu;

/** A date element: its whole text (a trailing ` — `, ` - `, ` · ` aside) is a date. */
export function dateShown(card: El, skip: (el: El) => boolean = () => false): { shown: boolean; absolute: boolean } {
  let absolute = false;
  let shown = false;
  for (const e of elementsOf(card)) {
    if (skip(e)) continue;
    const t = textOf(e).replace(/\s*[—–·•-]\s*$/, "").replace(/^\s*[—–·•-]\s*/, "").trim();
    if (t.length < 3 || t.length > 40) continue;
    if (ABSOLUTE_DATE.test(t)) (shown = true), (absolute = true);
    else if (RELATIVE_DATE.test(t)) shown = true;
  }
  return { shown, absolute };
}

/** An image's rendered size from its width/height attributes or inline style, where the page says. */
export function imageSize(img: El): { w?: number; h?: number } {
  const num = (v: string | undefined) => (v && /^\d+(\.\d+)?(px)?$/.test(v.trim()) ? parseFloat(v) : undefined);
  const style = attr(img, "style") ?? "";
  const sw = /(?:^|;)\s*width:\s*(\d+(?:\.\d+)?)px/i.exec(style)?.[1];
  const sh = /(?:^|;)\s*height:\s*(\d+(?:\.\d+)?)px/i.exec(style)?.[1];
  return { w: num(attr(img, "width")) ?? num(sw), h: num(attr(img, "height")) ?? num(sh) };
}

/**
 * A stand-in the capturing tool drew where the picture was (a grey SVG box labelled with its size,
 * `225x225`): the page as captured shows no picture there, so neither a thumbnail nor an icon counts.
 */
export function capturePlaceholder(img: El): boolean {
  const src = attr(img, "src") ?? "";
  return /^data:image\/svg\+xml/i.test(src) && />\s*\d+x\d+\s*</.test(src);
}

const hasPicture = (img: El) => {
  if (capturePlaceholder(img)) return false;
  const src = attr(img, "src") ?? attr(img, "data-src") ?? "";
  return src !== "" || attr(img, "id")?.startsWith("dimg") === true || attr(img, "data-deferred") !== undefined;
};

/** A 10–32 px image: an icon (favicon, publisher logo). */
export function iconIn(card: El): boolean {
  return elementsOf(card).some((e) => {
    if (e.tagName !== "img" || capturePlaceholder(e)) return false;
    const { w, h } = imageSize(e);
    return (w !== undefined || h !== undefined) && (w ?? h)! <= 32 && (h ?? w)! <= 32 && (w ?? h)! >= 10;
  });
}

/**
 * A picture bigger than an icon: an <img> with a source (or one the page's script fills: `data-deferred`,
 * `id="dimg_…"`) whose declared size, on it or on its box up to two levels out, is over 32 px; or that
 * declares no size anywhere and is not a 1x1 spacer.
 */
export function pictureIn(card: El, skip: (el: El) => boolean = () => false): boolean {
  return elementsOf(card).some((e) => {
    if (e.tagName !== "img" || skip(e) || !hasPicture(e)) return false;
    const deferred = attr(e, "data-deferred") !== undefined || attr(e, "id")?.startsWith("dimg") === true;
    for (const box of [e, parentEl(e), parentEl(parentEl(e) ?? e)]) {
      if (!box) continue;
      const { w, h } = imageSize(box);
      if (w !== undefined || h !== undefined) return (w ?? 0) > 32 || (h ?? 0) > 32;
    }
    const src = attr(e, "src") ?? "";
    if (/^data:image\/gif/i.test(src) && src.length < 200 && !deferred) return false;
    return true;
  });
}

/** Emphasis (<em>, <b>) in the card's text outside its title and URL line. */
export function emphasisIn(card: El, skip: (el: El) => boolean): boolean {
  return elementsOf(card).some((e) => (e.tagName === "em" || e.tagName === "b") && !skip(e) && textOf(e).length >= 2 && !ancestors(e).some(skip));
}

export const RATING_LABEL = /(?:rated|rating|note|ocena|bewertung|valoración|avaliação|classificação|оценка|評価)\D{0,12}\d(?:[.,]\d)?|\d(?:[.,]\d)? (?:out of|sur|de|von|z|из|stars?|étoiles|estrelas|gwiazd)/i;
/** A rating: a `4.5`-like element next to stars, an aria-label naming a rating, or `Rating: 4.5`. */
export function ratingIn(card: El, skip: (el: El) => boolean = () => false): boolean {
  return elementsOf(card).some((e) => {
    if (skip(e)) return false;
    const label = attr(e, "aria-label") ?? "";
    if (RATING_LABEL.test(label) && /\d/.test(label)) return true;
    const t = textOf(e);
    return /^(?:rating|note|ocena|bewertung|valoración|avaliação)\s*:\s*\d(?:[.,]\d)?/i.test(t) && t.length < 60 || /^[1-5][.,]\d$/.test(t);
  });
}

/** A review count: `(1,234)`, `(1.4K)`, `1,234 reviews`, `123 avaliações`. */
export const REVIEWS = /^\(\d[\d.,\s]*(?:[KkMm]|mil|тыс\.?)?\)$|^\d[\d.,\s]*(?:[KkMm])? (?:reviews?|avis|opinii|opinie|rezensionen|reseñas|avaliações|comentários|отзыв\p{L}*|件のクチコミ|votes?)$/iu;
export function reviewsIn(card: El, skip: (el: El) => boolean = () => false): boolean {
  return elementsOf(card).some((e) => {
    if (skip(e)) return false;
    const label = attr(e, "aria-label") ?? "";
    if (/\d[\d.,]* (?:reviews?|avaliações|avis|opinii|rezensionen|reseñas)/i.test(label)) return true;
    return REVIEWS.test(textOf(e).replace(/\s*[·•]\s*$/, ""));
  });
}

/** A price: a currency sign or code next to a number (`$27.00`, `R$ 1.899,00`, `27,00 €`). */
export const PRICE = /(?:US\$|R\$|C\$|A\$|\$|€|£|¥|₽|zł|₹|CHF|EUR|USD|BRL)\s?\d[\d.,\s]*|\d[\d.,\s]*\s?(?:€|₽|zł|руб\.?|EUR|USD)(?!\p{L})/u;
/** The distinct prices (by their digits) shown in elements of their own. */
export function pricesIn(card: El, skip: (el: El) => boolean = () => false): string[] {
  const out = new Set<string>();
  for (const e of elementsOf(card)) {
    if (skip(e)) continue;
    const t = textOf(e);
    if (t.length > 40) continue;
    const m = PRICE.exec(t);
    if (m && m[0].replace(/\D/g, "").length > 0 && t.replace(m[0], "").replace(/[\s·•]|(?:a partir de|from|de|à partir de|od|ab)/gi, "").length <= 6) out.add(m[0].replace(/\D/g, ""));
  }
  return [...out];
}

/** A phone number: 8 to 15 digits in one run of digits, blanks, dots, dashes and brackets. */
export const PHONE = /(?:^|[^\d\p{L}])(\+?\(?\d[\d\s().-]{6,18}\d)(?![\d\p{L}])/u;
export function phoneIn(text: string): boolean {
  for (const m of text.matchAll(new RegExp(PHONE, "gu"))) {
    const digits = m[1]!.replace(/\D/g, "");
    if (digits.length < 8 || digits.length > 15) continue;
    if (/^\d{4}[/.-]\d{1,2}[/.-]\d{1,2}$/.test(m[1]!.trim()) || /^\d{1,2}[/.]\d{1,2}[/.]\d{2,4}$/.test(m[1]!.trim())) continue;
    if (/\d[.,]\d{3}[.,]\d{3}/.test(m[1]!) && !/[\s()-]/.test(m[1]!)) continue; // a big number, not a phone
    // Phone digits come in groups of two or more (a lone `+1`/`1` country code aside): `$121 3.9(796)` is a price and a rating.
    const groups = m[1]!.replace(/^\+?1[\s-]/, "").split(/[\s().-]+/).filter(Boolean);
    if (groups.some((g) => g.length < 2)) continue;
    return true;
  }
  return false;
}

/** Opening hours: open/closed words, or a time of day next to one. */
export const HOURS =
  /\b(?:open(?:s|ing)?(?: 24 hours)?|closed|closes|closing soon|ouvert|fermé|ferme bientôt|otwarte|zamknięte|geöffnet|geschlossen|öffnet|schließt|abierto|cerrado|aberto|fechado|abre|fecha|aperto|chiuso|chiude|apre|открыто|закрыто|営業中|営業時間外)\b|営業中|営業時間外|24 hours|24 heures|24 godziny|24 horas|24 Stunden/iu;

/** Dine-in / takeout / delivery style service options, in the languages of the captured pages. */
export const SERVICE_OPTIONS =
  /\b(?:dine-in|takeout|take-out|delivery|no-contact delivery|curbside pickup|in-store (?:shopping|pickup)|on-site services|online appointments|drive-through|sur place|à emporter|livraison|na miejscu|na wynos|dostawa|vor ort|zum mitnehmen|lieferung|para llevar|entrega|no local|para viagem)\b/iu;

export const YEARS_IN_BUSINESS = /\d+\+? (?:years in business|anos no mercado|ans d'activité|lat działalności|jahre(?:n)? (?:im geschäft|geschäftstätigkeit))/iu;

/** A street address segment: words and a house number, or a postcode next to a place name. */
export const ADDRESS =
  /^(?=.{5,90}$)(?:\d{1,5}[a-z]?,? [\p{L}'’.\- ]{3,}|[\p{L}'’.\- ]{3,},? \d{1,5}[a-z]?\b|.*\b\d{5}\b.*|[\p{L} .'’-]{3,}, [A-Z]{2}|.*(?:\b(?:st|ave|rd|blvd|dr|ln|street|avenue|road|rue|av|bd|ul|str|straße|strasse|calle|via|rua|вул|ул)\.?)\b.*)$/iu;
