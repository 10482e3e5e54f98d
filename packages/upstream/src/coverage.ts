/**
 * How much of a results page the parse understood: of the result links in the page's main results
 * region, the share that ended up in some block. A link is accounted for when its target (after
 * unwrapping the upstream's `/url?q=`, `/imgres?imgrefurl=` and Wayback wrappers, normalized)
 * appears anywhere in the blocks. A layout the parsers do not know shows as links nobody accounted
 * for: the day a layout changes, the figure drops (in `serp_parse_coverage_ratio`), and below its
 * kind's threshold (`COVERAGE_THRESHOLDS`) the page is treated as not understood instead of
 * completing with a fraction of its results.
 *
 * The figure is read from the tree the parser built (`parsePage`: one parse, then one walk of the
 * region), and crosses a parse thread's boundary as a small object beside the blocks.
 *
 * A link inside a block the parser knows (a kind's `coverage.known`: on web, the AI overview, the
 * related questions, top stories and discussions it read, and the carousels and sections it sets aside
 * on purpose, such as videos and social posts) counts as understood whether or not its target reached
 * the blocks: the figure is about markup nobody understood, not about blocks the service chose not to
 * return in full. The figure says how many were counted so (`known`).
 *
 * Each kind's module (kinds/) declares its region (`coverage.region`: the results column or list,
 * else the basic page's `#main`) and its threshold; kinds not measured (the product pages, the local
 * results page, autocomplete: not lists of outbound results, or not HTML) read ratio 1, layout `none`.
 * A region's result links are the titled ones (a heading inside or around the link: a result's title),
 * since a page also holds plenty of untitled links the service does not return (sitelinks, entity and
 * profile links); where the region has no titled link (image tiles, the WML page that titles results
 * with a plain span), every outbound link counts. Image tiles link their source page (directly or
 * through `/imgres?imgrefurl=`); the upstream's own product pages (`/shopping/product/<id>`) count by
 * product id.
 *
 * A page that ends inside its results region (nothing follows the region: the rest of the page, its
 * foot and scripts, never arrived) reads 0 and is marked `cut`: what is missing cannot be counted,
 * and a page cut in half would otherwise read as well understood as a whole one.
 *
 * Left out of the region's links: the upstream's own links (google hosts, relative links), navigation
 * (`role="navigation"`, pagination `#foot`/`#navcnt`), the footer, the related-searches box (`#brs`),
 * and carousels of media and entities.
 */
import { ENDPOINTS, type BlocksByEndpoint, type CoverageLayout, type Endpoint, type ParseCoverage } from "@serp/shared";
import { isTag, isText } from "domhandler";
import {
  landmarkIndex,
  parseHtml,
  withDocument,
  type AnyNode,
  type Document,
  type Element,
} from "./html/index.js";
import { targetUrl, unwrapWayback } from "./values.js";
import { kindOf, PARSERS } from "./kinds/index.js";
import type { RegionLandmarks } from "./kinds/kind.js";
import { engineHostPattern, engineHostname, engineUrl } from "./hosts.js";

export type Coverage = ParseCoverage;

/** A parse's blocks and how much of the page they account for. */
export interface Parsed<E extends Endpoint> {
  blocks: BlocksByEndpoint[E];
  coverage: Coverage;
}

/** The results region of each measured kind (its module's `coverage.region`): groups of landmark ids, the first group found wins. */
const REGION: Partial<Record<Endpoint, readonly (readonly string[])[]>> = Object.fromEntries(
  ENDPOINTS.flatMap((e) => (kindOf(e).coverage.region ? [[e, kindOf(e).coverage.region]] : [])),
);
const REGION_IDS = Object.fromEntries(Object.entries(REGION).map(([k, groups]) => [k, groups.flat()])) as Partial<Record<Endpoint, string[]>>;
/**
 * Each kind's region landmarks by id, found by one sweep of the page (which stops once all are
 * found), kept on the page. A kind whose parser's own landmarks hold its region's (web search) names
 * that index: its parser's sweep found them already, at no sweep of their own.
 */
const REGION_LANDMARKS = Object.fromEntries(
  Object.entries(REGION_IDS).map(([kind, ids]) => [
    kind,
    kindOf(kind as Endpoint).coverage.landmarks ?? landmarkIndex(Object.fromEntries(ids.map((id) => [id, { first: { attributes: { id } } }]))),
  ]),
) as Partial<Record<Endpoint, RegionLandmarks>>;
/** Landmarks only full (JavaScript) pages have; a region found without them is a basic page's. */
const FULL_LANDMARKS = new Set(["rso", "islrg", "is-results", "botstuff", "bres"]);

