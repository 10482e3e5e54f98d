/**
 * Circuit breakers per profile, and per profile and proxy, so that a dead recipe costs one probe
 * per rest instead of one request per job.
 *
 * - A profile's breaker counts what says the recipe is dead: walls (JS, consent), refusals
 *   (TLS or agent refused, "browser isn't supported") and results pages understood only in part
 *   (`partial`, below their kind's coverage threshold: a layout the parsers do not know, served to
 *   this recipe; it rests like a wall, so jobs stop paying a request for it, and its probe notices
 *   the day the parsers or the upstream change back). A profile-and-proxy breaker counts what says
 *   the address or the path is bad: blocks, time-outs, dead connections. A result or a no-results
 *   page closes both.
 * - After `threshold` such outcomes in a row the breaker opens: it rests `restMs`, then lets
 *   exactly one request through as a probe. A failed probe rests again, twice as long (up to
 *   `maxRestMs`); a good one closes it. While it rests, or while its probe is out, callers are told
 *   to skip it: a job never waits on a resting profile.
 * The counting, the rests and the single probe are cockatiel's circuit breaker.
 */
import {
  BrokenCircuitError,
  circuitBreaker,
  CircuitState,
  ConsecutiveBreaker,
  handleWhenResult,
  type CircuitBreakerPolicy,
  type IBackoff,
  type IBackoffFactory,
} from "cockatiel";
import { breakerOutcomes, type Outcome } from "./failures.js";

/** What the profile's breaker counts, and what the profile-and-exit pair's counts (failures.ts `breaker`). */
const RECIPE_DEAD = breakerOutcomes("recipe");
const PATH_BAD = breakerOutcomes("path");

export interface BreakerOptions {
  /** Failures in a row that open a breaker. Default 3. */
  threshold?: number;
  /** The first rest. Default 30 s. */
  restMs?: number;
  /** The longest rest. Default 30 min. */
  maxRestMs?: number;
}

export const BREAKER_DEFAULTS = { threshold: 3, restMs: 30_000, maxRestMs: 30 * 60_000 } as const;

export type BreakerState = "closed" | "open" | "probing";

/** What an operator sees of one breaker. */
export interface BreakerStatus {
  /** `profile` or `profile@proxy` (`direct` when no proxy is configured). */
  key: string;
  profile: string;
  proxy?: string;
  state: BreakerState;
  /** When the current rest ends (epoch ms), while open. */
  restUntil?: number;
  /** The current (or last) rest's length. */
  restMs?: number;
  lastOutcome?: Outcome;
  lastAt?: number;
  /** Tries by outcome since start. */
  outcomes: Partial<Record<Outcome, number>>;
  /** Results and no-results pages over all tries, or null before the first. */
  successRate: number | null;
}

/** Rests that double from `restMs` up to `maxRestMs`; remembers the last one handed out. */
class DoublingRest implements IBackoffFactory<unknown> {
  last = 0;
  constructor(
    private readonly restMs: number,
    private readonly maxRestMs: number,
  ) {}
  next(): IBackoff<unknown> {
    return this.step(this.restMs);
  }
  private step(duration: number): IBackoff<unknown> {
    this.last = duration;
    return { duration, next: () => this.step(Math.min(this.maxRestMs, duration * 2)) };
  }
}

class Breaker {
  readonly policy: CircuitBreakerPolicy;
  readonly rest: DoublingRest;
  openedAt = 0;
  lastOutcome?: Outcome;
  lastAt?: number;
  readonly outcomes: Partial<Record<Outcome, number>> = {};

  constructor(
    readonly key: string,
    readonly profile: string,
    readonly proxy: string | undefined,
    counts: ReadonlySet<Outcome>,
    o: Required<BreakerOptions>,
  ) {
    this.rest = new DoublingRest(o.restMs, o.maxRestMs);
    this.policy = circuitBreaker(handleWhenResult((r) => counts.has(r as Outcome)), {
      halfOpenAfter: this.rest,
      breaker: new ConsecutiveBreaker(o.threshold),
    });
    this.policy.onBreak(() => (this.openedAt = Date.now()));
  }

