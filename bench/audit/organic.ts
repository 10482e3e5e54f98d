/**
 * The organic-result audit of issue 25: what an organic result's card shows, told from the card's
 * HTML by generic shapes (a date in front of the snippet text, a rating or price line, a small image
 * beside the site name, extra links, bold words, a redirect href), not by the class names the parser
 * reads; on every shared web page (web/, web-mobile/, web-nojs/), for each field family, how many
 * results' cards show it and how many of those our JSON gives it to, and how many results have it in
 * the JSON where the card shows no such shape (to read by hand: the shapes are simple, so some are
 * the detector's misses, not the parser's inventions). packages/upstream/test/parsers/organic-fields.test.ts
 * holds floors under the figures.
 *
 * `node_modules/.bin/tsx bench/audit.ts organic` (`--pages` adds a line per page and field;
 * `--missed <field>` lists the results whose card shows the field and whose JSON lacks it).
 */
import { all, ancestors, attr, type AnyNode, type Document, type Element, text } from "../../packages/upstream/src/html/index.js";
import { DATE_TEXT } from "../../packages/upstream/src/html/cards.js";
import { targetUrl } from "../../packages/upstream/src/values.js";
import { FIELDS, hasField, type AuditedResult, type Field } from "./organic-data.js";
import { filesIn, PAGE_DIRS, readPages, type CapturedPage, type PageReader } from "./pages.js";

export { FIELDS, hasField, type AuditedResult, type Field };

/** Every organic result of a shared web page, whether its card was found, and what the card shows. */
export function auditPage(page: CapturedPage): AuditedResult[] {
  const { organic_results } = page.webSearch;
  const cards = cardsOf(page.doc);
  return organic_results.map((result) => {
    const card = cards.find((c) => c.link === result.link && c.title === result.title);
    return { page: page.file, result, card: card !== undefined, shows: card ? [...shownFields(card.card, card.anchor)] : [] };
  });
}

/** The organic audit's side of a walk over the pages (pages.ts): every web page's results, in page order. */
export function organicReader(): PageReader & { results(): AuditedResult[] } {
  const files = filesIn(...PAGE_DIRS.web);
  const byPage = new Map<string, AuditedResult[]>();
  return {
    files,
    read: (page) => void byPage.set(page.file, auditPage(page)),
    results: () => files.flatMap((f) => byPage.get(f) ?? []),
  };
}

/** Every organic result of the shared web pages, audited (plain data: organic-fields.test.ts reads it through its in-node.ts). */
export function organicResults(): AuditedResult[] {
  const reader = organicReader();
  readPages([reader]);
  return reader.results();
}

/** The audit's table (and, asked, a line per page and field, and the results missing a field). */
export function formatOrganic(results: AuditedResult[], pageCount: number, opts: { pages?: boolean; missed?: string } = {}): string {
  const out: string[] = [];
  const shows = (r: AuditedResult, f: string) => r.shows.includes(f as Field);
  const has = (r: AuditedResult, f: string) => hasField(r.result, f as Field);
  const withCard = results.filter((r) => r.card);
  out.push(`${results.length} organic results on ${pageCount} pages (${withCard.length} with their card found)`, "");
  const rows = FIELDS.map((field) => {
    const shown = withCard.filter((r) => shows(r, field));
    const found = shown.filter((r) => has(r, field));
    const extra = withCard.filter((r) => !shows(r, field) && has(r, field));
    const share = shown.length ? `${((found.length / shown.length) * 100).toFixed(0)}%` : "-";
    return [field, String(shown.length), String(found.length), share, String(extra.length)];
  });
  const head = ["field", "cards showing it", "JSON has it", "found", "JSON has it, no shape seen"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join(" | ")} |`;
  out.push(line(head), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...rows.map(line));
  if (opts.pages) {
    out.push("");
    for (const page of new Set(results.map((r) => r.page))) {
      const on = withCard.filter((r) => r.page === page);
      const cells = FIELDS.map((f) => `${f} ${on.filter((r) => shows(r, f) && has(r, f)).length}/${on.filter((r) => shows(r, f)).length}`);
      out.push(`${page.padEnd(58)} ${String(on.length).padStart(3)} results  ${cells.join("  ")}`);
    }
  }
  if (opts.missed) {
    const missed = opts.missed;
    out.push("");
    for (const r of withCard.filter((x) => shows(x, missed) && !has(x, missed))) out.push(`${r.page}  #${r.result.position} ${r.result.title.slice(0, 60)}`);
  }
  return out.join("\n");
}