/** Landmarks whose links are navigation, not results. */
const NOT_RESULTS = {
  ids: new Set(["foot", "navcnt", "brs", "footcnt", "fbar", "top_nav", "hdtb", "appbar", "sfooter"]),
  roles: new Set(["navigation", "contentinfo", "banner"]),
  tags: new Set(["script", "style", "noscript", "template", "svg", "head", "footer", "nav"]),
  /**
   * Carousels of media and entities (videos, images, "top sights", posts) link many pages each; they
   * are not the list of results whose loss the figure should show, and would drown it.
   */
  carousels: new Set(["g-scrolling-carousel", "g-inner-card", "image-carousel", "g-flippy-carousel"]),
};

const HEADING = new Set(["h1", "h2", "h3", "h4", "h5", "h6"]);
const GOOGLE = engineHostname(["usercontent", "gstatic", "adservices", "doubleclick"]);
/** Links on the upstream's own host that may stand for a result: redirects, image results, product pages. */
const GOOGLE_RESULT_PATH = /^\/(?:url|interstitial|aclk|imgres)\b|^\/shopping\/product\/\d/;
/** An absolute link to the upstream's own pages that stands for no result, told without parsing it as a URL. */
const GOOGLE_OWN = engineUrl({ then: String.raw`\/(?!url\b|interstitial\b|aclk\b|imgres\b|shopping\/product\/)` });
const PRODUCT = /\/shopping\/product\/(\d+)/;
/** An absolute link whose host is not the upstream's (a Google host ends `google.<tld>` before the path). */
const OTHER_SITE = new RegExp(String.raw`^https?:\/\/(?![^/?#]*${engineHostPattern({ subdomains: "none" })}(?:[:/?#]|$))`, "i");
/** `width=device-width`: only the mobile pages carry it (desktop pages, 2019–2026, do not). */
const MOBILE_VIEWPORT = /<meta\b(?=[^>]*\bviewport\b)(?=[^>]*width=device-width)[^>]*>/i;

/**
 * Per kind, the least coverage of a page the parsers understood; below it the page is not taken.
 * Each kind's module sets its own (`coverage.threshold`), measured over every captured page
 * (test/conformance prints the table). Every kind: a page cut short inside its results region reads 0.
 */
export const COVERAGE_THRESHOLDS = Object.fromEntries(ENDPOINTS.map((e) => [e, kindOf(e).coverage.threshold])) as Record<Endpoint, number>;

/** Whether the page was understood well enough to be sold. */
export function understood(endpoint: Endpoint, c: Coverage): boolean {
  return !c.cut && c.ratio >= COVERAGE_THRESHOLDS[endpoint];
}

/**
 * Parses a page with its kind's parser (or the one given) and measures its coverage on the same
 * tree. A parser that builds no tree through `parseHtml` (a caller's own) gets the page parsed
 * once more for the figure.
 */
export function parsePage<E extends Endpoint>(
  endpoint: E,
  body: string,
  parser: (body: string) => BlocksByEndpoint[E] = PARSERS[endpoint] as (body: string) => BlocksByEndpoint[E],
): Parsed<E> {
  const { value: blocks, doc } = withDocument(() => parser(body));
  if (!REGION[endpoint]) return { blocks, coverage: NOT_MEASURED };
  return { blocks, coverage: coverage(endpoint, body, doc ?? parseBody(endpoint, body), blocks) };
}

const NOT_MEASURED: Coverage = Object.freeze({ links: 0, accounted: 0, ratio: 1, layout: "none" });

/** The page a body is or carries (`wrapped`: web search's progressive JSON chunks). */
function parseBody(endpoint: Endpoint, body: string): Document {
  const wrapped = kindOf(endpoint).wrapped;
  return parseHtml(wrapped?.test(body) ? wrapped.page(body) : body);
}

