/**
 * "Top stories" → `top_stories`. Three layouts:
 *
 * - desktop 2019: a `g-section-with-header` carousel of `g-inner-card`s (headline, `cite` publisher,
 *   age); cards the carousel has not loaded yet are empty and skipped;
 * - desktop 2024–2026: `div.m7jPZ` cards in the same kind of section, publisher (beside its favicon)
 *   above the headline, age at the bottom; "Also in the news" cards of the section are stories too;
 * - basic HTML (`gbv=1`): a `.Xdlr0d` carousel of `a.BVG0Nb` `/url?q=` links, the publisher and the
 *   age on two lines of one `.tAd8D` box.
 *
 * The section is told apart from other carousels by what it holds, never by its (localized) heading:
 * a link to the news tab (`tbm=nws`), or cards that link out through `/url?q=`. Raw pages fill most
 * thumbnails in by script; those are read from the script, a 1×1 placeholder is never returned.
 *
 * Where the classes are gone (a redesign renamed them), the stories are found by their shape: the
 * section is the one linking to the news tab (tags and links, no class); in it, a 2024–2026 card
 * carries its story's ids (`data-news-doc-id`; social posts elsewhere on the page carry them too, so
 * only inside the section), a 2019 one is a `g-inner-card`; its publisher is the text before the
 * headline and its age the text that reads as a date (`isDateText`). A basic page's stories are `/url?q=` links, each holding a picture and ending with
 * a "publisher / age" box, side by side (two or more under one parent).
 */
import type { TopStory } from "@serp/shared";
import { isText } from "domhandler";
import {
  all,
  attr,
  closest,
  first,
  hasClass,
  landmarkIndex,
  scan,
  textOf,
  type AnyNode,
  type Document,
  type Element,
} from "../../html/index.js";
import { isDateText, pieces } from "../../html/cards.js";
import { isPlaceholderImage, scriptedImageSources, targetUrl } from "../../values.js";

/** Full pages, desktop 2019–2026. */
const FULL = {
  section: 'g-section-with-header:has(a[href*="tbm=nws"])',
  sectionTag: "g-section-with-header",
  /** A 2024–2026 card, also the landmark when the section has no news-tab link. */
  modernCard: "div.m7jPZ",
  modernCardClass: "m7jPZ",
  card: "g-inner-card, div.m7jPZ",
  /** Cards inside a section: also by a 2024–2026 card's story id. */
  sectionCard: "g-inner-card, div.m7jPZ, [data-news-doc-id]",
  storyId: "data-news-doc-id",
  link: "a[href]",
  title: '[role="heading"]',
  /** Publisher: `cite` (2019), the name beside the favicon (2024–2026). */
  source: "cite, .MgUUmf > span",
  /** Age: `.GJhQm` (2019), `.OSrXXb` (2024–2026). */
  date: ".GJhQm span, .OSrXXb span, .LfVVr",
  /** The story image; the publisher favicon (`.MgUUmf`, `.QyR1Ze`) is not one. */
  thumbnail: "img:not(.YQ4gaf)",
} as const;

/** What a card is read from, found in one scan of the card. */
const CARD_PARTS = [FULL.link, FULL.title, FULL.source, FULL.date, FULL.thumbnail];

/** Basic HTML (`gbv=1`). */
const BASIC = {
  carousel: 'div.Xdlr0d:has(a.BVG0Nb[href*="/url?q="])',
  carouselClass: "Xdlr0d",
  card: 'a.BVG0Nb[href*="/url?q="]',
  title: ".Xb5VRe, span.rQMQod",
  /** `Publisher\nAge` in one box. */
  sourceAndDate: ".tAd8D",
  thumbnail: "img",
} as const;