/** An element (domhandler's `isTag`: only elements carry attributes; domhandler is no dependency of the root package). */
const isTag = (n: AnyNode): n is Element => "attribs" in n;

const HEADING = 'h3, [role="heading"][aria-level="3"], span.CVA68e';

interface TitledCard {
  anchor: Element;
  title: string;
  link: string;
  card: Element;
}

/** Every link on the page titled by a heading, with its card. */
function cardsOf(doc: Document): TitledCard[] {
  const titled: { anchor: Element; title: string; link: string }[] = [];
  for (const heading of all(HEADING, doc)) {
    const anchor = [...ancestors(heading)].slice(0, 6).find((a) => a.name === "a");
    if (!anchor) continue;
    const link = destination(attr(anchor, "href"));
    if (link) titled.push({ anchor, title: text(heading), link });
  }
  const under = new Map<Element, number>();
  for (const { anchor } of titled) for (const a of ancestors(anchor)) under.set(a, (under.get(a) ?? 0) + 1);
  return titled.map((t) => {
    let card = t.anchor;
    for (const a of ancestors(t.anchor)) {
      if ((under.get(a) ?? 0) > 1 || a.name === "body") break;
      card = a;
    }
    return { ...t, card };
  });
}

/** Where a link leads: the redirect's target (`q` or `url`), or the link itself. */
function destination(href: string | undefined): string | undefined {
  const link = targetUrl(href);
  if (!link) return undefined;
  if (!/^https?:\/\/(?:www\.)?google\.[a-z.]+\/url\?/i.test(link)) return link;
  const inner = new URL(link).searchParams.get("url");
  return inner && /^https?:\/\//i.test(inner) ? inner : link;
}

/** A redirect through the engine: `/url?q=…` or `https://www.google.<tld>/url?…`. */
export const REDIRECT_HREF = /^(?:https?:\/\/(?:www\.)?google\.[a-z.]+)?\/url\?/i;

/** Dates in front of a snippet: `Mar 3, 2024 —`, `7 days ago —`, `21 juin 2019 -`, `Mar 2, 2023 ·` (basic page). */
const LEADING_DATE = /^(.{1,30}?)(?:\s*[—–]\s*|\s*[·-]\s)/u;
/** Dates `DATE_TEXT` does not know: `2025/05/09` (ja), `21 сент. 2023 г.` (ru). */
const MORE_DATES = /^\d{4}\/\d{1,2}\/\d{1,2}$|^\d{1,2}\s+\p{L}+\.?\s+\d{4}\s*г\.?$/u;
const isDate = (s: string) => DATE_TEXT.test(s) || MORE_DATES.test(s);
function startsWithDate(line: string): boolean {
  const m = line.match(LEADING_DATE);
  return !!m && isDate(m[1]!.trim());
}
/** A facts row: `Introduced: 15th century`, `Budget: $63 million`. */
const FACT_ROW = /^\p{Lu}[^:·]{1,30}\s?:\s+\S/u;

/** A rating, a review count, a price or stock line as cards show them under the title. */
const RICH_LINE =
  /(?:Rating|Note|Bewertung|Valoración|Ocena|Оценка|評価)\s*:?\s*\d[.,]?\d?|\d[.,]\d\s*\(\d[\d.,\s]*\)|\d[\d.,]*\s*(?:reviews?|votes?|avis|Rezensionen|opiniones|recenzji|отзыв\p{L}*)\b|(?:[$€£₽¥￥]\s?\d|\d[\d\s.,]*\s?(?:[$€£₽¥￥]|руб|USD|EUR))|\bIn stock\b|\bPrice range\b|Cited by \d|被引用数/iu;

/**
 * A line of ratings, prices or stock under a title: a rating or review count on a short line, or a
 * short line of `·`-separated parts one of which is a price, or a price alone. A longer line, or one
 * cut short (`…`), is a snippet that mentions a price.
 */
function isRichLine(line: string): boolean {
  const l = line.replace(/\u200e/g, "").trim();
  if (l.length > 120 || /(?:\.\.\.|…)$/u.test(l) || startsWithDate(l)) return false;
  if (/(?:Rating|Note|Bewertung|Рейтинг|Оценка)\s*:?\s*\d|\d[.,]?\d?\s*\/\s*(?:5|10)\b/iu.test(l)) return true;
  const parts = l.split(/\s*·\s*/u);
  if (parts.length > 1 && parts.every((p) => p.length <= 40)) return RICH_LINE.test(l);
  return l.length <= 30 && RICH_LINE.test(l);
}

