/**
 * Text ads: the units of the ad blocks above (`#tads`) and below (`#tadsb`, `#bottomads`) the
 * results. Basic pages have no ad blocks; their units sit among the results, and a unit is "top"
 * when it comes before the first organic result. Shopping ads (product tiles) are not text ads.
 *
 * Units are found by their classes (`AD_UNIT`) and, in a block where none of those is found (a
 * redesign renamed them), by their shape: an ad's title is a link holding a heading that goes
 * through the ad click redirect (`/aclk`, googleadservices) or names it (`data-rw`), or names the
 * advertiser's site for preconnecting (`data-pcu`, `data-preconnect-urls`); its unit is the largest
 * element around that link holding no other titled link (see `cardsAround`).
 */
import type { AdResult, Link } from "@serp/shared";
import { type Document, type Element, type Scan, all, attr, landmarkIndex, scan, text } from "../../html/index.js";
import { cardsAround, headingIn } from "../../html/cards.js";
import { targetUrl } from "../../values.js";
import { AD_CLICK, adDestination } from "../../values.js";
import { compareDocumentPosition } from "domutils";
import { isTag } from "domhandler";
import { ENGINE_ORIGIN, engineUrl } from "../../hosts.js";

/** One ad: `.uEierd` 2020+ (all layouts), `li.ads-ad` desktop 2019, `li.ads-fr` mobile 2018. */
const AD_UNIT = ".uEierd, li.ads-ad, li.ads-fr";
const AD = {
  title: 'h3, [role="heading"]',
  // role=text 2020+ · cite 2019 · .qzEoUe mobile 2018
  displayedLink: '[role="text"], cite, .qzEoUe',
  // .yDYNvb 2020+ · .ads-creative 2019 · .MUxGbd.lEBKkf mobile 2018
  description: ".yDYNvb, .ads-creative, .BmP5tf > .MUxGbd.lEBKkf",
  source: ".BTu2cd",
  link: "a[href]",
};

/** Attributes only an ad's links carry: the click redirect it rewrites to, the advertiser's site to preconnect to. */
const AD_LINK_ATTRIBUTES = ["data-rw", "data-pcu", "data-preconnect-urls"];

/** An ad's title by shape: a link holding a heading that goes through the ad click redirect, or carries an ad link's attributes. */
function isAdTitle(a: Element): boolean {
  const href = a.attribs.href;
  if (!href || !(AD_CLICK.test(href) || AD_LINK_ATTRIBUTES.some((name) => name in a.attribs))) return false;
  return headingIn(a) !== undefined;
}

/** Every ad unit on the page, found in the web page's one landmark sweep (web/index.ts includes this index). */
export const LANDMARKS = landmarkIndex({
  pageUnits: { every: AD_UNIT },
  /** Ad titles by shape, for blocks where no unit class is found. */
  adTitles: { every: { tags: ["a"], match: isAdTitle } },
});

/** What an ad is read from, found in one scan of its unit. */
const AD_PARTS = [AD.title, AD.link, AD.displayedLink, AD.description, AD.source];

/**
 * domutils' `DocumentPosition.PRECEDING` bit, set by `compareDocumentPosition(a, b)` when `a` comes
 * before `b` (a const enum, unreadable under isolatedModules).
 */
const PRECEDING = 2;

export interface AdPlacement {
  /** Ad blocks above the results. */
  top: Element[];
  /** Ad blocks below the results. */
  bottom: Element[];
  /** Basic pages: where units sit among the results; placed against the first organic result. */
  inline?: { root: Element; firstResult?: Element };
}

export function extractAds(doc: Document, placement: AdPlacement): AdResult[] {
  const { pageUnits: onPage, adTitles } = LANDMARKS.of(doc);
  const units = (container: Element) => {
    const byClass = outermostUnits(onPage, container);
    return byClass.length ? byClass : unitsByShape(adTitles, container);
  };
  const ads: AdResult[] = [];
  const read = (unit: Element, block_position: AdResult["block_position"]) => {
    const ad = readAd(unit, block_position, ads.length + 1);
    if (ad) ads.push(ad);
  };
  for (const container of placement.top) for (const unit of units(container)) read(unit, "top");
  const { inline } = placement;
  if (inline) {
    for (const unit of units(inline.root)) {
      const before =
        !inline.firstResult ||
        (compareDocumentPosition(unit, inline.firstResult) & PRECEDING) !== 0;
      read(unit, before ? "top" : "bottom");
    }
  }
  for (const container of placement.bottom) for (const unit of units(container)) read(unit, "bottom");
  return ads;
}

/** The outermost of the page's ad units inside a container (a unit never holds another). */
function outermostUnits(onPage: readonly Element[], container: Element): Element[] {
  const found = onPage.filter((u) => isInside(u, container));
  const set = new Set(found);
  return found.filter((u) => {
    for (let p = u.parent; p && p !== container; p = p.parent) if (isTag(p) && set.has(p)) return false;
    return true;
  });
}

