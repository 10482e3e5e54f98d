import { DelayedError, type Job as BullJob } from "bullmq";

/**
 * One account must not hold every slot of a worker process (docs/FAIRNESS.md). Each process lets
 * one account hold at most `share` of its slots on a queue (at least one); a job of an account at
 * its cap goes back to the queue's delayed set for a moment (no attempt is counted) and the slot
 * is free for the next job, so another account's job finds a free slot at once instead of waiting
 * behind a flood. Two processes keep two independent caps: an account holds at most `share` of
 * the fleet's slots either way. Counting is local, so the check costs no Redis round trip.
 *
 * The order in which waiting jobs are taken is the other half of the rule: the API gives each job
 * a BullMQ priority equal to its account's jobs in flight at submission, so an account's first job
 * goes before another's hundredth (store's `fairPriority`).
 */
export class FairShare {
  private readonly held = new Map<string, number>();
  readonly cap: number;

  constructor(
    slots: number,
    share: number,
    /** The first rest of a deferred job; each further deferral doubles it, up to `maxDeferMs`. */
    private readonly deferMs = 100,
    private readonly maxDeferMs = 3_200,
  ) {
    this.cap = Math.max(1, Math.floor(slots * share));
  }

  /** Takes a slot for `owner` on `lane` (a queue); undefined when the owner is at its cap. */
  take(lane: string, owner: string): (() => void) | undefined {
    const key = `${lane}\u0000${owner}`;
    const n = this.held.get(key) ?? 0;
    if (n >= this.cap) return undefined;
    this.held.set(key, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.held.get(key) ?? 1) - 1;
      if (left > 0) this.held.set(key, left);
      else this.held.delete(key);
    };
  }

  /**
   * Sends a job back to wait for a moment; the processor must throw what this returns. The rest
   * doubles with each deferral of the same job (BullMQ counts every start, deferred or not, in
   * attemptsStarted), so a deep backlog is not offered again every few milliseconds: its jobs
   * spread over up to `maxDeferMs`, and one of them is still at hand whenever a slot frees.
   */
  async defer(job: BullJob, token: string | undefined): Promise<DelayedError> {
    const deferrals = Math.max(0, (job.attemptsStarted ?? 1) - 1 - job.attemptsMade);
    const rest = Math.min(this.maxDeferMs, this.deferMs * 2 ** Math.min(deferrals, 16));
    await job.moveToDelayed(Date.now() + Math.round(rest * (0.75 + Math.random() / 2)), token);
    return new DelayedError();
  }
}
