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
 *
 * Two other card families carry the same lines without that block:
 *
 * - basic HTML (`gbv=1`, 2022–2024; web-nojs/coffee-nojs-2023, web-nojs/hotels-nyc-nojs-2023): a
 *   "Places" block whose cards are links to the place's own results (`ludocid=<place id>`), each an
 *   `<h3>` name and one block of `<br>`-separated lines (`4.7 (389) · $$`, `Coffee shop · Independence,
 *   KS`, a description), read line by line like the cards above;
 * - the hotel pack of a web results page (2023 desktop and mobile, web/hotels-nyc-desktop-2023,
 *   web-mobile/hotels-nyc-mobile-2023): cards linking into the upstream's travel pages (`/travel/…`)
 *   with the hotel's name, a nightly price and a rating line (`3.6 (4.9K) · 4-star hotel`, the hotel
 *   class standing where a business's category does).
 *
 * A web results page's pack also keeps the price a card shows (`$$`, `$152`); the local results page
 * gives exactly the fields of SPEC §2.5.
 */
import { LOCAL_RESULTS_PER_PAGE, type LocalBlocks, type LocalPackPlace } from "@serp/shared";
import { isTag, isText } from "domhandler";
import {
  all,
  ancestors,
  type AnyNode,
  attr,
  first,
  hasClass,
  landmarkIndex,
  matches,
  pageScripts,
  pageSource,
  parseHtml,
  scan,
  text,
  type Document,
  type Element,
  type Scan,
} from "../html/index.js";
import { isPlaceholderImage, parseCount, parseRating, scriptedImageSources, targetUrl } from "../values.js";
import { filled, type UpstreamKind } from "./kind.js";
import { searchTarget } from "./url-forms.js";
import { engineHostname } from "../hosts.js";

/** Local results: the places list of the results search, paged by 20. */
export const webLocal = {
  url: (params, form, ctx) => searchTarget(params, form, ctx, { tab: { modern: [["tbm", "lcl"]], basic: [["tbm", "lcl"]] }, pageSize: LOCAL_RESULTS_PER_PAGE }),
  parse: parseLocal,
  /** Not a list of outbound results: not measured. */
  coverage: { threshold: 0 },
  hasContent: (b) => filled(b.local_results),
  empty: () => ({ local_results: [] }),
} as const satisfies UpstreamKind<"web-local">;

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

/** Basic HTML place cards: a link to the place's results holding its name and lines (see above). */
const BASIC_CARD = {
  /** `/search?…&ludocid=<place id>`. */
  param: "ludocid=",
  name: "h3",
} as const;

/** Hotel cards: a link into the travel pages (desktop `href`, mobile `data-url`) holding a star rating. */
const HOTEL_CARD = {
  path: "/travel/",
  /** A heading naming the hotel; without one, the name is the card's first line of text. */
  name: '[role="heading"]',
  /** The star widget of the rating line (`role=img`, labelled "Rated 3.6 out of 5"). */
  starsRole: "img",
  /** How far above its stars a card's link may be. */
  maxClimb: 12,
  /** "View 1,206 hotels" under the pack. */
  more: /^\/travel\/(?:search|hotels)\b/,
} as const;

/**
 * Every card's details block on the page, found in one landmark sweep; the basic layout's place
 * links and star widgets (a hotel card is the travel link around one) too. The web parser, which
 * reads the local pack of a results page, includes this index in its own sweep.
 */
export const LANDMARKS = landmarkIndex({
  cardDetails: { every: CARD.details },
  basicCardLinks: { every: { tags: ["a"], match: (a: Element) => a.attribs.href?.includes(BASIC_CARD.param) === true } },
  starWidgets: { every: { attributes: { role: HOTEL_CARD.starsRole }, match: (el: Element) => el.attribs["aria-label"] !== undefined } },
});
const isHotelCardLink = (el: Element) =>
  (el.name === "a" && el.attribs.href?.startsWith(HOTEL_CARD.path) === true) || el.attribs["data-url"]?.startsWith(HOTEL_CARD.path) === true;