/**
 * The units of a block by shape: around each ad title in it, the largest element holding no other
 * link with a heading (an ad's or, among the results of a basic page, a result's).
 */
function unitsByShape(adTitles: readonly Element[], container: Element): Element[] {
  const titles = adTitles.filter((a) => isInside(a, container));
  if (!titles.length) return [];
  const own = new Set(titles);
  const bounds = [...titles, ...all("a[href]", container).filter((a) => !own.has(a) && headingIn(a) !== undefined)];
  const units = cardsAround(bounds, container).slice(0, titles.length);
  // A unit is read once, in page order (two titles of one ad widen to the same unit).
  return units.filter((u, i) => units.indexOf(u) === i);
}

function readAd(unit: Element, block_position: AdResult["block_position"], position: number): AdResult | undefined {
  const found = scan(unit, AD_PARTS);
  const heading = found.all(AD.title).find((h) => text(h));
  const anchor = (heading && closestLink(heading, unit)) ?? found.all(AD.link).find((a) => text(a));
  if (!heading || !anchor) return undefined;
  const title = withoutBidiMarks(text(heading));
  const href = attr(anchor, "href");
  const tracking = attr(anchor, "data-rw") ?? (AD_CLICK.test(href ?? "") ? href : undefined) ?? firstClickLink(found);
  // Never the click redirect as `link`: without a destination the ad has only its tracking link.
  const link = advertiserUrl(anchor) ?? adDestination(tracking);
  if (!title || (!link && !tracking)) return undefined;
  const ad: AdResult = { position, block_position, title, ...(link ? { link } : {}) };
  const displayedLinks = found.all(AD.displayedLink);
  const displayed = text(displayedLinks.find((el) => isInside(el, anchor)) ?? displayedLinks[0]);
  if (displayed) ad.displayed_link = displayed;
  if (tracking) ad.tracking_link = new URL(tracking, ENGINE_ORIGIN).href;
  const description = found
    .all(AD.description)
    .filter((el) => !isInside(el, anchor) && !isHeading(el))
    .map((el) => text(el))
    .find((t) => t);
  if (description) ad.description = description;
  const source = found.textOf(AD.source);
  if (source) ad.source = source;
  const sitelinks = adSitelinks(found, anchor);
  if (sitelinks.length) ad.sitelinks = sitelinks;
  return ad;
}

/**
 * Where the ad leads: the link itself when it points at the advertiser, the redirect's `adurl`,
 * or, when the redirect hides the target (basic pages, some 2019 ads), the advertiser's site the
 * page names for preconnecting (`data-pcu`, `data-preconnect-urls`). Call-only ads have none of
 * these: they keep only their tracking link.
 */
function advertiserUrl(anchor: Element): string | undefined {
  const href = attr(anchor, "href");
  if (href && !AD_CLICK.test(href)) return targetUrl(href);
  const adurl = adDestination(href);
  if (adurl) return adurl;
  const site = (attr(anchor, "data-pcu") ?? attr(anchor, "data-preconnect-urls"))?.split(",")[0];
  return site && /^https?:\/\//i.test(site) ? site : undefined;
}

/** 2019 ad titles end with an invisible left-to-right mark. */
function withoutBidiMarks(s: string): string {
  return s.replace(/[\u200e\u200f\u202a-\u202e]/gu, "").trim();
}

function closestLink(heading: Element, unit: Element): Element | undefined {
  for (let node = heading.parent; node && node !== unit; node = node.parent) {
    if (isTag(node) && node.name === "a" && node.attribs.href) return node;
  }
  return undefined;
}

function firstClickLink(unit: Scan): string | undefined {
  return unit
    .all(AD.link)
    .map((a) => attr(a, "href")!)
    .find((h) => AD_CLICK.test(h));
}

function isHeading(el: Element): boolean {
  return el.name === "h3" || el.attribs.role === "heading";
}

/** Links of the search engine's own that are not the ad's (seller ratings, "why this ad"). */
const ENGINE_PAGE = engineUrl({ then: String.raw`\/(?!aclk)` });

function adSitelinks(unit: Scan, titleAnchor: Element): Link[] {
  const out: Link[] = [];
  for (const a of unit.all(AD.link)) {
    if (a === titleAnchor || isInside(a, titleAnchor)) continue;
    const title = text(a);
    const link = targetUrl(attr(a, "href"));
    if (link && ENGINE_PAGE.test(link)) continue;
    if (title && link && !out.some((l) => l.link === link && l.title === title)) out.push({ title, link });
  }
  return out;
}

function isInside(el: Element, ancestor: Element): boolean {
  for (let node = el.parent; node; node = node.parent) if (node === ancestor) return true;
  return false;
}
