/** Everything the upstream knows: URLs, profiles, fetching, block detection, locations, parsers. */
export { classify, type PageClass, type UpstreamResponse } from "./classify.js";
export { COVERAGE_THRESHOLDS, coverage, parsePage, understood, type Coverage, type Parsed } from "./coverage.js";
export { resolveUpstreamOptions, UPSTREAM_DEFAULTS, type ResolvedUpstreamOptions, type UpstreamOptions } from "./config.js";
export { locationsEnv, readUpstreamEnv, upstreamEnv, upstreamOptionsOf, type UpstreamEnv } from "./env.js";
export * from "./html/index.js";
export * from "./values.js";
export { DirectAgents, fetchPage, type FetchFailure, type FetchRequest, type FetchResult, type FetchSettings, type UpstreamTls } from "./fetch.js";
export { ImpersonatingClients } from "./impersonate.js";
export { BROWSER_DEFAULTS, BrowserPool, rssMb, type BrowserFetchResult, type BrowserOptions, type BrowserRequest, type ByteCount } from "./browser.js";
export { Locations, parseCsv, type LocationRow } from "./locations.js";
export * from "./kinds/index.js";
export {
  acceptLanguage,
  allProfiles,
  claimedFamily,
  parseProfileTable,
  PROFILE_SETS,
  profileTable,
  ProfileTableError,
  profilesFor,
  type Profile,
  type ProfileSet,
  type ProfileTable,
  type TransportName,
  type UrlForm,
} from "./profiles.js";
export { profileSource, shippedProfilesFile, type ProfileSource, type UpstreamLog } from "./profile-source.js";
export { BREAKER_DEFAULTS, type BreakerState, type BreakerStatus, type Outcome } from "./breakers.js";
export { CANARY_PARAMS, formatCanary, runCanary, type CanaryOptions, type CanaryReport, type CanaryRow } from "./canary.js";
export { isResting, ProxyPool, type Proxy, type ProxyFailure, type ProxyPoolOptions } from "./proxies.js";
export {
  createUpstream,
  outcomeOf,
  rungSummary,
  UpstreamFailure,
  type FailureKind,
  type ParserTable,
  type ScrapeOutcome,
  type SkipRecord,
  type TryOutcome,
  type TryRecord,
  type Upstream,
  type UpstreamDeps,
  type UpstreamPage,
  type UpstreamStatus,
} from "./scrape.js";
export { buildUrl, DEFAULT_BASE_URL, type UrlContext } from "./urls.js";
export { normalizeLocationName, uule } from "./uule.js";
