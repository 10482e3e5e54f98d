/**
 * Business cards → local places (SPEC §2.5 local item). The local pack of a web results page and the
 * local results page (`tbm=lcl`) are built from the same card: a `.rllt__details` block of text
 * lines under the business name, in every layout captured from 2018 to 2026, desktop and mobile.
 * So both entry points find the cards by that block, wherever it is in the document, and read the
 * lines by what they say rather than by their (obfuscated, ever-changing) class names:
 *
 *   name · rating line `4.3(291) · $$ · Coffee shop` · address line `2525 Arapahoe Ave · (303) 447-1040`
 *   · opening status `Closed ⋅ Opens 8 AM` · extras (description, service options, a review quote).
 *
 * Mobile cards put the category on the address line instead (`Coffee shop · 1594 Market St`).
 */
import type { LocalBlocks, LocalPlace } from "@serp/shared";
import { isTag } from "domhandler";
import {
  all,
  ancestors,
  attr,
  first,
  hasClass,
  landmarks,
  matches,
  parseCount,
  parseHtml,
  parseRating,
  scan,
  targetUrl,
  text,
  type Document,
  type Element,
  type Scan,
} from "../dom.js";

/** The card, in every layout: its lines live in `.rllt__details`. */
const CARD = {
  details: ".rllt__details",
  /** Classes of the element that holds a whole card (desktop tile 2019–2026, mobile tile 2018–2019). */
  rootClasses: ["VkpGBb", "rllt__tile-content"],
  /** Business name: desktop `.dbg0pd`, mobile 2018–2019 heading, mobile 2023 `.tNxQIb`. */
  title: '.dbg0pd, [role="heading"], .tNxQIb',
  /** The "Website" button beside the card (desktop 2021–2024). */
  website: "a.L48Cpd[href]",
  anyLink: "a[href]",
  /** Star widgets and rating numbers of the rating line (2019 `g-review-stars`/`.BTtC6e`, later `.z3HNkc`…). */
  ratingMarks: "g-review-stars, .z3HNkc, .Y0A0hc, .yi40Hd, .YDIN4c, .BTtC6e, .MvDXgc",
  /** Lines that are never name, rating, address or hours: descriptions, service options, review quotes. */
  extraLineClasses: ["pJ3Ci", "dXnVAb", "RGCvMc"],
} as const;

/** Every card's details block on the page, found in the page walk. */
const cardDetails = landmarks(CARD.details);
/** What a card is read from, found in one scan of the card. */
const CARD_PARTS = [CARD.title, CARD.website, CARD.anyLink];
/** A line, or an element in it, carrying one of the extra-line classes. */
const EXTRA_LINE = CARD.extraLineClasses.map((c) => `.${c}`).join(", ");

/** The "More places" / "View all" link under a pack (mobile 2018: a `data-href` footer). */
const MORE = {
  link: "a[href], [data-href]",
  href: /[?&](?:tbm=lcl|rflfq=1|udm=1)(?:&|$)|\/localservices\/prolist/,
  /** How far above the last card the link may sit (mobile cards are nested deep in carousels). */
  maxClimb: 16,
} as const;

const SEPARATOR = /\s*·\s*/;
/** Rating first on its line: `4.3(291)`, `3,9 (21)`, `5.0 ·`. */
const RATING_LINE = /^[0-5][.,]\d\s*(?:\(|·|$)/;
const RATING = /^([0-5](?:[.,]\d)?)\s*(?:\(([^)]*)\))?/;
const NO_REVIEWS =
  /^(?:no reviews|aucun avis|keine (?:rezensionen|bewertungen|erfahrungsberichte)|nessuna recensione|sin reseñas|sem avaliações|brak opinii|geen reviews)$/i;
