/**
 * Links of paid placements (text ads, shopping offers, sellers): the page links them through the
 * engine's click redirect (`/aclk?…&adurl=<destination>`). A result's `link` is only ever the
 * destination: read from `adurl` where the redirect carries it. A redirect without one (saved
 * pages often have `adurl=` empty) is kept as `tracking_link`, a field that does not claim to be
 * where the offer leads.
 */
import { targetUrl } from "../values.js";

/** The engine's ad-click redirect: `google.<tld>/aclk?`, `googleadservices.com/pagead/aclk?`, or a relative `/aclk?`. */
export const AD_CLICK = /^(?:https?:)?\/\/(?:www\.)?(?:google\.[a-z.]+|googleadservices\.com)\/(?:pagead\/)?aclk\?|^\/aclk\?/i;

const ENGINE_BASE = "https://www.google.com";

/** The destination a click redirect names in `adurl`, when it names one (and it is not another redirect). */
export function adDestination(href: string | undefined): string | undefined {
  if (!href || !AD_CLICK.test(href)) return undefined;
  let inner: string | null;
  try {
    inner = new URL(href, ENGINE_BASE).searchParams.get("adurl");
  } catch {
    return undefined;
  }
  return inner && /^https?:\/\//i.test(inner) && !AD_CLICK.test(inner) ? inner : undefined;
}

/**
 * `link` (the destination) and `tracking_link` (the click redirect) of a placement's anchor `href`:
 * a plain link is the destination; a redirect is the tracking link, and gives the destination from
 * its `adurl` when present.
 */
export function placementLinks(href: string | undefined): { link?: string; tracking_link?: string } {
  if (!href) return {};
  if (!AD_CLICK.test(href)) {
    const link = targetUrl(href);
    return link ? { link } : {};
  }
  let tracking_link: string;
  try {
    tracking_link = new URL(href, ENGINE_BASE).href;
  } catch {
    return {};
  }
  const link = adDestination(href);
  return link ? { link, tracking_link } : { tracking_link };
}
