export { startReplayServer, type RecordedRequest, type ReplayOptions, type ReplayRoute, type ReplayServer } from "./server.js";
export { FAULT_MODES, parseFaults, FaultsError, type FaultMode, type Faults } from "./faults.js";
export { REPLAY_KINDS, layoutFor, slugOf, targetOf, type ReplayKind, type Target, type WebLayout } from "./target.js";
