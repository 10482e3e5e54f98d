/**
 * When a failed webhook delivery is tried again. The schedule is DECISIONS.md's (5 s … 12 h, about
 * a day; tests pass a short one). A receiver's Retry-After is honoured when it asks for longer
 * than the schedule, up to the schedule's longest delay; it never makes a retry come sooner.
 */
export function retryDelayMs(delaysMs: readonly number[], attemptsMade: number, retryAfterMs: number | null): number {
  if (delaysMs.length === 0) return 0;
  const scheduled = delaysMs[Math.min(Math.max(attemptsMade, 1), delaysMs.length) - 1]!;
  if (retryAfterMs === null || retryAfterMs <= scheduled) return scheduled;
  return Math.min(retryAfterMs, Math.max(...delaysMs));
}

/** `Retry-After` as milliseconds from now: delta-seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | null {
  if (!value) return null;
  const v = value.trim();
  if (/^\d{1,10}$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** Thrown by a failed attempt that will be retried; carries the receiver's Retry-After. */
export class DeliveryFailed extends Error {
  override readonly name = "DeliveryFailed";
  constructor(
    message: string,
    readonly retryAfterMs: number | null,
  ) {
    super(message);
  }
}

/** The BullMQ backoff strategy of the webhook queue (`attemptsMade` counts the failed attempts). */
export function webhookBackoff(delaysMs: readonly number[]) {
  return (attemptsMade: number, _type?: string, err?: Error): number =>
    retryDelayMs(delaysMs, attemptsMade, err instanceof DeliveryFailed ? err.retryAfterMs : null);
}