  /** Open with its rest not over, or its probe out: a try now would be refused or kept waiting. */
  resting(): boolean {
    const state = this.policy.state;
    if (state === CircuitState.HalfOpen || state === CircuitState.Isolated) return true;
    return state === CircuitState.Open && Date.now() < this.openedAt + this.rest.last;
  }

  record(outcome: Outcome): void {
    this.lastOutcome = outcome;
    this.lastAt = Date.now();
    this.outcomes[outcome] = (this.outcomes[outcome] ?? 0) + 1;
  }

  status(): BreakerStatus {
    const state = this.policy.state;
    const tries = Object.values(this.outcomes).reduce((a, b) => a + b, 0);
    const good = (this.outcomes.results ?? 0) + (this.outcomes.no_results ?? 0);
    return {
      key: this.key,
      profile: this.profile,
      ...(this.proxy ? { proxy: this.proxy } : {}),
      state: state === CircuitState.Closed ? "closed" : state === CircuitState.HalfOpen ? "probing" : "open",
      ...(state === CircuitState.Open ? { restUntil: this.openedAt + this.rest.last } : {}),
      ...(this.rest.last ? { restMs: this.rest.last } : {}),
      ...(this.lastOutcome ? { lastOutcome: this.lastOutcome, lastAt: this.lastAt } : {}),
      outcomes: { ...this.outcomes },
      successRate: tries ? good / tries : null,
    };
  }
}

/** Why a try was not made: the breaker that rests, and until when. */
export interface Skip {
  key: string;
  state: BreakerState;
  restUntil?: number;
  lastOutcome?: Outcome;
}

export class Breakers {
  private readonly byKey = new Map<string, Breaker>();
  private readonly o: Required<BreakerOptions>;

  constructor(options: BreakerOptions = {}) {
    this.o = { ...BREAKER_DEFAULTS, ...options };
  }

  /**
   * Runs one try of `profile` through `proxy` unless one of its breakers rests or has its probe
   * out, in which case `try` is not called and the skip comes back. The try's outcome is counted
   * by both breakers; `try` rejecting (an abort) counts as nothing.
   */
  async run<T extends { outcome: Outcome }>(profile: string, proxy: string | undefined, attempt: () => Promise<T>): Promise<T | Skip> {
    const own = this.breaker(profile, undefined, RECIPE_DEAD);
    const pair = this.breaker(`${profile}@${proxy ?? "direct"}`, proxy ?? "direct", PATH_BAD, profile);
    // cockatiel makes callers wait for a probe in flight; a job never waits, it skips.
    for (const b of [own, pair]) if (b.resting()) return skip(b);
    let result: T | undefined;
    // Both checks above and both executes below run in one turn of the event loop, so neither
    // breaker can change state in between: `attempt` runs, or the call skips.
    try {
      await own.policy.execute(() =>
        pair.policy.execute(async () => {
          result = await attempt();
          own.record(result.outcome);
          pair.record(result.outcome);
          return result.outcome;
        }),
      );
    } catch (error) {
      // A rest that ended a millisecond apart in cockatiel's clock and ours.
      if (error instanceof BrokenCircuitError && result === undefined) return skip(own.resting() ? own : pair);
      throw error;
    }
    return result!;
  }

  statuses(): BreakerStatus[] {
    return [...this.byKey.values()].map((b) => b.status());
  }

  private breaker(key: string, proxy: string | undefined, counts: ReadonlySet<Outcome>, profile = key): Breaker {
    let b = this.byKey.get(key);
    if (!b) {
      b = new Breaker(key, profile, proxy, counts, this.o);
      this.byKey.set(key, b);
    }
    return b;
  }
}

export function isSkip(value: { outcome: Outcome } | Skip): value is Skip {
  return !("outcome" in value);
}

function skip(b: Breaker): Skip {
  const s = b.status();
  return { key: s.key, state: s.state, ...(s.restUntil ? { restUntil: s.restUntil } : {}), ...(s.lastOutcome ? { lastOutcome: s.lastOutcome } : {}) };
}
