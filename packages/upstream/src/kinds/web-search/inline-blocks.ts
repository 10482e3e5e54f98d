/**
 * Sections of cards in the results column that the organic reader sets aside (web/index.ts keeps
 * them out of `organic_results`), read as blocks of their own by shape, not by class names:
 *
 * - `inline_videos`: the "Videos" carousel (2023–2026, web/best-running-shoes-desktop-2023,
 *   web/hatsune-miku-desktop-ja-2025, web/something-desktop-singlefile-2025) and short videos: cards
 *   whose link is a video page (`youtube.com/watch`, `/shorts/`, `tiktok.com/@…/video/`,
 *   `facebook.com/…/videos/`, `instagram.com/reel/`, `vimeo.com/<id>`);
 * - `perspectives`: the "What people are saying" section (2026, web/why-is-the-sky-blue-desktop-2026,
 *   web/donald-trump-desktop-2026): posts and videos by people, each with its author and site.
 *
 * A card is a link to another site that carries a heading, widened to the largest element around
 * it that holds no other card (html/cards.ts); its section is the nearest element around it with a
 * level-2 heading (`role="heading" aria-level="2"`, `<h2>`), whose text says which section it is.
 * Cards the AI overview, "People also ask", top stories or the knowledge panel hold are theirs, and
 * a card whose link is an organic result is that result. Each card's text comes apart into its
 * pieces: a duration (`4:28`), a date (html/cards.ts `isDateText`), the platform (`YouTube`), counts
 * (`90+ reactions`) and the remaining name (channel or author).
 */
import type { InlineVideo, Perspective } from "@serp/shared";
import { headingIn, isDateText, pictures, resultCards, type Card } from "../../html/cards.js";
import { closest, first, hiddenByMarkup, landmarkIndex, text, textLines, type Document, type Element } from "../../html/index.js";
import { isTag, isText } from "domhandler";
import { isPlaceholderImage, scriptedImageSources, targetUrl } from "../../values.js";
import { LANDMARKS as AI_OVERVIEW } from "./ai-overview.js";
import { engineUrl } from "../../hosts.js";

/** The results column's parts that hold sections (the main results and the "more results" below them). */
const REGION_IDS = ["rso", "botstuff"] as const;

/** Found in the web page's one landmark sweep (web/index.ts includes this index). */
export const LANDMARKS = landmarkIndex(Object.fromEntries(REGION_IDS.map((id) => [id, { first: { attributes: { id } } }])));

const SECTION = {
  heading: (el: Element) =>
    (el.name === "h2" || (el.attribs.role === "heading" && el.attribs["aria-level"] === "2")) && text(el) !== "",
  /** How far above a card its section's heading may be. */
  maxClimb: 20,
  /** "What people are saying", in the languages of the captured pages and the main others. */
  perspectives:
    /^(?:what people are saying|perspectives|was andere sagen|ce que les gens disent|lo que dice la gente|o que as pessoas estão dizendo|cosa dice la gente|что говорят люди|みんなの意見)$/iu,
  /** Blocks read by their own extractors: the right column, the AI overview, "People also ask". */
  notInside: (el: Element) =>
    el.attribs.id === "rhs" || el.attribs["data-mcpr"] !== undefined || /(?:^|\s)related-question-pair(?:\s|$)/.test(el.attribs.class ?? ""),
  /** A section is videos when this share of its cards link video pages (a profile's "Latest posts" mixes posts and reels). */
  videoShare: 0.8,
} as const;

