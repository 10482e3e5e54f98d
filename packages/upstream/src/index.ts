/** Everything the upstream knows: URLs, profiles, fetching, block detection, locations, parsers. */
export { classify, type UpstreamResponse } from "./classify.js";
export { COVERAGE_THRESHOLDS, coverage, parsePage, understood, type Coverage, type Parsed } from "./coverage.js";
export { ConfigFileError, GEOTARGETS_FILE_MAX_BYTES, PROFILES_FILE_MAX_BYTES, readConfigFile, type ConfigFileRule } from "./config-file.js";
export { browserOptionsOf, captchaOptionsOf, checkUpstreamEnv, exitHealthOptionsOf, locationsEnv, readUpstreamEnv, upstreamEnv, type UpstreamConfig, type UpstreamEnv } from "./env.js";
export * from "./html/index.js";
export * from "./values.js";
export { DirectAgents, fetchPage, type FetchFailure, type FetchRequest, type FetchResult, type FetchSettings, type UpstreamTls } from "./fetch.js";
export { ImpersonatingClients } from "./impersonate.js";
export { BROWSER_DEFAULTS, BrowserPool, rssMb, type BrowserFetchResult, type BrowserOptions, type BrowserPages, type BrowserRequest, type ByteCount } from "./browser.js";
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
export { BREAKER_DEFAULTS, type BreakerState, type BreakerStatus } from "./breakers.js";
export { FAILURES, outcomeOf, type FailureKind, type Outcome, type PageClass, type TryOutcome } from "./failures.js";
export { CANARY_PARAMS, formatCanary, runCanary, type CanaryOptions, type CanaryReport, type CanaryRow } from "./canary.js";
export { makeProxy, type Proxy, type ProxyFailure } from "./proxies.js";
export { CAPTCHA_DEFAULTS, CaptchaError, CaptchaSolver, exemptionRequest, readSorryPage, type CaptchaSolverOptions, type SorryPage } from "./captcha.js";
export { EXIT_DEFAULTS, EXITS_FILE_MAX_BYTES, ExitsConfigError, fillGateway, parseExitsConfig, poolsOfList, proxyLabel, readExitsFile, type ExitsConfig, type PoolConfig } from "./exits/config.js";
export {
  claimOf, cooldownMs, EXIT_HEALTH_DEFAULTS, HEALTHY, MemoryExitHealth, step,
  type ExitEvent, type ExitHealth, type ExitHealthOptions, type ExitReason, type ExitState, type ExitStatus,
} from "./exits/health.js";
export { ExitRouter, GATEWAY, isLease, type Lease, type RouterEvents, type Session } from "./exits/router.js";
export { exitsSource, type ExitsSource } from "./exits/source.js";
export {
  createUpstream,
  type ExitPools,
  type ExitRecord,
  rungSummary,
  UpstreamFailure,
  type ParserTable,
  type ScrapeOutcome,
  type SkipRecord,
  type TryRecord,
  type Upstream,
  type UpstreamDeps,
  type UpstreamPage,
  type UpstreamStatus,
} from "./scrape.js";
export { buildUrl, DEFAULT_BASE_URL, type UrlContext } from "./urls.js";
export { normalizeLocationName, uule } from "./uule.js";