/** Where a card names its place: the CID (`data-cid`, a `ludocid=` link) and the feature id (`data-fid`). */
const PLACE_IDS = { cid: "[data-cid]", fid: "[data-fid]", ludocid: /[?&]ludocid=(\d+)/, digits: /^\d{1,25}$/, fidShape: /^0x[0-9a-f]+:0x[0-9a-f]+$/i } as const;
const CARD_IMAGE = "img";
/** What a card is read from, found in one scan of the card. */
const CARD_PARTS = [CARD.title, CARD.website, CARD.anyLink, PLACE_IDS.cid, PLACE_IDS.fid, CARD_IMAGE];
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
/**
 * `10+ years in business`, `15 anos no mercado`, `5 años en el negocio`, `12 ans d'activité`, `3 Jahre
 * in der Branche`: a number of years, alone or with a few words about the business, in any of these
 * languages. It leads the address line on 2025 cards; it is never part of the address.
 */
const YEARS_IN_BUSINESS =
  /^(?:\d+\+?|over \d+|mais de \d+|más de \d+|plus de \d+|über \d+)\s*(?:years?|yrs|anos?|años?|ans?|jahre?n?|anni|lat|jaar|лет|года?|yıl)(?:\s+[\p{L}'’]+){0,4}$/iu;
/** `In the Westfield Garden State Plaza`: where the business sits, after its address. */
const LOCATED_IN = /^(?:In|Dans|Im|Nel|Nella|En)\s+\S/;
/** The label the page puts on a sponsored card, in the languages captured (the text of one element). */
const SPONSORED_LABEL =
  /^(?:sponsored|ads?|patrocinados?|anúncios?|anuncios?|anzeigen?|gesponsert|annonces?|sponsorisée?s?|sponsorizzat[oa]|annunci[oa]?|reklama|sponsorowane|advertentie|gesponsord|реклама|広告|광고|赞助|sponsorlu)$/iu;
/** A paid placement's link: the engine's click redirect or its ad-services host. */
const AD_LINK = /^(?:https?:\/\/[^/]*)?\/aclk\?|googleadservices\.com\//i;
/** Service options a card lists (`Dine-in · Takeout · No delivery`): the words of each, by option. */
const SERVICE_OPTIONS: readonly (readonly [string, RegExp])[] = [
  ["dine_in", /^dine-?in$|^consumo no local$|^comer en el lugar$|^sur place$|^vor ort essen$|^consumazione sul posto$/i],
  ["takeout", /^take-?out$|^take-?away$|^para viagem$|^para llevar$|^à emporter$|^zum mitnehmen$|^da asporto$/i],
  ["delivery", /^delivery$|^entrega$|^a domicilio$|^livraison$|^lieferservice$|^lieferung$|^consegna a domicilio$/i],
  ["curbside_pickup", /^curbside pick-?up$/i],
  ["in_store_pickup", /^in-store pick-?up$/i],
  ["in_store_shopping", /^in-store shopping$/i],
  ["drive_through", /^drive-?(?:through|thru)$/i],
  ["no_contact_delivery", /^no-contact delivery$/i],
  ["onsite_services", /^onsite services$|^on-site services$/i],
  ["online_appointments", /^online appointments$/i],
];
/** `No delivery`, `Sem entrega`, `Pas de livraison`: an option the card says is not offered. */
const NOT_OFFERED = /^(?:no|sem|sin|pas de|kein(?:e)?|niente|nessun[ao]?)\s+/i;
const GOOGLE_HOST = engineHostname(["usercontent", "gstatic"]);

/** The local pack of a web results page: its places and the link to the full local results. */
export function extractLocalPack(doc: Document): { places: LocalPackPlace[]; more_locations_link?: string } | undefined {
  let cards = findCards(doc);
  let more = MORE.href;
  if (cards.length === 0) [cards, more] = [hotelCards(doc), HOTEL_CARD.more];
  if (cards.length === 0) return undefined;
  const places = readPlaces(cards, true, pageData(doc)).places;
  if (places.length === 0) return undefined;
  const link = moreLink(cards[cards.length - 1]!.root, more);
  return link ? { places, more_locations_link: link } : { places };
}

/** The local results page (`tbm=lcl`): every business card in the document. */
export function parseLocal(html: string): LocalBlocks {
  const doc = parseHtml(html);
  const { places, ads } = readPlaces(findCards(doc), false, pageData(doc));
  return ads.length ? { local_results: places, local_ads: ads } : { local_results: places };
}

/** What the page's scripts say of its cards, each read once and only when a card needs it. */
interface PageData {
  /** Image ids → their scripted sources. */
  images: () => Map<string, string>;
  /** Place ids (CIDs) → where the map puts them. */
  coordinates: () => Map<string, GpsCoordinates>;
}

function pageData(doc: Document): PageData {
  let sources: Map<string, string> | undefined;
  let coordinates: Map<string, GpsCoordinates> | undefined;
  return { images: () => (sources ??= scriptedImageSources(doc)), coordinates: () => (coordinates ??= placeCoordinates(doc)) };
}

type GpsCoordinates = NonNullable<LocalPackPlace["gps_coordinates"]>;

/**
 * Where the page's map data puts each place, by its CID, in the three forms captured (the data sits
 * in script strings escaped once to three times, so quotes and `=` are unescaped first, in a window
 * around each match: unescaping a whole page costs more than the rest of the parse):
 *
 * - 2021–2024 desktop packs: the place's entry lists its results link, then its latitude and
 *   longitude (`"/search?q=…&ludocid=<cid>&…",40.01522,-105.26261`; web/abortion-near-me-desktop-2023);
 * - 2019 desktop packs: named fields after the results link (`["result_url",…"…ludocid=<cid>…"]],
 *   ["latitude",…[null,null,null,46.96]],["longitude",…]`; web/kaffeemaschine-kaufen-desktop-de-2019);
 * - 2023–2024 map pins: the feature id's halves as decimals, then degrees × 10⁷ as unsigned 32-bit
 *   numbers (`[["<fid>","<cid>"],"/g/…",null,[327899387,3326735960]]` is 32.79°, -96.82°;
 *   web/movement-desktop-2024).
 *
 * `0.0, 0.0` (2019 entries of places without a pin) is no position.
 */
const COORDINATES = {
  /** Where an entry of the first two forms starts, and how far it may run. */
  results: "ludocid",
  window: 3000,
  link: /ludocid=(\d+)[^"\s]{0,800}?",(-?\d{1,3}\.\d+),(-?\d{1,3}\.\d+)[,\]]/y,
  named: /ludocid=(\d+)[^"]{0,800}?"\s*\]\s*\]\s*,\s*\["latitude",(?:null,){4}\[(?:null,){3}(-?\d{1,3}(?:\.\d+)?)\]\s*\]\s*,\s*\["longitude",(?:null,){4}\[(?:null,){3}(-?\d{1,3}(?:\.\d+)?)\]/y,
  /** A map pin's position (never escaped: digits only), then its keys in the text before it. */
  pin: /,null,\[(\d{1,10}),(\d{1,11})\]\]/g,
  pinKeys: /\[\["\d+","(\d+)"\],"\/g\/[^"]*",null,\[$/,
  lookBack: 400,
} as const;

/** Script-string escapes of quotes, `=`, `&` and newlines, undone (however deep the nesting). */
const unescaped = (s: string) => s.replace(/\\+(?:x22|u0022|")/g, '"').replace(/\\+u003d/g, "=").replace(/\\+u0026/g, "&").replace(/\\+n/g, "\n");

function placeCoordinates(doc: Document): Map<string, GpsCoordinates> {
  const found = new Map<string, GpsCoordinates>();
  const scripts = pageScripts(doc);
  if (scripts.length === 0) return found;
  const source = pageSource(doc) ?? scripts.map((s) => text(s)).join("\n");
  const add = (cid: string, latitude: number, longitude: number) => {
    if (found.has(cid) || (latitude === 0 && longitude === 0)) return;
    if (Math.abs(latitude) <= 90 && Math.abs(longitude) <= 180) found.set(cid, { latitude, longitude });
  };
  const { results, window } = COORDINATES;
  for (let at = source.indexOf(results); at >= 0; at = source.indexOf(results, at + results.length)) {
    const entry = unescaped(source.slice(at, at + window));
    for (const pattern of [COORDINATES.link, COORDINATES.named]) {
      pattern.lastIndex = 0;
      const m = pattern.exec(entry);
      if (m) add(m[1]!, Number(m[2]), Number(m[3]));
    }
  }
  for (const m of source.matchAll(COORDINATES.pin)) {
    const end = m.index! + ",null,[".length;
    const key = unescaped(source.slice(Math.max(0, end - COORDINATES.lookBack), end)).match(COORDINATES.pinKeys);
    if (key) add(key[1]!, degreesE7(m[1]!), degreesE7(m[2]!));
  }
  return found;
}

/** Degrees × 10⁷ written as an unsigned 32-bit number → degrees. */
function degreesE7(raw: string): number {
  const n = Number(raw);
  return (n >= 2 ** 31 ? n - 2 ** 32 : n) / 1e7;
}

/** `data-lat`/`data-lng` on the card itself or an element in it (a map pin drawn inside the card). */
const CARD_PIN = "[data-lat][data-lng]";

/** A card: where it is, and its name and lines once found (details cards are read from `details`). */
type Card = { root: Element; details: Element; untitled?: boolean } | { root: Element; title: string; lines: Line[]; hotel: boolean };

/** The business cards of a page: those with a details block, else basic HTML place cards. */
function findCards(doc: Document): Card[] {
  const seen = new Set<Element>();
  const cards: Card[] = [];
  for (const details of LANDMARKS.of(doc).cardDetails) {
    const root = cardRoot(details);
    if (seen.has(root)) continue;
    seen.add(root);
    cards.push({ root, details });
  }
  if (cards.length) return cards;
  const shaped = shapedCards(doc);
  return shaped.length ? shaped : basicCards(doc);
}

/**
 * Whether a block found by shape reads as a place's card: some line is a rating, an opening status,
 * a phone number or an address with a number in it (a dialog or a panel that names a place id shows
 * none of them).
 */
function showsPlace(details: Element): boolean {
  return details.children.some((c) => {
    if (!isTag(c)) return false;
    const t = text(c);
    return RATING_LINE.test(t) || NO_REVIEWS.test(t.split(SEPARATOR)[0] ?? "") || isHours(t) || /\d/.test(t);
  });
}

/** Element children of `el` that show text to a reader (a tile's `aria-hidden` letter label does not). */
function textBlocks(el: Element): number {
  return el.children.filter((c) => isTag(c) && shows(c)).length;
}

function shows(el: Element): boolean {
  return el.attribs["aria-hidden"] !== "true" && text(el) !== "";
}

/** A card's place id on the card itself (desktop `data-cid`, mobile 2023 `data-rc_ludocids`): stable attributes. */
const CARD_ID = "[data-cid], [data-rc_ludocids]";
const HEADING = '[role="heading"]';
/** A line that is a price with a number (`$2,030.00`): a product's, never a place's (a place shows a price level, `$$`, in its rating line). */
const PRODUCT_PRICE = /^\p{Sc}\s?\d/u;

/**
 * Cards found by shape when the details block's class is not on the page (a redesign renamed it):
 * each element naming a place by its id and holding a heading is a card, and the block around the
 * heading holds its lines. One card per place id (a card links its place twice: text and photo).
 */
function shapedCards(doc: Document): Card[] {
  const seen = new Set<string>();
  const cards: Card[] = [];
  for (const el of all(CARD_ID, doc)) {
    const id = el.attribs["data-cid"] ?? el.attribs["data-rc_ludocids"] ?? "";
    if (!/^\d+$/.test(id) || seen.has(id)) continue;
    const heading = first(HEADING, el);
    if (!heading?.parent || !isTag(heading.parent)) {
      // Mobile 2023 cards (`data-rc_ludocids`, a place's id by name) name the place in a plain block:
      // the lines are the block with the most of them.
      if (el.attribs["data-rc_ludocids"] === undefined) continue;
      const block = all("div", el).reduce<Element | undefined>((best, d) => (textBlocks(d) > (best ? textBlocks(best) : 2) ? d : best), undefined);
      if (block && !block.children.some((c) => isTag(c) && PRODUCT_PRICE.test(text(c))) && showsPlace(block)) {
        seen.add(id);
        cards.push({ root: el, details: block, untitled: true });
      }
      continue;
    }
    seen.add(id);
    // The block holding the name and the lines: the first one up from the heading with other text beside it.
    let details: Element = heading.parent;
    while (details !== el && details.parent && isTag(details.parent) && textBlocks(details) < 2) details = details.parent;
    // 2019–2021: the name stands beside the block of lines rather than in it.
    const beside = details.children.filter(isTag).filter((c) => c !== heading && !isInside(heading, c) && shows(c));
    if (beside.length === 1 && textBlocks(beside[0]!) >= 2) details = beside[0]!;
    // A product card beside the pack (a shopping carousel) names an id too, but shows a price of its own.
    if (details.children.some((c) => isTag(c) && PRODUCT_PRICE.test(text(c)))) continue;
    if (!showsPlace(details)) continue;
    cards.push({ root: el, details });
  }
  return cards;
}

/**
 * Basic HTML place cards: each place link holding an `<h3>` name, its lines the `<br>`-separated
 * runs of text after the name (in the block beside it). A place linked twice (name, then an arrow
 * icon) is one card.
 */
function basicCards(doc: Document): Card[] {
  const cards: Card[] = [];
  const seen = new Set<string>();
  for (const link of LANDMARKS.of(doc).basicCardLinks) {
    const titleEl = first(BASIC_CARD.name, link);
    const title = text(titleEl);
    if (!titleEl || !title || seen.has(attr(link, "href")!)) continue;
    seen.add(attr(link, "href")!);
    const lines = brLines(linesAfter(titleEl, link)).map((t) => ({ el: undefined, text: t, extra: /^["“„«]/.test(t) }));
    cards.push({ root: link, title, lines, hotel: false });
  }
  return cards;
}

/** What follows the name inside the card: the siblings after it and after each of its wrappers. */
function linesAfter(titleEl: Element, card: Element): AnyNode[] {
  const after: AnyNode[] = [];
  for (let el: Element = titleEl; el !== card && el.parent && isTag(el.parent); el = el.parent) {
    for (let next = el.next; next; next = next.next) after.push(next);
  }
  return after;
}

/**
 * Text of each line of `nodes`: a `<br>` ends a line, and so does a block element (a `div`, `p`…)
 * around text, which starts and ends its own line. A block without text (a star widget between a
 * rating and its review count) breaks nothing.
 */
function brLines(nodes: readonly AnyNode[]): string[] {
  const lines: string[] = [""];
  const visit = (node: AnyNode) => {
    if (isTag(node)) {
      if (node.name === "br") {
        lines.push("");
        return;
      }
      if (node.name === "script" || node.name === "style") return;
      const block = BLOCK_TAGS.has(node.name) && /\S/.test(text(node));
      if (block) lines.push("");
      for (const c of node.children) visit(c);
      if (block) lines.push("");
    } else if (isText(node)) lines[lines.length - 1] += node.data;
  };
  for (const node of nodes) visit(node);
  return lines.map((l) => l.replace(/\s+/g, " ").trim()).filter(Boolean);
}
const BLOCK_TAGS = new Set(["div", "p", "li", "ul", "ol", "table", "tr", "h1", "h2", "h3", "h4", "h5", "h6"]);

/**
 * Hotel cards: each travel link holding a star rating; its lines are the card's text blocks, one per
 * block: the name (a heading when there is one, else the first line: the photos before it have no
 * text), then the price, the rating line and what describes the hotel.
 */
function hotelCards(doc: Document): Card[] {
  const cards: Card[] = [];
  for (const stars of LANDMARKS.of(doc).starWidgets) {
    let link: Element | undefined;
    let level = 0;
    for (const a of ancestors(stars)) {
      if (++level > HOTEL_CARD.maxClimb) break;
      if (isHotelCardLink(a)) {
        link = a;
        break;
      }
    }
    if (!link || cards.some((c) => c.root === link || isInside(link!, c.root))) continue;
    const titleEl = first(HOTEL_CARD.name, link);
    const texts = brLines(titleEl ? linesAfter(titleEl, link) : link.children);
    const title = titleEl ? text(titleEl) : texts.shift();
    if (!title) continue;
    // Lines after the rating line describe the hotel (a summary, amenities, a deal): never an address.
    const ratingAt = texts.findIndex((t) => RATING_LINE.test(t));
    const lines = texts.map((t, i) => ({ el: undefined, text: t, extra: ratingAt < 0 || i > ratingAt }));
    cards.push({ root: link, title, lines, hotel: true });
  }
  return cards;
}

function isInside(el: Element, ancestor: Element): boolean {
  for (let node = el.parent; node; node = node.parent) if (node === ancestor) return true;
  return false;
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

type LocalAd = NonNullable<LocalBlocks["local_ads"]>[number];

/**
 * The places of the cards, and apart from them the sponsored cards (`local_ads`), which are never
 * counted as places; `withPrice`: a web results page's pack, which keeps the price a card shows.
 */
function readPlaces(cards: Card[], withPrice: boolean, data: PageData): { places: LocalPackPlace[]; ads: LocalAd[] } {
  const places: LocalPackPlace[] = [];
  const ads: LocalAd[] = [];
  for (const card of cards) {
    const sponsored = isSponsored(card.root);
    const place = readCard(card, (sponsored ? ads : places).length + 1, withPrice, data);
    if (!place) continue;
    if (sponsored) {
      const { position, ...ad } = place;
      ads.push({ block_position: position, ...ad });
    } else places.push(place);
  }
  return { places, ads };
}

/** A card the page marks as paid: a sponsored label of its own, or its links going through the ad redirect. */
function isSponsored(root: Element): boolean {
  let found = false;
  const visit = (node: AnyNode): void => {
    if (found) return;
    if (isText(node)) {
      if (SPONSORED_LABEL.test(node.data.replace(/[\s·⋅:]+/g, " ").trim())) found = true;
      return;
    }
    if (!isTag(node)) return;
    if (node.name === "a" && AD_LINK.test(node.attribs.href ?? "")) found = true;
    else for (const c of node.children) visit(c);
  };
  visit(root);
  return found;
}

interface Line {
  /** The line's element (undefined for a run of text between `<br>`s). */
  el: Element | undefined;
  text: string;
  /** A description, service options or a review quote: never name, rating, address or hours. */
  extra: boolean;
}

function readCard(found: Card, position: number, withPrice: boolean, data: PageData): LocalPackPlace | undefined {
  const card = scan(found.root, CARD_PARTS);
  // A card found by shape may name its place without a heading: its first line is the name.
  const titleEl = "details" in found ? (card.first(CARD.title) ?? (found.untitled ? found.details.children.find((c): c is Element => isTag(c) && shows(c)) : null) ?? null) : null;
  const title = "details" in found ? text(titleEl) : found.title;
  if (!title) return undefined;
  const place: LocalPackPlace = { position, title, ...placeIds(found.root, card) };

  let lines = "details" in found ? cardLines(found.details, titleEl!) : found.lines;
  // A hotel's nightly price has a line of its own, before the rating line.
  const price = "hotel" in found && found.hotel ? lines.find((l) => PRICE.test(l.text))?.text : undefined;
  if (price !== undefined) lines = lines.filter((l) => l.text !== price);
  const ratingAt = lines.findIndex(isRatingLine);
  const rated = ratingAt >= 0 ? readRatingLine(lines[ratingAt]!.text) : {};
  const { price: level, ...ratingLine } = rated;
  Object.assign(place, ratingLine);
  if (withPrice && (price ?? level)) place.price = price ?? level;

  // The address line follows the rating line (or the name when there is no rating line).
  const addressLine = lines[ratingAt + 1];
  if (addressLine && !isHours(addressLine.text) && !addressLine.extra) {
    let parts = addressLine.text.split(SEPARATOR).filter(Boolean);
    const years = parts.find((p) => YEARS_IN_BUSINESS.test(p));
    if (years) place.years_in_business = years;
    parts = parts.filter((p, i) => !PHONE.test(p) && p !== years && !(i > 0 && LOCATED_IN.test(p)));
    // Mobile cards: `Coffee shop · 1594 Market St` when the rating line carries no category.
    if (place.type === undefined && ratingAt >= 0 && parts.length > 1) place.type = parts.shift();
    if (parts.length) place.address = parts.join(", ");
  }

  place.phone = findPhone(lines.filter((_, i) => i !== ratingAt)) ?? null;
  const hours = lines.find((l, i) => i !== ratingAt && !l.extra && isHours(l.text));
  // The hours line may end with the phone after a middle dot (`Aberto ⋅ Fecha às 18:00 · (11) 3333-4444`).
  if (hours) place.hours = hours.text.split(SEPARATOR).filter((p) => p && !PHONE.test(p)).join(" · ").replace(/\s*([·⋅])\s*/g, " $1 ");
  const extras = lines.filter((l) => l.extra && l.text);
  if (extras[0]) place.description = extras[0].text;
  const options = extras.map((l) => serviceOptions(l.text)).find((o) => o !== undefined);
  if (options) place.service_options = options;
  const thumbnail = cardImage(card.all(CARD_IMAGE), data.images) ?? ("details" in found ? cardImage(photosBeside(found.root), data.images) : undefined);
  if (thumbnail) place.thumbnail = thumbnail;
  const gps = cardPin(found.root) ?? (place.place_id ? data.coordinates().get(place.place_id) : undefined);
  if (gps) place.gps_coordinates = gps;
  // A hotel card links only into the travel pages: it names no website.
  const website = "hotel" in found && found.hotel ? undefined : websiteOf(card);
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
  return NO_REVIEWS.test(head) || (line.el !== undefined && first(CARD.ratingMarks, line.el) !== null);
}

function readRatingLine(line: string): Pick<LocalPackPlace, "rating" | "reviews" | "reviews_original" | "type" | "price"> {
  const [head = "", ...rest] = line.split(SEPARATOR);
  const out: Pick<LocalPackPlace, "rating" | "reviews" | "reviews_original" | "type" | "price"> = {};
  const m = NO_REVIEWS.test(head) ? null : head.match(RATING);
  const rating = parseRating(m?.[1]);
  if (rating !== undefined) out.rating = rating;
  const reviews = parseCount(m?.[2]);
  if (reviews !== undefined) {
    out.reviews = reviews;
    out.reviews_original = `(${m![2]!.trim()})`;
  }
  const type = rest.find((p) => p && !PRICE.test(p));
  if (type) out.type = type;
  const price = rest.find((p) => PRICE.test(p));
  if (price) out.price = price;
  return out;
}

/** The place's CID and feature id, from the card's attributes or its links to the place's own results. */
function placeIds(root: Element, card: Scan): Pick<LocalPackPlace, "place_id" | "data_id"> {
  const ids: Pick<LocalPackPlace, "place_id" | "data_id"> = {};
  const cid = card.all(PLACE_IDS.cid).map((el) => attr(el, "data-cid")!).find((v) => PLACE_IDS.digits.test(v));
  // A basic HTML card is itself the link to the place's results.
  const links = root.name === "a" ? [root, ...card.all(CARD.anyLink)] : card.all(CARD.anyLink);
  const ludocid = links.map((a) => attr(a, "href")?.match(PLACE_IDS.ludocid)?.[1]).find(Boolean);
  const fid = card.all(PLACE_IDS.fid).map((el) => attr(el, "data-fid")!).find((v) => PLACE_IDS.fidShape.test(v));
  // The feature id's second half is the CID in hex: the CID of a card that names only its feature id.
  const place = cid ?? ludocid ?? (fid ? BigInt(fid.slice(fid.indexOf(":") + 1)).toString() : undefined);
  if (place) ids.place_id = place;
  if (fid) ids.data_id = fid;
  return ids;
}

/** The card's own map pin, where it carries one. */
function cardPin(root: Element): GpsCoordinates | undefined {
  const pin = matches(root, CARD_PIN) ? root : first(CARD_PIN, root);
  const latitude = Number(attr(pin, "data-lat"));
  const longitude = Number(attr(pin, "data-lng"));
  if (!pin || !Number.isFinite(latitude) || !Number.isFinite(longitude) || (latitude === 0 && longitude === 0)) return undefined;
  return Math.abs(latitude) <= 90 && Math.abs(longitude) <= 180 ? { latitude, longitude } : undefined;
}

/** `Dine-in · Takeout · No delivery` → { dine_in: true, takeout: true, delivery: false }; undefined unless every part is an option. */
function serviceOptions(line: string): Record<string, boolean> | undefined {
  const out: Record<string, boolean> = {};
  const parts = line.split(/\s*[·⋅]\s*/).filter(Boolean);
  for (const part of parts) {
    const offered = !NOT_OFFERED.test(part);
    const name = part.replace(NOT_OFFERED, "");
    const option = SERVICE_OPTIONS.find(([, words]) => words.test(name))?.[0];
    if (!option) return undefined;
    out[option] = offered;
  }
  return parts.length ? out : undefined;
}

/** The card's photo: its image's source, or the source the page's script gives that image. */
function cardImage(imgs: readonly Element[], images: () => Map<string, string>): string | undefined {
  for (const img of imgs) {
    const src = attr(img, "src") ?? attr(img, "data-src");
    if (src && !isPlaceholderImage(src)) return src.startsWith("data:") || /^https?:/.test(src) ? src : undefined;
    const id = attr(img, "id");
    const scripted = id ? images().get(id) : undefined;
    if (scripted) return scripted;
  }
  return undefined;
}

/** How far above a card's link its photos may be (mobile 2023: a photo carousel beside the link). */
const PHOTOS_CLIMB = 3;

/**
 * Pictures beside a card that holds none: mobile 2023 cards (web-mobile/coffee-mobile-2023) are a
 * link around the lines, with the place's photo carousel beside it. The pictures of the largest
 * block around the card (a few levels up) that holds no other card's lines.
 */
function photosBeside(root: Element): Element[] {
  let block: Element | undefined;
  let level = 0;
  for (const a of ancestors(root)) {
    if (++level > PHOTOS_CLIMB || all(CARD.details, a).length > 1) break;
    block = a;
  }
  return block ? all(CARD_IMAGE, block) : [];
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
function moreLink(lastCard: Element, pattern: RegExp): string | undefined {
  let searched = lastCard;
  let level = 0;
  for (const scope of ancestors(lastCard)) {
    if (++level > MORE.maxClimb) break;
    for (let sibling = searched.next; sibling; sibling = sibling.next) {
      if (!isTag(sibling)) continue;
      for (const a of all(MORE.link, [sibling])) {
        const href = attr(a, "href") ?? attr(a, "data-href") ?? "";
        if (pattern.test(href) && text(a)) return targetUrl(href);
      }
    }
    searched = scope;
  }
  return undefined;
}
