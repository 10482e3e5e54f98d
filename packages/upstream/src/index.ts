/** Everything the upstream knows: URLs, profiles, fetching, block detection, locations, parsers. */
export { classify, type PageClass, type UpstreamResponse } from "./classify.js";
export {
  resolveUpstreamOptions,
  upstreamOptionsFromEnv,
  UPSTREAM_DEFAULTS,
  type ResolvedUpstreamOptions,
  type UpstreamOptions,
} from "./config.js";
export * from "./dom.js";
export { fetchPage, type FetchFailure, type FetchRequest, type FetchResult, type FetchSettings } from "./fetch.js";
export { Locations, parseCsv, type LocationRow } from "./locations.js";
export * from "./parsers/index.js";
export { acceptLanguage, PROFILES, profilesFor, type Profile, type ProfileSet, type UrlForm } from "./profiles.js";
export { isResting, ProxyPool, type Proxy, type ProxyFailure, type ProxyPoolOptions } from "./proxies.js";
export {
  createUpstream,
  UpstreamFailure,
  type FailureKind,
  type ParserTable,
  type ScrapeOutcome,
  type TryOutcome,
  type TryRecord,
  type Upstream,
  type UpstreamDeps,
} from "./scrape.js";
export { buildUrl, DEFAULT_BASE_URL, type UrlContext } from "./urls.js";
export { normalizeLocationName, uule } from "./uule.js";