/** `$$`, `€€€`, `$10–20`: the price level, not a category. */
const PRICE = /^\p{Sc}[\p{Sc}\d\s.,–-]*\+?$/u;
/** Opening status: the upstream joins its parts with `⋅` (U+22C5), or it starts with a status word. */
const HOURS_DOT = /⋅/;
const HOURS_WORD =
  /^(?:open(?:s|ing)?|closed?|closes|closing|temporarily|permanently|24 hours|geöffnet|geschlossen|öffnet|schließt|vorübergehend|dauerhaft|ouvert|ouvre|fermé|fermée|ferme|aperto|apre|chiuso|chiude|abierto|abre|cerrado|cierra|aberto|fechado|otwarte|zamknięte|geopend|gesloten)(?=$|[\s·⋅,.:])/iu;
/** `(303) 447-1040`, `031 330 22 90`, `+33 1 84 14 90 68`: digits and phone punctuation only, 6+ digits. */
const PHONE = /^(?=(?:\D*\d){6})[+(]?\d[\d\s().\/-]*\d$/;
const YEARS_IN_BUSINESS = /\byears? in business\b|\bans d'activité\b|\bJahre? (?:in der Branche|am Markt)\b/i;
/** `In the Westfield Garden State Plaza`: where the business sits, after its address. */
const LOCATED_IN = /^(?:In|Dans|Im|Nel|Nella|En)\s+\S/;
const GOOGLE_HOST = /(?:^|\.)(?:google\.[a-z.]+|googleusercontent\.com|gstatic\.com)$/i;

/** The local pack of a web results page: its places and the link to the full local results. */
export function extractLocalPack(doc: Document): { places: LocalPlace[]; more_locations_link?: string } | undefined {
  const cards = findCards(doc);
  if (cards.length === 0) return undefined;
  const places = readPlaces(cards);
  if (places.length === 0) return undefined;
  const more = moreLink(cards[cards.length - 1]!.root);
  return more ? { places, more_locations_link: more } : { places };
}

/** The local results page (`tbm=lcl`): every business card in the document. */
export function parseLocal(html: string): LocalBlocks {
  return { local_results: readPlaces(findCards(parseHtml(html))) };
}

interface Card {
  root: Element;
  details: Element;
}

function findCards(doc: Document): Card[] {
  const seen = new Set<Element>();
  const cards: Card[] = [];
  for (const details of cardDetails(doc)) {
    const root = cardRoot(details);
    if (seen.has(root)) continue;
    seen.add(root);
    cards.push({ root, details });
  }
  return cards;
}

/** The nearest card tile around the details; failing that the link wrapping them (mobile 2023). */
function cardRoot(details: Element): Element {
  let link: Element | undefined;
  for (const a of ancestors(details)) {
    if (CARD.rootClasses.some((c) => hasClass(a, c))) return a;
    if (!link && a.name === "a") link = a;
  }
  return link ?? (details.parent && isTag(details.parent) ? details.parent : details);
}

function readPlaces(cards: Card[]): LocalPlace[] {
  const places: LocalPlace[] = [];
  for (const card of cards) {
    const place = readCard(card, places.length + 1);
    if (place) places.push(place);
  }
  return places;
}

interface Line {
  el: Element;
  text: string;
  /** A description, service options or a review quote: never name, rating, address or hours. */
  extra: boolean;
}

function readCard({ root, details }: Card, position: number): LocalPlace | undefined {
  const card = scan(root, CARD_PARTS);
  const titleEl = card.first(CARD.title);
  const title = text(titleEl);
  if (!titleEl || !title) return undefined;
  const place: LocalPlace = { position, title };

  const lines = cardLines(details, titleEl);
  const ratingAt = lines.findIndex(isRatingLine);
  if (ratingAt >= 0) Object.assign(place, readRatingLine(lines[ratingAt]!.text));

  // The address line follows the rating line (or the name when there is no rating line).
  const addressLine = lines[ratingAt + 1];
  if (addressLine && !isHours(addressLine.text) && !addressLine.extra) {
    let parts = addressLine.text.split(SEPARATOR).filter(Boolean);
    parts = parts.filter((p, i) => !PHONE.test(p) && !YEARS_IN_BUSINESS.test(p) && !(i > 0 && LOCATED_IN.test(p)));
    // Mobile cards: `Coffee shop · 1594 Market St` when the rating line carries no category.
    if (place.type === undefined && ratingAt >= 0 && parts.length > 1) place.type = parts.shift();
    if (parts.length) place.address = parts.join(", ");
  }

  place.phone = findPhone(lines.filter((_, i) => i !== ratingAt)) ?? null;
  const hours = lines.find((l, i) => i !== ratingAt && !l.extra && isHours(l.text));
  if (hours) place.hours = hours.text.replace(/\s*([·⋅])\s*/g, " $1 ");
  const website = websiteOf(card);
  if (website) place.website = website;
  return place;
}

/** Element children of the details block, minus the name. Bare text nodes (2019 "located in") are skipped. */
function cardLines(details: Element, titleEl: Element): Line[] {
  const titleAncestors = new Set(ancestors(titleEl));
  return details.children
    .filter(isTag)
    .filter((el) => el !== titleEl && !titleAncestors.has(el))
    .map((el) => ({ el, text: text(el) }))
    .filter((l) => l.text !== "")
    .map((l) => ({ ...l, extra: isExtra(l.el, l.text) }));
}

function isRatingLine(line: Line): boolean {
  if (RATING_LINE.test(line.text)) return true;
  const head = line.text.split(SEPARATOR)[0] ?? "";
  return NO_REVIEWS.test(head) || first(CARD.ratingMarks, line.el) !== null;
}

function readRatingLine(line: string): Pick<LocalPlace, "rating" | "reviews" | "type"> {
  const [head = "", ...rest] = line.split(SEPARATOR);
  const out: Pick<LocalPlace, "rating" | "reviews" | "type"> = {};
  const m = NO_REVIEWS.test(head) ? null : head.match(RATING);
  const rating = parseRating(m?.[1]);
  if (rating !== undefined) out.rating = rating;
  const reviews = parseCount(m?.[2]);
  if (reviews !== undefined) out.reviews = reviews;
  const type = rest.find((p) => p && !PRICE.test(p));
  if (type) out.type = type;
  return out;
}

function isHours(line: string): boolean {
  return HOURS_DOT.test(line) || HOURS_WORD.test(line);
}

function isExtra(el: Element, text: string): boolean {
  return matches(el, EXTRA_LINE) || first(EXTRA_LINE, el) !== null || /^["“„«]/.test(text);
}

function findPhone(lines: Line[]): string | undefined {
  for (const line of lines) {
    if (line.extra) continue;
    const phone = line.text.split(SEPARATOR).find((p) => PHONE.test(p));
    if (phone) return phone;
  }
  return undefined;
}

function websiteOf(card: Scan): string | undefined {
  const button = targetUrl(attr(card.first(CARD.website), "href"));
  if (button) return button;
  for (const a of card.all(CARD.anyLink)) {
    const url = targetUrl(attr(a, "href"));
    if (url && isExternal(url)) return url;
  }
  return undefined;
}

function isExternal(url: string): boolean {
  try {
    const u = new URL(url);
    return /^https?:$/.test(u.protocol) && !GOOGLE_HOST.test(u.hostname);
  } catch {
    return false;
  }
}

/**
 * The first "more places" link after the last card, within a few levels above it. Each level up only
 * adds what follows the part already searched (what precedes it comes before the card), so only
 * the following siblings of that part are searched: each element once, however far the link is.
 */
function moreLink(lastCard: Element): string | undefined {
  let searched = lastCard;
  let level = 0;
  for (const scope of ancestors(lastCard)) {
    if (++level > MORE.maxClimb) break;
    for (let sibling = searched.next; sibling; sibling = sibling.next) {
      if (!isTag(sibling)) continue;
      for (const a of all(MORE.link, [sibling])) {
        const href = attr(a, "href") ?? attr(a, "data-href") ?? "";
        if (MORE.href.test(href) && text(a)) return targetUrl(href);
      }
    }
    searched = scope;
  }
  return undefined;
}
