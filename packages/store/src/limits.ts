/**
 * Per-account limits: deployment defaults, overrides stored with the account, and the effective
 * values both the API (enforcement, GET /v1/account) and the operators' CLI show.
 */

/** Requests per minute when neither the deployment nor the account says otherwise. */
export const DEFAULT_RATE_LIMIT_PER_MINUTE = 600;
/** Jobs pending or processing at once, likewise. */
export const DEFAULT_MAX_JOBS_IN_FLIGHT = 100;
/** The window of a rate override given without one. */
export const DEFAULT_RATE_WINDOW_SECONDS = 60;

/** What an operator set for one account. Absent = the deployment default; 0 = no limit. */
export interface LimitOverrides {
  /** Requests allowed per `rateWindowSeconds`. */
  rateLimit?: number;
  rateWindowSeconds?: number;
  /** Jobs pending or processing at once. */
  maxInFlight?: number;
}

/** A change to the overrides: a number sets one, null removes it (back to the default). */
export type LimitOverridesChange = { [K in keyof LimitOverrides]?: number | null };

export interface LimitDefaults {
  ratePerMinute: number;
  maxInFlight: number;
}

export type LimitSource = "default" | "override";

export interface EffectiveLimits {
  /** `limit` requests per `windowSeconds`; 0 = no limit. */
  rate: { limit: number; windowSeconds: number; source: LimitSource };
  /** At most `limit` jobs pending or processing; 0 = no limit. */
  concurrency: { limit: number; source: LimitSource };
}

export function resolveLimits(overrides: LimitOverrides, defaults: LimitDefaults): EffectiveLimits {
  const rateOverridden = overrides.rateLimit !== undefined;
  return {
    rate: rateOverridden
      ? { limit: overrides.rateLimit!, windowSeconds: overrides.rateWindowSeconds ?? DEFAULT_RATE_WINDOW_SECONDS, source: "override" }
      : { limit: defaults.ratePerMinute, windowSeconds: 60, source: "default" },
    concurrency:
      overrides.maxInFlight !== undefined
        ? { limit: overrides.maxInFlight, source: "override" }
        : { limit: defaults.maxInFlight, source: "default" },
  };
}

/** Field names of the overrides in the account hash. */
export const LIMIT_FIELDS = {
  rateLimit: "limitRate",
  rateWindowSeconds: "limitRateWindow",
  maxInFlight: "limitMaxInFlight",
} as const satisfies Record<keyof LimitOverrides, string>;

/** Reads the overrides back from the account hash; malformed values count as absent. */
export function overridesFromHash(h: Record<string, string | undefined>): LimitOverrides {
  const out: LimitOverrides = {};
  for (const [name, field] of Object.entries(LIMIT_FIELDS) as [keyof LimitOverrides, string][]) {
    const raw = h[field];
    if (raw === undefined || raw === "") continue;
    const n = Number(raw);
    if (Number.isInteger(n) && n >= 0) out[name] = n;
  }
  return out;
}

/** Checks a change before it is stored: whole numbers, a window of at least one second. */
export function validateLimitChange(change: LimitOverridesChange): void {
  for (const [name, value] of Object.entries(change)) {
    if (value === null || value === undefined) continue;
    if (!Number.isInteger(value) || value < 0 || value > 1_000_000_000) throw new Error(`${name} must be a whole number from 0 up`);
    if (name === "rateWindowSeconds" && (value < 1 || value > 86_400)) throw new Error("rateWindowSeconds must be 1 to 86400");
  }
}