/** The figure for a page already parsed into `doc` (`body` is its text, read for the layout only). */
export function coverage<E extends Endpoint>(endpoint: E, body: string, doc: Document, blocks: BlocksByEndpoint[E]): Coverage {
  const region = REGION[endpoint];
  if (!region) return NOT_MEASURED;
  const found = regionLandmarks(endpoint, doc);
  const group = region.find((ids) => ids.some((id) => found.has(id))) ?? [];
  let roots = group.map((id) => found.get(id)).filter((e): e is Element => !!e);
  roots = roots.filter((r) => !roots.some((o) => o !== r && contains(o, r)));
  const layout = layoutOf(endpoint, body, found, roots.length > 0);
  if (roots.length === 0) return { links: 0, accounted: 0, ratio: 1, layout };

  // Titled links are the results; a region without any (image tiles, the WML page) counts them all.
  const hrefs: Hrefs = { titled: new Map(), untitled: new Map() };
  for (const root of roots) collectLinks(root, hrefs);
  /** Each result link's target as written, to its normalized form: a block holding the same text needs no parse. */
  const written = new Map<string, string>();
  /** Each result link, normalized, to the anchors that carry it. */
  const resultLinks = (list: Map<string, Element[]>) => {
    const out = new Map<string, Element[]>();
    for (const [href, anchors] of list) {
      const l = resultLink(href, written);
      if (l !== undefined) out.set(l, [...(out.get(l) ?? []), ...anchors]);
    }
    return out;
  };
  let links = resultLinks(hrefs.titled);
  if (links.size === 0) links = resultLinks(hrefs.untitled);
  const counted = [...links.keys()];
  const inBlocks = new Set<string>();
  collectUrls(blocks, { out: inBlocks, written, hosts: new Set(counted.map((l) => l.split(HOST_END, 1)[0]!)), seen: new Set() });
  // A link inside a block the parser knows is understood, whether or not its target reached the blocks.
  const known = kindOf(endpoint).coverage.known?.(doc, blocks);
  let accounted = 0;
  let inKnown = 0;
  for (const l of counted) {
    if (inBlocks.has(l)) accounted++;
    else if (known && links.get(l)!.some(known)) {
      accounted++;
      inKnown++;
    }
  }
  const figure = { links: counted.length, accounted, layout, ...(inKnown > 0 ? { known: inKnown } : {}) };
  if (endsInside(roots) && !CLOSED.test(body.slice(-256))) return { ...figure, ratio: 0, cut: true };
  return { ...figure, ratio: counted.length === 0 ? 1 : accounted / counted.length };
}

/** The kind's region landmarks found on the page, by id. */
function regionLandmarks(endpoint: Endpoint, doc: Document): Map<string, Element> {
  const landmarks = REGION_LANDMARKS[endpoint]!.of(doc);
  const found = new Map<string, Element>();
  for (const id of REGION_IDS[endpoint]!) {
    const el = landmarks[id];
    if (el) found.set(id, el);
  }
  return found;
}

function layoutOf(endpoint: Endpoint, body: string, found: ReadonlyMap<string, Element>, region: boolean): CoverageLayout {
  if (kindOf(endpoint).wrapped?.test(body)) return "json";
  if (!region) return "unknown";
  if (![...found.keys()].some((id) => FULL_LANDMARKS.has(id))) return "basic";
  return MOBILE_VIEWPORT.test(body.slice(0, 64 * 1024)) ? "mobile" : "full";
}

/** A page whose text closes its document arrived whole, whatever its region is followed by. */
const CLOSED = /<\/(?:html|body)>\s*$/i;

/**
 * Nothing follows the last region in the document: no element and no text after it. parse5 closes
 * whatever is open where the text ends, so a page cut inside its results region ends there; a whole
 * page has more after its results (the foot, scripts, the footer), or at least closes its document
 * (`CLOSED`; pages saved by SingleFile leave the closing tags out, never what follows the results).
 */
function endsInside(roots: readonly Element[]): boolean {
  const last = roots.reduce((a, b) => (follows(a, b) ? b : a));
  for (let node: AnyNode | null = last; node; node = node.parent) {
    for (let next = node.next; next; next = next.next) {
      if (isTag(next) || (isText(next) && next.data.trim())) return false;
    }
  }
  return true;
}

/**
 * The links under `root` outside navigation, as written, sorted by whether they are titled: a heading
 * inside the link or around it. Only the ones counted are then read as URLs.
 */
interface Hrefs {
  /** Each link as written, to the anchors that carry it. */
  titled: Map<string, Element[]>;
  untitled: Map<string, Element[]>;
}

function collectLinks(root: Element, out: Hrefs): void {
  const stack: Element[] = [root];
  /** Whether each stacked element sits inside a heading. */
  const inHeading: boolean[] = [false];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const under = inHeading.pop()!;
    if (NOT_RESULTS.tags.has(node.name) || NOT_RESULTS.carousels.has(node.name)) continue;
    const { id, role } = node.attribs;
    if ((id && NOT_RESULTS.ids.has(id)) || (role && NOT_RESULTS.roles.has(role))) continue;
    if (node.name === "a") {
      const href = node.attribs.href;
      if (href !== undefined && href !== "" && !href.startsWith("#")) {
        const list = under || hasHeading(node) ? out.titled : out.untitled;
        list.set(href, [...(list.get(href) ?? []), node]);
      }
    }
    const heading = under || isHeading(node);
    // Only elements hold links: text and comments (most of a page's nodes) are not stacked.
    for (let i = node.children.length - 1; i >= 0; i--) {
      const child = node.children[i]!;
      if (isTag(child)) {
        stack.push(child);
        inHeading.push(heading);
      }
    }
  }
}

function hasHeading(el: Element): boolean {
  for (const child of el.children) if (isTag(child) && (isHeading(child) || hasHeading(child))) return true;
  return false;
}

const isHeading = (el: Element): boolean => HEADING.has(el.name) || el.attribs.role === "heading";

