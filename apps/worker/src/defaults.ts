/**
 * A worker process's defaults, written once: env.ts gives them to unset variables, and the runtime
 * and webhook delivery to callers (tests) that leave an option out.
 */
export const WORKER_DEFAULTS = {
  /** The share of a process's slots per queue one account may hold (docs/FAIRNESS.md); 1: no cap. */
  accountShare: 0.75,
  /** A job's lock without renewal: a killed worker's jobs are retaken after about this long. */
  lockDurationMs: 15_000,
  /** A receiver that has not answered in this long counts as a failed delivery attempt. */
  webhookTimeoutMs: 15_000,
  /** Deliveries in flight in one process. */
  webhookConcurrency: 32,
} as const;
