/**
 * "Discussions and forums" → `discussions_and_forums`. A section of the results column headed by its
 * own level-2 heading (`[role="heading"][aria-level="2"]` on mobile 2023, web-mobile/paris-mobile-2023;
 * an `<h2>` on other layouts), listing forum posts (Quora, Reddit and the like). Each post is a link
 * around a level-3 title, followed by a line naming the site and what the card shows of the thread:
 *
 *   What are the best things to do in Paris …   ·   www.quora.com · Feb 18, 2011 · 5 posts
 *
 * The section is found by its heading's text (the upstream's wording in the languages it is served
 * in), not by class names; its posts are never organic results (see `inDiscussions`).
 */
import type { DiscussionAndForum } from "@serp/shared";
import { isTag } from "domhandler";
import { attr, landmarkIndex, text, textWithout, type Document, type Element } from "../../html/index.js";
import { targetUrl } from "../../values.js";

/** Section headings: level 2, as a role (mobile 2023) or a tag. */
const SECTION_HEADING = '[role="heading"][aria-level="2"], h2';
/** A post's title inside its link. */
const POST_TITLE = '[role="heading"][aria-level="3"], h3';
/** The section's name as the upstream writes it. */
const DISCUSSIONS =
  /^(?:discussions and forums|discussions et forums|diskussionen und foren|discussioni e forum|discusiones y foros|discussões e fóruns|dyskusje i fora|discussies en forums|обсуждения и форумы|ディスカッションとフォーラム)$/i;
/** How far above its heading a section's posts may sit (heading and list are siblings under the section). */
const MAX_CLIMB = 4;

/** Found in the web page's one landmark sweep (web/index.ts includes this index). */
export const LANDMARKS = landmarkIndex({
  sectionHeadings: { every: SECTION_HEADING },
  postTitles: { every: POST_TITLE },
});

/** A year or a relative age on the card's line. */
const DATE_LIKE = /\b(?:1[89]|20)\d{2}\b|\bago\b|\bil y a\b|\bvor\s+\d|\bhace\s+\d|назад|前/iu;

/** The discussions sections of the page. */
export function discussionSections(doc: Document): Element[] {
  const sections: Element[] = [];
  for (const heading of LANDMARKS.of(doc).sectionHeadings) {
    if (!DISCUSSIONS.test(text(heading))) continue;
    const section = sectionOf(heading, doc);
    if (section && !sections.includes(section)) sections.push(section);
  }
  return sections;
}

/** The nearest ancestor of the heading that also holds post titles. */
function sectionOf(heading: Element, doc: Document): Element | undefined {
  const titles = LANDMARKS.of(doc).postTitles;
  let node: Element | undefined = heading;
  for (let i = 0; i <= MAX_CLIMB && node; i++) {
    const n: Element = node;
    if (titles.some((t) => contains(n, t))) return n;
    node = n.parent && isTag(n.parent) ? n.parent : undefined;
  }
  return undefined;
}

/** Whether an element (a result's link) lies in one of the sections. */
export function inDiscussions(sections: readonly Element[]): (el: Element) => boolean {
  return (el) => sections.some((s) => contains(s, el));
}

export function extractDiscussions(doc: Document, sections: readonly Element[]): DiscussionAndForum[] {
  const posts: DiscussionAndForum[] = [];
  const titles = LANDMARKS.of(doc).postTitles;
  for (const section of sections) {
    for (const heading of titles) {
      if (!contains(section, heading)) continue;
      const anchor = enclosingLink(heading, section);
      const link = targetUrl(attr(anchor, "href"));
      const title = text(heading);
      if (!anchor || !link || !title || posts.some((p) => p.link === link)) continue;
      posts.push({ position: posts.length + 1, title, link, ...cardLine(anchor, heading) });
    }
  }
  return posts;
}

/** `www.quora.com · Feb 18, 2011 · 5 posts` → source, date and the rest as extensions. */
function cardLine(anchor: Element, heading: Element): Omit<DiscussionAndForum, "position" | "title" | "link"> {
  const parts = textWithout(anchor, (e) => e === heading || e.name === "img")
    .split(/\s*·\s*/)
    .map((p) => p.trim())
    .filter(Boolean);
  const out: Omit<DiscussionAndForum, "position" | "title" | "link"> = {};
  const [source, ...rest] = parts;
  if (source) out.source = source;
  const date = rest.find((p) => DATE_LIKE.test(p));
  if (date) out.date = date;
  const extensions = rest.filter((p) => p !== date);
  if (extensions.length) out.extensions = extensions;
  return out;
}

function enclosingLink(heading: Element, upTo: Element): Element | undefined {
  for (let node = heading.parent; node && node !== upTo; node = node.parent) {
    if (isTag(node) && node.name === "a") return node.attribs.href ? node : undefined;
  }
  return undefined;
}

function contains(ancestor: Element, el: Element): boolean {
  for (let node = el.parent; node; node = node.parent) if (node === ancestor) return true;
  return false;
}
