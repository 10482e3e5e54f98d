/**
 * The one way parsers read HTML: parse5 builds a domhandler tree (the same stack cheerio uses) and
 * css-select runs precompiled CSS selectors over it. Parsers keep their selectors as named
 * constants beside them and query inside the smallest subtree that holds what they want.
 */
import { compile, selectAll, selectOne } from "css-select";
import type { AnyNode, Document, Element } from "domhandler";
import { isTag, isText } from "domhandler";
import { parse } from "parse5";
import { adapter } from "parse5-htmlparser2-tree-adapter";

export type { AnyNode, Document, Element };

export function parseHtml(html: string): Document {
  return parse(html, { treeAdapter: adapter }) as unknown as Document;
}

type Root = AnyNode | AnyNode[];
const compiled = new Map<string, ReturnType<typeof compile>>();

/** A selector compiled once and cached: parsers call the same few selectors on every page. */
function query(selector: string): ReturnType<typeof compile> {
  let fn = compiled.get(selector);
  if (!fn) {
    fn = compile(selector);
    compiled.set(selector, fn);
  }
  return fn;
}

export function all(selector: string, root: Root): Element[] {
  return selectAll(query(selector), root) as Element[];
}

export function first(selector: string, root: Root): Element | null {
  return selectOne(query(selector), root) as Element | null;
}

export function attr(el: Element | null | undefined, name: string): string | undefined {
  return el?.attribs[name];
}

export function hasClass(el: Element, cls: string): boolean {
  return (el.attribs.class ?? "").split(/\s+/).includes(cls);
}

const SKIP_TEXT = new Set(["script", "style", "noscript", "template"]);
const BLOCK = new Set(["br", "div", "p", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "table"]);

/**
 * Visible text of a node with whitespace folded. Block elements and `<br>` separate words, so
 * `<div>a</div><div>b</div>` reads "a b", never "ab". Scripts and styles are skipped.
 */
export function text(node: AnyNode | null | undefined): string {
  if (!node) return "";
  const parts: string[] = [];
  const walk = (n: AnyNode): void => {
    if (isText(n)) parts.push(n.data);
    else if (isTag(n)) {
      if (SKIP_TEXT.has(n.name)) return;
      const block = BLOCK.has(n.name);
      if (block) parts.push(" ");
      for (const c of n.children) walk(c);
      if (block) parts.push(" ");
    } else if ("children" in n) for (const c of (n as Document).children) walk(c);
  };
  walk(node);
  return parts.join("").replace(/\s+/g, " ").trim();
}

/** Text of the first match, or undefined when there is none or it is empty. */
export function textOf(selector: string, root: Root): string | undefined {
  const t = text(first(selector, root));
  return t || undefined;
}

/** Ancestors from the parent up, nearest first. */
export function* ancestors(el: AnyNode): Generator<Element> {
  for (let p = el.parent; p; p = p.parent) if (isTag(p)) yield p;
}

export function closest(el: AnyNode, predicate: (e: Element) => boolean): Element | undefined {
  for (const a of ancestors(el)) if (predicate(a)) return a;
  return undefined;
}

const GOOGLE_HOST = /^(?:https?:)?\/\/(?:www\.)?google\.[a-z.]+(?=\/)/i;

/**
 * The real target of a result link. Unwraps the upstream's redirectors (`/url?q=`, `/url?url=`,
 * `/aclk?…&adurl=`), makes relative links absolute on `base`, and leaves other links as they are.
 */
export function targetUrl(href: string | undefined, base = "https://www.google.com"): string | undefined {
  if (!href || href.startsWith("javascript:") || href === "#") return undefined;
  let url: URL;
  try {
    url = new URL(href, base);
  } catch {
    return undefined;
  }
  const isGoogle = GOOGLE_HOST.test(`${url.protocol}//${url.host}/`);
  if (isGoogle && (url.pathname === "/url" || url.pathname === "/interstitial")) {
    const inner = url.searchParams.get("q") ?? url.searchParams.get("url");
    if (inner && /^https?:\/\//i.test(inner)) return inner;
  }
  if (isGoogle && url.pathname.startsWith("/aclk")) {
    const inner = url.searchParams.get("adurl");
    if (inner && /^https?:\/\//i.test(inner)) return inner;
  }
  return url.href;
}

/** `1,234` / `1.234` / `(1.4K)` / `2 mil` → a whole number, or undefined. */
export function parseCount(raw: string | undefined): number | undefined {
  if (!raw) return undefined;
  const m = raw.replace(/\u00a0/g, " ").match(/(\d[\d.,\s]*)\s*([KkMm])?/);
  if (!m?.[1]) return undefined;
  const digits = m[1].trim();
  const suffix = m[2]?.toLowerCase();
  if (suffix) {
    const n = Number(digits.replace(",", "."));
    return Number.isFinite(n) ? Math.round(n * (suffix === "k" ? 1_000 : 1_000_000)) : undefined;
  }
  const n = Number(digits.replace(/[.,\s]/g, ""));
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
  const m = raw?.replace(/\u00a0/g, " ").match(/\d[\d.,\s]*/);
  if (!m) return undefined;
  let s = m[0].trim().replace(/\s/g, "");
  const lastComma = s.lastIndexOf(",");
  const lastDot = s.lastIndexOf(".");
  if (lastComma > lastDot) {
    // 1.299,90 or 12,50: comma is the decimal mark when two digits follow it.
    s = /,\d{1,2}$/.test(s) ? s.replace(/\./g, "").replace(",", ".") : s.replace(/,/g, "");
  } else {
    s = /\.\d{1,2}$/.test(s) ? s.replace(/,/g, "") : s.replace(/[.,]/g, "");
  }
  const n = Number(s);
  return Number.isFinite(n) ? n : undefined;
}
