/**
 * How much of a results page the parse understood: of the outbound result links in the page's main
 * results region, the share that ended up in some block. A link is accounted for when its target
 * (after unwrapping the upstream's `/url?q=` redirects, normalized) appears anywhere in the blocks.
 * A layout the parsers do not know shows as links nobody accounted for: the day a layout changes,
 * the figure drops below its kind's threshold (`COVERAGE_THRESHOLDS`) and the page is treated as not
 * understood instead of completing with a fraction of its results.
 *
 * The region, by kind:
 * - web search: the results column `#rso`, and the lower "more results" container `#botstuff`/`#bres`
 *   (full pages); the basic page's `#main`;
 * - news, images, shopping: the results list (`#rso`, else `#search`, `#islrg` for the image grid),
 *   else the basic page's `#main`;
 * - the product pages, the local results page and autocomplete are not lists of outbound results, or
 *   not HTML: their ratio is 1.
 *
 * Left out of the region's links: the upstream's own links (google hosts, relative links, images
 * search `/imgres`), navigation (`role="navigation"`, pagination `#foot`/`#navcnt`), the footer and
 * the related-searches box (`#brs`, `#bres` 2019 "Searches related to" groups are search links anyway).
 * One parse and one walk of the region.
 */
import type { BlocksByEndpoint, Endpoint } from "@serp/shared";
import { isTag } from "domhandler";
import { elementsById, parseHtml, targetUrl, type AnyNode, type Element } from "./dom.js";
import { joinJsonChunks } from "./parsers/web/index.js";

export interface Coverage {
  /** Distinct outbound result links in the results region. */
  links: number;
  /** How many of them some block holds. */
  accounted: number;
  /** accounted / links; 1 when the region has no outbound link (nothing to miss) or the kind has none. */
  ratio: number;
}

/** The results region of each HTML results kind, by landmark id, first found wins (web: all of them). */
const REGION: Partial<Record<Endpoint, { ids: readonly string[]; all?: boolean }>> = {
  "web-search": { ids: ["rso", "botstuff", "bres", "main"], all: true },
  "web-news": { ids: ["rso", "search", "main"] },
  "web-images": { ids: ["islrg", "rso", "search", "main"] },
  "web-shopping-search": { ids: ["rso", "search", "main"] },
};

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

const GOOGLE = /(?:^|\.)(?:google\.[a-z.]+|googleusercontent\.com|gstatic\.com|googleadservices\.com|doubleclick\.net)$/i;

/**
 * Per kind, the least coverage of a page the parsers understood. Measured over every captured page
 * (test/coverage.test.ts prints the table). News and images: every captured page reads 1.00, and a
 * page with half its items in markup the parser does not know reads about 0.5: 0.7 between them.
 * Web search: captured pages read 0.26–1.00 (the lowest, 2025–2026 desktop pages, hold blocks no
 * parser reads yet: video and "things to know" cards, AI-overview sources, entity links), so its
 * threshold is set below the lowest (0.2) and only catches a page the parsers barely understand.
 */
export const COVERAGE_THRESHOLDS: Record<Endpoint, number> = {
  "web-search": 0.2,
  "web-news": 0.7,
  "web-images": 0.7,
  "web-shopping-search": 0.6,
  "web-shopping-product": 0,
  "web-shopping-product-info": 0,
  "web-local": 0,
  "web-autocomplete": 0,
};

export function coverage<E extends Endpoint>(endpoint: E, body: string, blocks: BlocksByEndpoint[E]): Coverage {
  const region = REGION[endpoint];
  if (!region) return { links: 0, accounted: 0, ratio: 1 };
  let html = body;
  if (endpoint === "web-search" && /^\s*\{"/.test(body) && body.includes('/*""*/')) {
    try {
      html = joinJsonChunks(body);
    } catch {
      return { links: 0, accounted: 0, ratio: 0 };
    }
  }
  const doc = parseHtml(html);
  const found = elementsById(doc, region.ids);
  let roots = region.ids.map((id) => found.get(id)).filter((e): e is Element => !!e);
  // The basic page's `#main` only when the full page's landmarks are absent; nested landmarks once.
  if (roots.length > 1 && found.has("main")) roots = roots.filter((r) => r !== found.get("main"));
  roots = roots.filter((r) => !roots.some((o) => o !== r && contains(o, r)));
  if (!region.all) roots = roots.slice(0, 1);

  const links = new Set<string>();
  for (const root of roots) collectLinks(root, links);
  if (links.size === 0) return { links: 0, accounted: 0, ratio: 1 };
  const inBlocks = new Set<string>();
  collectUrls(blocks, inBlocks);
  let accounted = 0;
  for (const l of links) if (inBlocks.has(l)) accounted++;
  return { links: links.size, accounted, ratio: accounted / links.size };
}

/** Outbound links under `root`, normalized, navigation and the upstream's own links left out. */
function collectLinks(root: Element, out: Set<string>): void {
  const stack: AnyNode[] = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (!isTag(node)) continue;
    if (NOT_RESULTS.tags.has(node.name) || NOT_RESULTS.carousels.has(node.name)) continue;
    const { id, role } = node.attribs;
    if ((id && NOT_RESULTS.ids.has(id)) || (role && NOT_RESULTS.roles.has(role))) continue;
    if (node.name === "a") {
      const url = outbound(node.attribs.href);
      if (url) out.add(url);
    }
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
  }
}

function outbound(href: string | undefined): string | undefined {
  if (!href || href.startsWith("#")) return undefined;
  let target = targetUrl(href);
  if (!target) return undefined;
  // Progressive pages write `/url?q=&url=<target>`.
  if (/^https?:\/\/(?:www\.)?google\.[a-z.]+\/url\?/i.test(target)) {
    const inner = new URL(target).searchParams.get("url");
    if (!inner) return undefined;
    target = inner;
  }
  let host: string;
  try {
    host = new URL(target).hostname;
  } catch {
    return undefined;
  }
  return GOOGLE.test(host) ? undefined : normalized(target);
}

/** Scheme, host (lowercase, no `www.`), path without its trailing slash, query; no fragment. */
function normalized(link: string): string | undefined {
  let u: URL;
  try {
    u = new URL(link);
  } catch {
    return undefined;
  }
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

/** Every URL-looking string anywhere in the blocks, normalized. */
function collectUrls(value: unknown, out: Set<string>): void {
  if (typeof value === "string") {
    if (/^https?:\/\//i.test(value)) {
      const n = normalized(value);
      if (n) out.add(n);
    }
  } else if (Array.isArray(value)) {
    for (const v of value) collectUrls(v, out);
  } else if (value && typeof value === "object") {
    for (const v of Object.values(value)) collectUrls(v, out);
  }
}

function contains(ancestor: Element, el: Element): boolean {
  for (let node = el.parent; node; node = node.parent) if (node === ancestor) return true;
  return false;
}
