/**
 * Result cards found by what survives a redesign, not by class names: in a results region (found by
 * id or role), every link to another site that carries a heading (or, on pages without headings, a
 * title of its own) is a result; its card is the largest element around it that holds no other
 * result; the card's text comes apart into pieces, the runs of text each element holds directly,
 * in document order. Parsers then tell the pieces apart by their shape (a date, a price, a rating)
 * and their place (the publisher above the headline, the snippet below).
 *
 * Class names appear nowhere here: a page whose every class attribute was renamed or dropped reads
 * the same.
 */
import { isTag, isText } from "domhandler";
import type { AnyNode, Element } from "./tree.js";
import { attr, text } from "./text.js";

/** A run of text an element holds directly (with its inline children), and that element. */
export interface Piece {
  el: Element;
  text: string;
}

export interface Card {
  /** The result's link (the anchor holding or beside its heading). */
  anchor: Element;
  href: string;
  /** The heading naming the result, when the card has one. */
  heading?: Element;
  /** The largest element around the anchor that holds no other result. */
  root: Element;
}

const HEADING_TAGS = new Set(["h1", "h2", "h3", "h4", "h5", "h6"]);
/** Elements whose text is never a piece: scripts, styles, and text only screen readers get. */
const SKIP_TAGS = new Set(["script", "style", "noscript", "template", "svg"]);
/** Inline elements: their text belongs to the piece of the element around them. */
const INLINE_TAGS = new Set(["span", "b", "strong", "em", "i", "u", "mark", "small", "sub", "sup", "wbr", "abbr", "cite", "q", "time", "bdi", "bdo", "font", "img", "g-img"]);

export function isHeading(el: Element): boolean {
  return HEADING_TAGS.has(el.name) || attr(el, "role") === "heading";
}

/** The first heading at or inside `el`. */
export function headingIn(el: Element): Element | undefined {
  if (isHeading(el)) return el;
  for (const c of el.children) {
    if (!isTag(c)) continue;
    const h = headingIn(c);
    if (h) return h;
  }
  return undefined;
}

function* elements(root: Element): Generator<Element> {
  for (const c of root.children) {
    if (!isTag(c) || SKIP_TAGS.has(c.name)) continue;
    yield c;
    yield* elements(c);
  }
}

export interface CardOptions {
  /** The result's target from an anchor's href (undefined: not a result link). */
  target: (href: string) => string | undefined;
  /** Whether a link without a heading can be a result (light pages title results with plain text, image tiles with a picture). */
  headless?: boolean;
}

/**
 * The result cards of a region: each link to a result carrying a heading (or any result link when
 * `headless`), once per target, widened to the largest element around it that holds no other
 * result's link.
 */
export function resultCards(region: Element, opts: CardOptions): Card[] {
  const found: { anchor: Element; href: string; heading?: Element }[] = [];
  const seen = new Set<string>();
  for (const el of elements(region)) {
    if (el.name !== "a") continue;
    const href = attr(el, "href");
    const target = href ? opts.target(href) : undefined;
    if (!target || seen.has(target)) continue;
    const heading = headingIn(el) ?? headingBeside(el);
    if (!heading && (!opts.headless || (!text(el) && !holdsPicture(el)))) continue;
    seen.add(target);
    found.push({ anchor: el, href: target, heading });
  }
  const anchors = new Set(found.map((f) => f.anchor));
  const targets = new Map(found.map((f) => [f.anchor, f.href]));
  return found.map((f) => ({ ...f, root: widen(f.anchor, region, anchors, targets) }));
}

/**
 * The card around each of `anchors` (elements that each stand for one result, such as the links
 * holding a result's picture): the largest element around it that holds no other of them.
 */
export function cardsAround(anchors: readonly Element[], region: Element): Element[] {
  const set = new Set(anchors);
  const own = new Map(anchors.map((a, i) => [a, String(i)]));
  return anchors.map((a) => widen(a, region, set, own));
}

function holdsPicture(el: Element): boolean {
  for (const d of elements(el)) if (d.name === "img") return true;
  return false;
}

/** A heading just around the link (`<h3><a>title</a></h3>`). */
function headingBeside(a: Element): Element | undefined {
  for (let el = a.parent, level = 0; el && isTag(el) && level < 3; el = el.parent, level++) if (isHeading(el)) return el;
  return undefined;
}

/** Climbs from the anchor while the parent holds no other result link (a link to the same target is the same result). */
function widen(anchor: Element, region: Element, anchors: Set<Element>, targets: Map<Element, string>): Element {
  let card = anchor;
  const own = targets.get(anchor);
  while (card.parent && isTag(card.parent) && card !== region && card.parent !== region) {
    const parent = card.parent;
    if (holdsOther(parent, card, anchors, targets, own)) break;
    card = parent;
  }
  return card;
}

