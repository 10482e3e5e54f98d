/**
 * The upstream's hosts, written once: the engine in every country and the other domains its pages
 * serve pictures, cached copies and ads from. The parsers, the value readers and the coverage figure
 * ask here whether a link stays on the engine (a result's own link never does) or leads off it.
 */

/** The engine's own origin: relative links on its pages are resolved against it. */
export const ENGINE_ORIGIN = "https://www.google.com";

/** `google.com`, `google.co.uk`, `google.de` …: the engine in every country. */
const ENGINE_DOMAIN = String.raw`google\.[a-z.]+`;

/** The engine's other domains. */
export const ENGINE_DOMAINS = {
  /** Pictures and scripts. */
  gstatic: String.raw`gstatic\.com`,
  /** Pictures users uploaded, cached copies of pages. */
  usercontent: String.raw`googleusercontent\.com`,
  /** Ad clicks. */
  adservices: String.raw`googleadservices\.com`,
  doubleclick: String.raw`doubleclick\.net`,
} as const;

/** Where a URL's host ends: a port, a path, a query, a fragment, or the URL's end. */
const HOST_END = String.raw`(?:[:/?#]|$)`;

const SUBDOMAINS = { www: String.raw`(?:www\.)?`, any: String.raw`(?:[a-z0-9-]+\.)*`, none: "" } as const;

export interface EngineHosts {
  /**
   * Which hosts of the engine's domain (and of `also`): `www` (the bare domain or `www.`, the
   * default), `any` subdomain (labels of letters, digits and hyphens), `none` (the domain with
   * anything before it, even in the same label: `withgoogle.com`), or at most one subdomain of
   * those named (each a regex source for one label: `maps`, `[a-z]+`).
   */
  subdomains?: "www" | "any" | "none" | readonly string[];
  /** The engine's other domains that count too, and a caller's own patterns (`{ pattern }`, a regex source). */
  also?: readonly (keyof typeof ENGINE_DOMAINS | { pattern: string })[];
}

/** The engine's hosts as a regex source, unanchored, for a pattern that needs more around them. */
export function engineHostPattern({ subdomains = "www", also = [] }: EngineHosts = {}): string {
  const sub = typeof subdomains === "string" ? SUBDOMAINS[subdomains] : `(?:${subdomains.map((s) => `${s}\\.`).join("|")})?`;
  const domains = [ENGINE_DOMAIN, ...also.map((d) => (typeof d === "string" ? ENGINE_DOMAINS[d] : d.pattern))];
  return `${sub}(?:${domains.join("|")})`;
}

/**
 * An absolute http(s) URL on the engine's hosts, followed by `then` (a regex source: a path, or by
 * default the host's end). Case is ignored.
 */
export function engineUrl(hosts: EngineHosts & { then?: string } = {}): RegExp {
  return new RegExp(String.raw`^https?:\/\/${engineHostPattern(hosts)}${hosts.then ?? HOST_END}`, "i");
}

/** A host name that is one of the engine's domains (the engine's and `also`), or any subdomain of one. */
export function engineHostname(also: readonly (keyof typeof ENGINE_DOMAINS)[] = []): RegExp {
  return new RegExp(`(?:^|\\.)(?:${[ENGINE_DOMAIN, ...also.map((d) => ENGINE_DOMAINS[d])].join("|")})$`, "i");
}