/** A basic page's link out (`/url?q=`): a story, when it holds a picture and ends with its publisher and age. */
const BASIC_LINK_OUT = /^\/url\?(?:[^#]*&)?q=/;

/** Found in the web page's one landmark sweep (web/index.ts includes this index). */
export const LANDMARKS = landmarkIndex({
  /** A basic page's links out: stories among them by shape, where the carousel classes are gone. */
  linksOut: { every: { tags: ["a"], match: (a: Element) => BASIC_LINK_OUT.test(a.attribs.href ?? "") } },
  /** The section of any layout. */
  storiesSection: {
    first: {
      tags: [FULL.sectionTag],
      classes: [FULL.modernCardClass, BASIC.carouselClass],
      selector: `${FULL.section}, ${FULL.modernCard}, ${BASIC.carousel}`,
    },
  },
});

export function extractTopStories(doc: Document): TopStory[] {
  const { storiesSection: found, linksOut } = LANDMARKS.of(doc);
  if (!found) return readBasicByShape(linksOut);
  if (hasClass(found, BASIC.carouselClass)) return readBasic(found);
  const holder = found.name === FULL.sectionTag ? found : closest(found, (e) => e.name === FULL.sectionTag);
  // Cards outside any section (not seen in captured pages) are read from the whole document.
  return readFull(doc, holder ?? doc);
}

function readFull(doc: Document, section: Element | Document): TopStory[] {
  let scripted: Map<string, string> | undefined;
  const images = () => (scripted ??= scriptedImageSources(doc));
  const stories: TopStory[] = [];
  for (const card of all(section === doc ? FULL.card : FULL.sectionCard, section)) {
    if (card.name === "div" && closest(card, (e) => e.name === "g-inner-card" || (e !== card && FULL.storyId in e.attribs))) continue;
    const found = scan(card, CARD_PARTS);
    const link = targetUrl(attr(found.first(FULL.link), "href"));
    const title = found.textOf(FULL.title);
    if (!link || !title) continue;
    const story: TopStory = { title, link };
    const shaped = found.first(FULL.source) && found.first(FULL.date) ? undefined : sourceAndDate(card, found.first(FULL.title)!);
    const source = found.textOf(FULL.source) ?? shaped?.source;
    if (source) story.source = source;
    const date = found.textOf(FULL.date) ?? shaped?.date;
    if (date) story.date = date;
    const thumbnail = imageSource(found.first(FULL.thumbnail), images);
    if (thumbnail) story.thumbnail = thumbnail;
    stories.push(story);
  }
  return stories;
}

function readBasic(carousel: Element): TopStory[] {
  const stories: TopStory[] = [];
  for (const card of all(BASIC.card, carousel)) {
    const link = targetUrl(attr(card, "href"));
    const title = textOf(BASIC.title, card);
    if (!link || !title) continue;
    const story: TopStory = { title, link };
    const [source, date] = lines(first(BASIC.sourceAndDate, card));
    if (source) story.source = source;
    if (date) story.date = date;
    const thumbnail = imageSource(first(BASIC.thumbnail, card));
    if (thumbnail) story.thumbnail = thumbnail;
    stories.push(story);
  }
  return stories;
}

/** A card's publisher (the text before its headline, not a date) and age (text that reads as a date), by shape. */
function sourceAndDate(card: Element, heading: Element): { source?: string; date?: string } {
  const all = pieces(card);
  const at = all.findIndex((p) => p.el === heading || closest(p.el, (e) => e === heading));
  const before = at < 0 ? [] : all.slice(0, at);
  const source = before.filter((p) => !isDateText(p.text)).at(-1)?.text;
  const date = all.find((p) => isDateText(p.text))?.text;
  return { ...(source ? { source } : {}), ...(date ? { date } : {}) };
}

/**
 * A basic page's stories by shape: links out that hold a picture and whose last box ends with an
 * age (`Publisher\nAge`), two or more under one parent (the carousel).
 */
function readBasicByShape(linksOut: readonly Element[]): TopStory[] {
  const cards = linksOut.filter((a) => {
    const last = pieces(a).at(-1);
    return !!last && !!first(BASIC.thumbnail, a) && isDateText(lines(last.el).at(-1) ?? "");
  });
  const stories: TopStory[] = [];
  for (const card of cards) {
    if (cards.filter((c) => c.parent === card.parent).length < 2) continue;
    const link = targetUrl(attr(card, "href"));
    const boxes = pieces(card);
    const title = boxes.length > 1 ? boxes[0]!.text : undefined;
    if (!link || !title) continue;
    const story: TopStory = { title, link };
    const [source, date] = lines(boxes.at(-1)!.el);
    if (source && date) story.source = source;
    story.date = date ?? source;
    const thumbnail = imageSource(first(BASIC.thumbnail, card));
    if (thumbnail) story.thumbnail = thumbnail;
    stories.push(story);
  }
  return stories;
}

/** A real image URL or data URI; a placeholder is swapped for the data URI its script sets, if any. */
function imageSource(img: Element | null, scripted?: () => Map<string, string>): string | undefined {
  if (!img) return undefined;
  const src = attr(img, "src") ?? attr(img, "data-src");
  if (!isPlaceholderImage(src)) return src;
  const id = attr(img, "id");
  return id && scripted ? scripted().get(id) : undefined;
}

/** The text lines of a box whose lines are separated by raw newlines (basic HTML). */
function lines(box: Element | null): string[] {
  if (!box) return [];
  const raw: string[] = [];
  const walk = (n: AnyNode): void => {
    if (isText(n)) raw.push(n.data);
    else if ("children" in n) for (const c of n.children) walk(c);
  };
  walk(box);
  return raw
    .join("")
    .split("\n")
    .map((l) => l.replace(/\s+/g, " ").trim())
    .filter(Boolean);
}
