import type { Redis } from "ioredis";
import { recordFromFields, type JobRecord } from "@serp/store";

/**
 * Lets live requests wait for their job to become final. The jobs this process waits for name its
 * own reply channel, on which the store publishes each one's settled record as it settles: the
 * message is the answer and nothing is read back. The final channel, on which every settlement is
 * announced by id, wakes a waiter too (then the record is read), and a slow poll covers a message
 * missed while the subscriber was reconnecting. Register before enqueueing so a fast job cannot be
 * missed.
 */
export class FinalWaiter {
  /** Who waits for each job: usually one request, two when a retry with its Idempotency-Key waits too. */
  private readonly waiters = new Map<string, Set<(record?: JobRecord) => void>>();

  constructor(
    private readonly subscriber: Redis,
    private readonly channel: string,
    /** This process's reply channel (the job store's `replyChannel`). */
    readonly replyChannel: string,
    private readonly pollMs = 1_000,
  ) {
    subscriber.on("message", (ch: string, message: string) => {
      if (ch === this.channel) this.wake(message);
      else if (ch === this.replyChannel) this.reply(message);
    });
  }

  async start(): Promise<void> {
    await this.subscriber.subscribe(this.channel, this.replyChannel);
  }

  private reply(message: string): void {
    let record: JobRecord;
    try {
      record = recordFromFields(JSON.parse(message) as string[]);
    } catch {
      return; // Not a record: the announcement on the final channel still wakes the waiter.
    }
    this.wake(record.job.id, record);
  }

  private wake(jobId: string, record?: JobRecord): void {
    for (const waiter of this.waiters.get(jobId) ?? []) waiter(record);
  }

  /**
   * Resolves with the settled record once it is published on the reply channel, true once the job
   * is announced final or `isFinal()` holds at a poll (read the record), or false at the deadline.
   */
  wait(jobId: string, deadlineMs: number, isFinal: () => Promise<boolean>): { done: Promise<JobRecord | boolean>; cancel: () => void } {
    let settle!: (final: JobRecord | boolean) => void;
    const done = new Promise<JobRecord | boolean>((resolve) => (settle = resolve));
    let finished = false;
    let checking = false;
    const finish = (final: JobRecord | boolean) => {
      if (finished) return;
      finished = true;
      clearTimeout(deadline);
      clearInterval(poll);
      const set = this.waiters.get(jobId);
      set?.delete(waiter);
      if (set?.size === 0) this.waiters.delete(jobId);
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
    const waiter = (record?: JobRecord) => finish(record ?? true);
    this.waiters.set(jobId, (this.waiters.get(jobId) ?? new Set()).add(waiter));
    const deadline = setTimeout(() => finish(false), deadlineMs);
    const poll = setInterval(() => void check(), this.pollMs);
    return { done, cancel: () => finish(false) };
  }

  get pending(): number {
    return this.waiters.size;
  }
}