function holdsOther(el: Element, except: Element, anchors: Set<Element>, targets: Map<Element, string>, own: string | undefined): boolean {
  for (const c of el.children) {
    if (!isTag(c) || c === except) continue;
    if (anchors.has(c) && targets.get(c) !== own) return true;
    for (const d of elements(c)) if (anchors.has(d) && targets.get(d) !== own) return true;
  }
  return false;
}

/**
 * The card's pieces of text in document order: each run of text between line breaks and blocks
 * (`<br>`, a link, a `div`, a paragraph…), inline elements (`span`, `b`, `em`, `cite`…) joined into the run
 * around them, is one piece, named by the element holding it. Text hidden from readers
 * (`aria-hidden`) is left out: cards repeat prices and dates for screen readers that way.
 */
export function pieces(root: Element): Piece[] {
  const out: Piece[] = [];
  const visit = (el: Element) => {
    if (SKIP_TAGS.has(el.name) || attr(el, "aria-hidden") === "true") return;
    let run = "";
    const flush = () => {
      const t = run.replace(/\s+/g, " ").trim();
      if (t && !/^[\s.·•|–—-]*$/.test(t)) out.push({ el, text: t });
      run = "";
    };
    for (const c of el.children) {
      if (isText(c)) run += c.data;
      else if (isTag(c)) {
        if (c.name === "br") flush();
        else if (isInline(c)) run += inlineText(c);
        else {
          flush();
          visit(c);
        }
      }
    }
    flush();
  };
  visit(root);
  return out;
}

/** An inline element holding only text and other inline elements. */
function isInline(el: Element): boolean {
  if (!INLINE_TAGS.has(el.name)) return false;
  for (const c of el.children) if (isTag(c) && (c.name === "br" || !isInline(c))) return false;
  return true;
}

function inlineText(el: AnyNode): string {
  if (isText(el)) return el.data;
  if (!isTag(el) || SKIP_TAGS.has(el.name) || attr(el, "aria-hidden") === "true") return "";
  return el.children.map(inlineText).join("");
}

/**
 * Dates as result cards print them, in the languages captured: relative (`1 day ago`, `vor 2 Tagen`,
 * `il y a 3 heures`, `hace 5 días`, `há 2 dias`, `3 ore fa`, `2 godz. temu`, `5 часов назад`,
 * `3 uur geleden`, `2 時間前`, `2h`) and absolute (`Jun 13, 2025`, `13 juin 2025`, `13.06.2025`,
 * `2025-06-13`, `2025年6月13日`).
 */
export const DATE_TEXT = new RegExp(
  [
    String.raw`^\d+\s*(?:s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?|d|days?|w|wk|wks|weeks?|mo|months?|y|yr|yrs|years?)\s+ago$`,
    String.raw`^\d+\s*(?:s|m|min|h|d|w|mo|y)$`,
    String.raw`^(?:an?|one)\s+(?:second|minute|hour|day|week|month|year)\s+ago$`,
    String.raw`^vor\s+(?:\d+|einer?|einem)\s+\p{L}+$`,
    String.raw`^il\s+y\s+a\s+\d+\s*\p{L}+\.?$`,
    String.raw`^hace\s+\d+\s*\p{L}+\.?$`,
    String.raw`^há\s+\d+\s*\p{L}+\.?$`,
    String.raw`^\d+\s*\p{L}+\.?\s+(?:atrás|fa|temu|назад|geleden|önce|sedan|siden)$`,
    String.raw`^\d+\s*(?:秒|分|分钟|小時|小时|時間|日|天|週間|周|か月|ヶ月|个月|年)前$`,
    String.raw`^(?:yesterday|today|gestern|heute|hier|aujourd'hui|ayer|hoy|ontem|hoje|ieri|oggi|wczoraj|dzisiaj|вчера|сегодня|gisteren|vandaag|昨日|今日|昨天|今天)$`,
    String.raw`^\p{L}{3,9}\.?\s+\d{1,2},?\s+\d{4}$`,
    String.raw`^\d{1,2}\.?\s+\p{L}{3,9}\.?\s+\d{4}$`,
    String.raw`^\d{1,2}[./-]\d{1,2}[./-]\d{2,4}$`,
    String.raw`^\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+Z?)?$`,
    String.raw`^\d{4}\s*年\s*\d{1,2}\s*月\s*\d{1,2}\s*日$`,
    String.raw`^\d{4}\.\s*\d{1,2}\.\s*\d{1,2}\.?$`,
  ].join("|"),
  "iu",
);

export function isDateText(s: string): boolean {
  return DATE_TEXT.test(s.replace(/\s+/g, " ").trim());
}

/** The card's images that are pictures, not icons: an icon declares itself 24 pixels or smaller. */
export function pictures(root: Element): { pictures: Element[]; icons: Element[] } {
  const out = { pictures: [] as Element[], icons: [] as Element[] };
  for (const el of elements(root)) {
    if (el.name !== "img") continue;
    const size = Math.max(Number(attr(el, "width")) || 0, Number(attr(el, "height")) || 0);
    (size > 0 && size <= 24 ? out.icons : out.pictures).push(el);
  }
  return out;
}