/** Video pages by their link's shape. */
const VIDEO_LINK =
  /^https?:\/\/(?:(?:www|m)\.)?(?:youtube\.com\/(?:watch\?|shorts\/)|youtu\.be\/|tiktok\.com\/@[^/]+\/video\/|facebook\.com\/[^?#]*\/videos\/|instagram\.com\/reels?\/|vimeo\.com\/\d|dailymotion\.com\/video\/)/i;

/** Platforms as cards name them. */
const PLATFORMS = new Map(
  ["YouTube", "Facebook", "Instagram", "TikTok", "X", "X (Twitter)", "Twitter", "Reddit", "LinkedIn", "Vimeo", "Dailymotion", "Quora", "Threads"].map(
    (p) => [p.toLowerCase(), p],
  ),
);
/** A platform's name from its host, when a card does not print it. */
const PLATFORM_HOSTS: readonly [RegExp, string][] = [
  [/(?:^|\.)(?:youtube\.com|youtu\.be)$/i, "YouTube"],
  [/(?:^|\.)facebook\.com$/i, "Facebook"],
  [/(?:^|\.)instagram\.com$/i, "Instagram"],
  [/(?:^|\.)tiktok\.com$/i, "TikTok"],
  [/(?:^|\.)(?:x|twitter)\.com$/i, "X"],
  [/(?:^|\.)reddit\.com$/i, "Reddit"],
  [/(?:^|\.)linkedin\.com$/i, "LinkedIn"],
  [/(?:^|\.)vimeo\.com$/i, "Vimeo"],
];

/** `2025/02/21` (ja cards), which html/cards.ts's dates do not include. */
const SLASHED_DATE = /^\d{4}\/\d{1,2}\/\d{1,2}$/;
const DURATION = /^\d{1,2}:\d{2}(?::\d{2})?$/;
/** Spoken durations screen readers get (`4 minutes, 28 seconds`), counts (`90+ reactions`, `1.5K+ likes`), "key moments". */
const NOT_A_NAME =
  /^(?:\d+\s+(?:hours?|minutes?|seconds?)(?:,\s*\d+\s+(?:minutes?|seconds?))*|[\d.,]+[KMB]?\+?\s+(?:reactions?|likes?|views?|comments?|answers?|posts?)|\d+|key moments|in this video|\d+\s+key moments(?:\s+in this video)?)$/i;

export interface InlineBlocks {
  inline_videos: InlineVideo[];
  perspectives: Perspective[];
}

/** The videos and perspectives sections of a page; `taken` holds the links other blocks already return. */
export function extractInlineBlocks(doc: Document, taken: ReadonlySet<string>): InlineBlocks {
  const out: InlineBlocks = { inline_videos: [], perspectives: [] };
  const landmarks = LANDMARKS.of(doc);
  const overview = AI_OVERVIEW.of(doc).overviewSlot;
  let scripted: Map<string, string> | undefined;
  const images = () => (scripted ??= scriptedImageSources(doc));
  const seen = new Set<string>();
  for (const id of REGION_IDS) {
    const region = landmarks[id];
    if (!region) continue;
    // Cards by section, in page order.
    const sections = new Map<Element, Card[]>();
    for (const card of resultCards(region, { target: outbound })) {
      if (seen.has(card.href) || taken.has(card.href)) continue;
      if (closest(card.anchor, (e) => e === overview || SECTION.notInside(e))) continue;
      const heading = sectionHeading(card.anchor, region);
      if (!heading) continue;
      seen.add(card.href);
      sections.set(heading, [...(sections.get(heading) ?? []), card]);
    }
    for (const [heading, cards] of sections) {
      if (SECTION.perspectives.test(text(heading))) out.perspectives.push(...cards.map((c) => perspective(c, images)));
      else if (cards.filter((c) => VIDEO_LINK.test(c.href)).length >= SECTION.videoShare * cards.length) {
        out.inline_videos.push(...cards.filter((c) => VIDEO_LINK.test(c.href)).map((c) => video(c, images)));
      }
    }
  }
  out.inline_videos.forEach((v, i) => (v.position = i + 1));
  return out;
}

const ENGINE_OWN = engineUrl({ subdomains: ["[^/]+"], also: ["gstatic"] });

/** A link to another site (the upstream's redirect unwrapped); the upstream's own pages are not cards. */
function outbound(href: string): string | undefined {
  const target = targetUrl(href);
  return target && !ENGINE_OWN.test(target) ? target : undefined;
}

/** The nearest level-2 heading above a card, within the region. */
function sectionHeading(anchor: Element, region: Element): Element | undefined {
  let el: Element | undefined = anchor;
  for (let level = 0; el && el !== region && level < SECTION.maxClimb; level++) {
    el = el.parent && "attribs" in el.parent ? (el.parent as Element) : undefined;
    if (!el) return undefined;
    const heading = first('h2, [role="heading"][aria-level="2"]', el);
    if (heading && SECTION.heading(heading)) return heading;
  }
  return undefined;
}

/**
 * The card's runs of text other than its title, split at the `·` separators, each once. Text hidden
 * from screen readers counts: cards hide their visible lines and give readers one label instead.
 */
function facts(card: Card, title: string): string[] {
  const out: string[] = [];
  for (const line of textLines(card.root)) {
    for (const part of line.split(/\s+·\s+|^·\s*|\s*·$|^·$/)) {
      const t = part.trim();
      // A clipped copy of the title (`Why is the sky …`) is the title too.
      const clipped = /(?:\.\.\.|…)$/.test(t) && title.startsWith(t.replace(/\s*(?:\.\.\.|…)$/, ""));
      if (t && t !== title && !clipped && !out.includes(t)) out.push(t);
    }
  }
  return out;
}

interface Read {
  title: string;
  duration?: string;
  date?: string;
  platform?: string;
  /** Names on the card that are none of the above (channel, author). */
  names: string[];
  thumbnail?: string;
}

function read(card: Card, images: () => Map<string, string>): Read {
  const headingEl = card.heading ?? headingIn(card.anchor);
  // A heading around the whole card (2021–2023: duration, title, site and date in one `role=heading`)
  // is titled by its first line that is no duration.
  const title =
    (headingEl && (textLines(headingEl).find((l) => !DURATION.test(l)) ?? text(headingEl))) ||
    card.anchor.attribs["aria-label"] ||
    text(card.anchor);
  const r: Read = { title, names: [] };
  for (let fact of facts(card, title)) {
    // `YouTube · Trackstaa` whose dot is hidden from readers reads `YouTube Trackstaa`.
    const lead = /^(\S+)\s+(.+)$/.exec(fact);
    if (lead && !r.platform && PLATFORMS.has(lead[1]!.toLowerCase())) {
      r.platform = PLATFORMS.get(lead[1]!.toLowerCase());
      fact = lead[2]!;
    }
    const spoken = spokenDuration(fact);
    if (spoken && !r.duration) {
      r.duration = spoken;
      continue;
    }
    if (!r.duration && DURATION.test(fact)) r.duration = fact;
    else if (!r.date && (isDateText(fact) || SLASHED_DATE.test(fact))) r.date = fact;
    else if (!r.platform && PLATFORMS.has(fact.toLowerCase())) r.platform = PLATFORMS.get(fact.toLowerCase());
    else if (PLATFORMS.has(fact.toLowerCase()) || DURATION.test(fact) || NOT_A_NAME.test(fact) || fact.length > 60) continue;
    else r.names.push(fact);
  }
  if (!r.platform) {
    const host = new URL(card.href).hostname;
    r.platform = PLATFORM_HOSTS.find(([re]) => re.test(host))?.[1];
  }
  for (const img of pictures(card.root).pictures) {
    const src = img.attribs.src ?? img.attribs["data-src"];
    const image = src && !isPlaceholderImage(src) ? src : img.attribs.id ? images().get(img.attribs.id) : undefined;
    // Site icons are small PNGs the page inlines; a thumbnail is a photo (JPEG, WebP) or a URL.
    if (image && !/^data:image\/(?:png|svg)/i.test(image)) {
      r.thumbnail = image;
      break;
    }
  }
  return r;
}

/** `4 minutes, 28 seconds` (what screen readers get) → `4:28`; `1 hour, 2 minutes` → `1:02:00`. */
function spokenDuration(s: string): string | undefined {
  const m = /^(?:(\d+)\s+hours?,?\s*)?(?:(\d+)\s+minutes?,?\s*)?(?:(\d+)\s+seconds?)?$/i.exec(s);
  if (!m || (!m[1] && !m[2] && !m[3])) return undefined;
  const [h, min, sec] = [m[1], m[2], m[3]].map((x) => Number(x ?? 0)) as [number, number, number];
  const pad = (n: number) => String(n).padStart(2, "0");
  return h ? `${h}:${pad(min)}:${pad(sec)}` : `${min}:${pad(sec)}`;
}

function video(card: Card, images: () => Map<string, string>): InlineVideo {
  const r = read(card, images);
  const v: InlineVideo = { position: 0, title: r.title, link: card.href };
  if (r.thumbnail) v.thumbnail = r.thumbnail;
  if (r.names[0]) v.channel = r.names[0];
  if (r.duration) v.duration = r.duration;
  if (r.platform) v.platform = r.platform;
  if (r.date) v.date = r.date;
  return v;
}

function perspective(card: Card, images: () => Map<string, string>): Perspective {
  const r = read(card, images);
  const p: Perspective = { title: r.title, link: card.href };
  // "ceressoft · Facebook" and "Jimmy Kimmel Live": the author is the first name that is no platform.
  if (r.names[0]) p.author = r.names[0];
  if (r.platform) p.source = r.platform;
  if (r.date) p.date = r.date;
  if (r.thumbnail) p.thumbnail = r.thumbnail;
  return p;
}

