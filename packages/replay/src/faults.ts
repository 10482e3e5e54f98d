/** Faults the replay upstream injects on request, for drills: what they are and when they apply. */
import { isReplayKind, REPLAY_KINDS, type ReplayKind } from "./target.js";

export const FAULT_MODES = [
  "captcha",
  "sorry-redirect",
  "rate-limit",
  "consent-redirect",
  "js-wall",
  "js-redirect",
  "server-error",
  "truncate",
  "hang",
  "reset",
] as const;
export type FaultMode = (typeof FAULT_MODES)[number];

export interface Faults {
  /** Added before answering. */
  latencyMs?: number;
  /** A uniform random extra delay in [0, jitterMs]. */
  jitterMs?: number;
  mode?: FaultMode;
  /** Apply to the next N matching requests, then clear. Unset: until cleared. */
  times?: number;
  /** Only requests of these kinds. Unset: every upstream request. */
  kinds?: ReplayKind[];
}

export class FaultsError extends Error {}

const KEYS = new Set(["latencyMs", "jitterMs", "mode", "times", "kinds"]);

function count(value: unknown, name: string, min: number): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > 3_600_000) {
    throw new FaultsError(`${name} must be an integer from ${min} to 3600000`);
  }
  return value;
}

/** Validates untrusted input (the HTTP control body, CLI flags) into `Faults`. */
export function parseFaults(input: unknown): Faults {
  if (typeof input !== "object" || input === null || Array.isArray(input)) throw new FaultsError("faults must be an object");
  const record = input as Record<string, unknown>;
  const unknown = Object.keys(record).filter((k) => !KEYS.has(k));
  if (unknown.length > 0) throw new FaultsError(`unknown fault keys: ${unknown.join(", ")}`);
  const faults: Faults = {};
  const latencyMs = count(record.latencyMs, "latencyMs", 0);
  const jitterMs = count(record.jitterMs, "jitterMs", 0);
  const times = count(record.times, "times", 1);
  if (latencyMs !== undefined) faults.latencyMs = latencyMs;
  if (jitterMs !== undefined) faults.jitterMs = jitterMs;
  if (times !== undefined) faults.times = times;
  if (record.mode !== undefined) {
    if (!(FAULT_MODES as readonly unknown[]).includes(record.mode)) {
      throw new FaultsError(`mode must be one of ${FAULT_MODES.join(", ")}`);
    }
    faults.mode = record.mode as FaultMode;
  }
  if (record.kinds !== undefined) {
    if (!Array.isArray(record.kinds) || !record.kinds.every(isReplayKind)) {
      throw new FaultsError(`kinds must be a list of ${REPLAY_KINDS.join(", ")}`);
    }
    faults.kinds = [...record.kinds];
  }
  return faults;
}

/** The active faults and how many more requests they apply to. */
export class FaultState {
  private faults: Faults | undefined;
  private remaining = Infinity;

  set(faults: Faults): void {
    this.faults = { ...faults, ...(faults.kinds ? { kinds: [...faults.kinds] } : {}) };
    this.remaining = faults.times ?? Infinity;
  }

  clear(): void {
    this.faults = undefined;
  }

  current(): { faults: Faults | null; remaining: number | null } {
    if (!this.faults) return { faults: null, remaining: null };
    return { faults: this.faults, remaining: Number.isFinite(this.remaining) ? this.remaining : null };
  }

  /** The faults for one request of `kind`, counting it against `times`. */
  take(kind: ReplayKind): Faults | undefined {
    const faults = this.faults;
    if (!faults || (faults.kinds && !faults.kinds.includes(kind))) return undefined;
    this.remaining -= 1;
    if (this.remaining <= 0) this.faults = undefined;
    return faults;
  }
}

export function delayOf(faults: Faults | undefined): number {
  if (!faults) return 0;
  return (faults.latencyMs ?? 0) + Math.floor(Math.random() * ((faults.jitterMs ?? 0) + 1));
}