/** The result a link stands for, normalized; undefined for navigation and the upstream's own pages. */
function resultLink(raw: string, written: Map<string, string>): string | undefined {
  const href = unwrapWayback(raw);
  if (!href || href.startsWith("#")) return undefined;
  // Relative links are the upstream's own: only its redirects and result pages say anything.
  if (href.startsWith("/") && !href.startsWith("//") && !GOOGLE_RESULT_PATH.test(href)) return undefined;
  if (GOOGLE_OWN.test(href)) return undefined;
  // A link straight to a site is its own target: parsed once (targetUrl would parse it only to unwrap nothing).
  let target = OTHER_SITE.test(href) ? href : targetUrl(href);
  let u = parsed(target);
  if (!u) return undefined;
  if (GOOGLE.test(u.hostname)) {
    const product = PRODUCT.exec(u.pathname)?.[1];
    if (product) return `product:${product}`;
    // `/imgres?imgrefurl=`: the page the image is on; progressive pages write `/url?q=&url=<target>`.
    const inner = u.pathname === "/imgres" ? u.searchParams.get("imgrefurl") : u.pathname === "/url" ? u.searchParams.get("url") : null;
    target = unwrapWayback(inner ?? undefined);
    u = parsed(target);
    if (!u || GOOGLE.test(u.hostname)) return undefined;
  }
  const key = normalizedUrl(u);
  if (key !== undefined) written.set(target!, key);
  return key;
}

function parsed(link: string | undefined): URL | undefined {
  if (!link) return undefined;
  try {
    return new URL(link);
  } catch {
    return undefined;
  }
}

/** Scheme, host (lowercase, no `www.`), path without its trailing slash, query; no fragment. */
function normalized(link: string): string | undefined {
  const u = parsed(link);
  return u && normalizedUrl(u);
}

function normalizedUrl(u: URL): string | undefined {
  if (u.protocol !== "http:" && u.protocol !== "https:") return undefined;
  const host = u.hostname.toLowerCase().replace(/^www\./, "");
  let path = u.pathname;
  try {
    path = decodeURI(path);
  } catch {
    // keep it encoded
  }
  return `${host}${path.replace(/\/+$/, "")}${u.search}`;
}

/** Where the host ends in a normalized link (`host/path?query`, the path may be empty). */
const HOST_END = /[/?]/;
/** A URL's host as written, when it is plain ASCII (what the URL parser leaves as it is, but for case). */
const ASCII_HOST = /^https?:\/\/(?:[^@/?#]*@)?([\w.-]+)(?=[:/?#]|$)/i;

/**
 * Every URL-looking string anywhere in the blocks, normalized; product ids as `product:<id>`. Only
 * strings that may match a counted link are parsed as URLs: a block's URL on a host no counted link
 * is on (thumbnails, favicons, sources) is passed over by a look at its host.
 */
function collectUrls(value: unknown, c: UrlCollection, key?: string): void {
  if (typeof value === "string") {
    if (key === "product_id") c.out.add(`product:${value}`);
    else if (/^https?:\/\//i.test(value) && !c.seen.has(value)) {
      c.seen.add(value);
      const known = c.written.get(value);
      if (known !== undefined) return void c.out.add(known);
      // A displayed link (`https://example.com › page`) is text, not a link.
      if (/\s/.test(value)) return;
      const host = ASCII_HOST.exec(value)?.[1]?.toLowerCase().replace(/^www\./, "");
      if (host !== undefined && !c.hosts.has(host)) return;
      const n = normalized(value);
      if (n) c.out.add(n);
    }
  } else if (Array.isArray(value)) {
    for (const v of value) collectUrls(v, c);
  } else if (value && typeof value === "object") {
    for (const [k, v] of Object.entries(value)) collectUrls(v, c, k);
  }
}

interface UrlCollection {
  out: Set<string>;
  /** Result links' targets as written, normalized (see `collectLinks`). */
  written: ReadonlyMap<string, string>;
  /** The hosts of the counted links. */
  hosts: ReadonlySet<string>;
  seen: Set<string>;
}

function contains(ancestor: Element, el: Element): boolean {
  for (let node = el.parent; node; node = node.parent) if (node === ancestor) return true;
  return false;
}

/** Whether `b` comes after `a` in the document (neither holds the other). */
function follows(a: Element, b: Element): boolean {
  const path = (el: AnyNode): AnyNode[] => {
    const p: AnyNode[] = [];
    for (let n: AnyNode | null = el; n; n = n.parent) p.unshift(n);
    return p;
  };
  const pa = path(a);
  const pb = path(b);
  let i = 0;
  while (pa[i] === pb[i]) i++;
  const siblings = pa[i - 1] && "children" in pa[i - 1]! ? (pa[i - 1] as Element).children : [];
  return siblings.indexOf(pb[i] as never) > siblings.indexOf(pa[i] as never);
}
