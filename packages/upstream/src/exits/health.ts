/**
 * Exit health, shared by every worker of the fleet (reference/proxies-2026.md §4). Outcomes are
 * told apart: a block (`/sorry/`, 429, a refused challenge) sets an exit aside for a cooldown that
 * doubles with each block in a row; a proxy error (407, 502, a refused or dead connection) marks
 * it unhealthy for a shorter, also doubling, rest; a success heals. When a rest ends, the exit is
 * not free for all: one caller across the fleet claims its probe, and the others keep away until
 * that probe has answered (or its claim lapsed). Reports made while the exit already rests (the
 * answers of requests sent before the first block came back) neither add a strike nor heal.
 *
 * The state machine is written once here (`step`, `claimOf`); MemoryExitHealth runs it in the
 * process, and the Redis store (@serp/store exit-health.ts) runs the same rules in one Lua script
 * per call, so every worker sees one state.
 */

export type ExitReason = "blocked" | "proxy_error";

export interface ExitHealthOptions {
  /** First cooldown after a block; doubles per block in a row. Default 60 s. */
  blockCooldownMs: number;
  /** First rest after a proxy error; doubles per error in a row. Default 10 s. */
  errorCooldownMs: number;
  /** Longest rest either way. Default 30 min. */
  maxCooldownMs: number;
  /** How long a probe's claim keeps the others away when its answer never comes. Default 30 s. */
  probeMs: number;
}

export const EXIT_HEALTH_DEFAULTS: ExitHealthOptions = {
  blockCooldownMs: 60_000,
  errorCooldownMs: 10_000,
  maxCooldownMs: 30 * 60_000,
  probeMs: 30_000,
};

export interface ExitState {
  /** Strikes in a row (blocks or proxy errors) since the last success. */
  strikes: number;
  /** Resting until this time (ms since the epoch); 0: not resting. */
  until: number;
  reason?: ExitReason;
  /** A probe is out until this time: nobody else may ask. */
  probeUntil: number;
}

export const HEALTHY: ExitState = { strikes: 0, until: 0, probeUntil: 0 };

/** The rest after the `strikes`-th strike in a row: base, doubled per strike, capped. */
export function cooldownMs(strikes: number, baseMs: number, maxMs: number): number {
  if (strikes <= 0) return 0;
  return Math.min(maxMs, baseMs * 2 ** Math.min(strikes - 1, 40));
}

export type ExitEvent = "blocked" | "proxy_error" | "success";

/** The state after a report at `now`. */
export function step(state: ExitState, event: ExitEvent, now: number, o: ExitHealthOptions): ExitState {
  const resting = now < state.until;
  if (event === "success") return resting ? state : HEALTHY;
  // Already set aside: the answer of a request that left before the first block counts for nothing.
  if (resting) return state;
  const strikes = state.strikes + 1;
  const base = event === "blocked" ? o.blockCooldownMs : o.errorCooldownMs;
  return { strikes, until: now + cooldownMs(strikes, base, o.maxCooldownMs), reason: event, probeUntil: 0 };
}

/**
 * May this caller ask the exit now? `free` (healthy), `probe` (its rest is over and this caller
 * won the one probe: the state comes back with the claim), or `resting`.
 */
export function claimOf(state: ExitState, now: number, o: ExitHealthOptions): { verdict: "free" | "probe" | "resting"; state: ExitState } {
  if (state.strikes === 0) return { verdict: "free", state };
  if (now < state.until || now < state.probeUntil) return { verdict: "resting", state };
  return { verdict: "probe", state: { ...state, probeUntil: now + o.probeMs } };
}

/** One exit as an operator sees it. */
export interface ExitStatus extends ExitState {
  pool: string;
  exit: string;
}

/** Where the fleet's exit state lives. Every call is atomic for its exit. */
export interface ExitHealth {
  /** May this caller ask the exit now (`probe`: yes, and it holds the fleet's one probe)? */
  claim(pool: string, exit: string): Promise<"free" | "probe" | "resting">;
  report(pool: string, exit: string, event: ExitEvent): Promise<ExitState>;
  /** Every exit that is not healthy (resting, or healed after a probe is not listed). */
  statuses(): Promise<ExitStatus[]>;
  close?(): Promise<void>;
}

/** The state in this process only: for a single process, the CLI and tests. */
export class MemoryExitHealth implements ExitHealth {
  private readonly states = new Map<string, ExitState>();
  private readonly o: ExitHealthOptions;
  constructor(
    options: Partial<ExitHealthOptions> = {},
    private readonly now: () => number = Date.now,
  ) {
    this.o = { ...EXIT_HEALTH_DEFAULTS, ...options };
  }

  async claim(pool: string, exit: string) {
    const key = `${pool}\n${exit}`;
    const { verdict, state } = claimOf(this.states.get(key) ?? HEALTHY, this.now(), this.o);
    if (verdict === "probe") this.states.set(key, state);
    return verdict;
  }

  async report(pool: string, exit: string, event: ExitEvent): Promise<ExitState> {
    const key = `${pool}\n${exit}`;
    const next = step(this.states.get(key) ?? HEALTHY, event, this.now(), this.o);
    if (next.strikes === 0) this.states.delete(key);
    else this.states.set(key, next);
    return next;
  }

  async statuses(): Promise<ExitStatus[]> {
    return [...this.states].map(([key, s]) => {
      const [pool, exit] = key.split("\n") as [string, string];
      return { pool, exit, ...s };
    });
  }
}
