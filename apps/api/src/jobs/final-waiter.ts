import type { Redis } from "ioredis";

/**
 * Lets live requests wait for their job to become final. One subscription per API process on
 * the final channel wakes the waiter at once: the store announces a job only as it settles, so
 * the announcement is the answer and nothing is read. A slow poll covers a message missed while
 * the subscriber was reconnecting. Register before enqueueing so a fast job cannot be missed.
 */
export class FinalWaiter {
  private readonly waiters = new Map<string, () => void>();

  constructor(
    private readonly subscriber: Redis,
    private readonly channel: string,
    private readonly pollMs = 1_000,
  ) {
    subscriber.on("message", (ch: string, jobId: string) => {
      if (ch === this.channel) this.waiters.get(jobId)?.();
    });
  }

  async start(): Promise<void> {
    await this.subscriber.subscribe(this.channel);
  }

  /**
   * Resolves true once the job is announced final or `isFinal()` holds at a poll, or false at the
   * deadline.
   */
  wait(jobId: string, deadlineMs: number, isFinal: () => Promise<boolean>): { done: Promise<boolean>; cancel: () => void } {
    let settle!: (final: boolean) => void;
    const done = new Promise<boolean>((resolve) => (settle = resolve));
    let finished = false;
    let checking = false;
    const finish = (final: boolean) => {
      if (finished) return;
      finished = true;
      clearTimeout(deadline);
      clearInterval(poll);
      this.waiters.delete(jobId);
      settle(final);
    };
    const check = async () => {
      if (finished || checking) return;
      checking = true;
      try {
        if (await isFinal()) finish(true);
      } catch {
        // Storage hiccup: the next poll or the deadline decides.
      } finally {
        checking = false;
      }
    };
    this.waiters.set(jobId, () => finish(true));
    const deadline = setTimeout(() => finish(false), deadlineMs);
    const poll = setInterval(() => void check(), this.pollMs);
    return { done, cancel: () => finish(false) };
  }

  get pending(): number {
    return this.waiters.size;
  }
}