function shownFields(card: Element, anchor: Element): Set<Field> {
  const shows = new Set<Field>();
  const href = attr(anchor, "href") ?? "";
  // The title link goes through the engine's redirect (its href), or reports the click to it (its `ping`).
  if ([attr(anchor, "href"), attr(anchor, "ping")].some((h) => h && REDIRECT_HREF.test(h))) shows.add("redirect_link");
  // Text of the card outside its title link, line by line (blocks split lines).
  const lines = cardLines(card, anchor);
  if (lines.some(startsWithDate)) shows.add("date");
  const factRows = lines.filter((l) => l.length <= 120 && FACT_ROW.test(l) && !/(?:\.\.\.|…)$/u.test(l));
  if (lines.some(isRichLine) || factRows.length >= 2 || all('[aria-label^="Rated"], [aria-label^="Note"], [aria-label^="Bewertet"]', card).length) shows.add("rich_snippet");
  for (const img of all("img", card)) {
    const size = Math.max(Number(attr(img, "width")) || 0, Number(attr(img, "height")) || 0, styleSize(img));
    if (size > 0 && size <= 32) shows.add("favicon");
    else if (size > 32 || (!size && !inside(img, anchor))) shows.add("thumbnail");
  }
  // Another page, or a section of the result's page (`#History`); not the result's page again, nor
  // a moment of its video (`&t=99`).
  const page = (url: string | undefined) => url?.replace(/([?&])t=\d+s?(?=&|#|$)/, "$1").replace(/[?&](?=#|$)/, "");
  const own = page(destination(href));
  const extra = (a: Element) => a !== anchor && !inside(a, anchor) && isSiteLink(a) && page(destination(attr(a, "href"))) !== own;
  if (all("a[href]", card).some((a) => extra(a) && ownLine(a, card))) {
    shows.add("sitelinks");
  }
  if (all("em, b", card).some((b) => !inside(b, anchor) && !insideCite(b) && text(b))) shows.add("snippet_highlighted_words");
  return shows;
}

/** The card's lines of text outside the title link: each block element's own text. */
export function cardLines(card: Element, anchor: Element): string[] {
  const lines: string[] = [];
  let line = "";
  const BLOCKS = new Set(["div", "br", "li", "tr", "td", "p", "h3", "table", "ul", "ol"]);
  const visit = (el: Element) => {
    if (el === anchor || ["script", "style", "noscript"].includes(el.name)) return;
    for (const c of el.children) {
      if (isTag(c)) {
        const block = BLOCKS.has(c.name);
        if (block) flush();
        visit(c);
        if (block) flush();
      } else if (c.type === "text") line += (c as unknown as { data: string }).data;
    }
  };
  const flush = () => {
    const t = line.replace(/\s+/g, " ").trim();
    if (t) lines.push(t);
    line = "";
  };
  visit(card);
  flush();
  return lines;
}

function styleSize(img: Element): number {
  const m = (attr(img, "style") ?? "").match(/(?:height|width)\s*:\s*(\d+)px/i);
  return m ? Number(m[1]) : 0;
}

/** A link to another page of the result's site or elsewhere: not the engine's own links (cache, similar, translate, about). */
function isSiteLink(a: Element): boolean {
  const href = attr(a, "href") ?? "";
  const link = destination(href);
  if (!link || /^https?:\/\/(?:[a-z]+\.)?google\.[a-z.]+\//i.test(link) || /webcache\.googleusercontent|translate\.google/.test(link)) return false;
  // "Read more": the result's own page, at the passage the snippet quotes.
  if (link.includes("#:~:text=")) return false;
  if (insideCite(a)) return false;
  return !!text(a) && !/^(?:Cached|Similar|Translate this page|En cache|Similaires|Im Cache|Ähnliche Seiten|Traduire cette page)$/i.test(text(a));
}

/**
 * Whether a link is a line of the card by itself (or with other links only): a link inside a
 * sentence, a facts row or beside a count is part of that text, not a link the result offers.
 */
function ownLine(a: Element, card: Element): boolean {
  const BLOCKS = ["div", "li", "p", "td", "tr", "table", "ul", "ol", "h3"];
  const line = [...ancestors(a)].find((e) => BLOCKS.includes(e.name) || e === card) ?? card;
  let rest = text(line);
  for (const link of all("a", line)) rest = rest.replace(text(link), "");
  return /^[\s\u200e·|•,–-]*$/u.test(rest) && !/^\d[\d.,]*\+?\s+\p{L}+$/u.test(text(a));
}

function insideCite(el: Element): boolean {
  return [...ancestors(el)].some((a) => a.name === "cite");
}

function inside(el: Element, ancestor: Element): boolean {
  return [...ancestors(el)].includes(ancestor);
}
