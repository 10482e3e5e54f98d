export { startReplayServer, type RecordedRequest, type ReplayOptions, type ReplayRoute, type ReplayServer, type ReplayStats } from "./server.js";
export { FAULT_MODES, parseFaults, FaultsError, type FaultMode, type Faults } from "./faults.js";
export { GUARD_PRESETS, GuardError, guardPreset, parseGuard, type GuardConfig, type GuardPresetName, type GuardTlsLevel } from "./guard.js";
export { describeHello, type HelloDescription, type TlsFamily } from "./fingerprint.js";
export { CHALLENGE_COOKIE, challengeToken, isAutomated, type AutomationNavigator, type AutomationWindow } from "./challenge.js";
export { REPLAY_KINDS, layoutFor, slugOf, targetOf, type ReplayKind, type Target, type WebLayout } from "./target.js";
export {
  EXEMPTION_COOKIE,
  EXIT_CLASSES,
  ExitsError,
  REPLAY_SITE_KEY,
  clientAddress,
  parseExits,
  recaptchaTokenFor,
  type ExitAddressStats,
  type ExitBudget,
  type ExitClass,
  type ExitConfig,
  type ExitProfile,
  type ExitRule,
  type ExitStats,
} from "./exits.js";
