/**
 * Graceful shutdown: named closers run in the reverse order of registration (last opened, first
 * closed), each bounded by the overall deadline so a stuck one cannot hold the process.
 */
export class Closers {
  private readonly list: { name: string; close: () => Promise<unknown> | unknown }[] = [];

  add(name: string, close: () => Promise<unknown> | unknown): void {
    this.list.push({ name, close });
  }

  /**
   * Takes over the closers of a registry built inside a part (a runtime) after this one: they run
   * before the ones added here earlier, as if added here in their order.
   */
  adopt(other: Closers): void {
    this.list.push(...other.list.splice(0));
  }

  /** Resolves true when every closer closed in time; each failure goes to `onError`. */
  async closeAll(deadlineMs = 10_000, onError?: (name: string, err: unknown) => void): Promise<boolean> {
    const deadline = Date.now() + deadlineMs;
    let clean = true;
    for (const { name, close } of this.list.splice(0).reverse()) {
      const left = Math.max(0, deadline - Date.now());
      let timer: NodeJS.Timeout | undefined;
      try {
        await Promise.race([
          Promise.resolve().then(close),
          new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`${name} did not close in time`)), left))),
        ]);
      } catch (err) {
        clean = false;
        onError?.(name, err);
      } finally {
        clearTimeout(timer);
      }
    }
    return clean;
  }
}

export type ShutdownSignal = "SIGTERM" | "SIGINT";

/**
 * Set on `process` once a shutdown has begun. scripts/parent-guard.mjs (npm start) reads it, so that
 * its own SIGTERM, sent when run.mjs is gone, does not count as an operator's second signal.
 */
export const SHUTDOWN_STARTED = Symbol.for("serp.shutdown.started");

export interface ShutdownPlan {
  /** The closers' whole budget, from when they start. */
  deadlineMs: number;
  /**
   * From the first signal, the process exits (code 1) after this long whatever is still running:
   * a drain waiting on a Redis that is gone, a closer that never settles. Its timer does not keep
   * the process up. By default `deadlineMs` plus 5 s, for a quick `begin`.
   */
  exitAfterMs?: number;
  /** First, on the first signal: stop taking work (readiness, drains). It may end the process itself. */
  begin?: (signal: ShutdownSignal) => Promise<void> | void;
  /** A closer that failed or ran out of time; the exit code is then 1. */
  onError?: (name: string, err: unknown) => void;
  /** Last, before the exit: `clean` when every closer closed in time. */
  end?: (clean: boolean) => Promise<void> | void;
  /** `exitAfterMs` passed: said just before the exit. */
  late?: (exitAfterMs: number) => void;
  /** A signal while already stopping (an operator who will not wait): said just before the exit, code 1, at once. */
  again?: (signal: ShutdownSignal) => void;
}

/**
 * The one place a process wires SIGTERM and SIGINT: the first runs `begin`, then the closers, then
 * `end`, and exits 0 (1 when a closer failed), or 1 at `exitAfterMs` at the latest; a second signal
 * exits 1 at once. npm start's supervisor and the drills rely on these exit codes (scripts/supervise.mjs).
 */
export function onShutdown(closers: Closers, plan: ShutdownPlan): void {
  let stopping = false;
  /** Exit 1 after saying why, even when saying it fails. */
  const exitAfter = (say: () => void): never => {
    try {
      say();
    } finally {
      process.exit(1);
    }
  };
  const stop = async (signal: ShutdownSignal) => {
    await plan.begin?.(signal);
    const clean = await closers.closeAll(plan.deadlineMs, plan.onError);
    await plan.end?.(clean);
    process.exit(clean ? 0 : 1);
  };
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      if (stopping) exitAfter(() => plan.again?.(signal));
      stopping = true;
      Object.assign(process, { [SHUTDOWN_STARTED]: true });
      const exitAfterMs = plan.exitAfterMs ?? plan.deadlineMs + 5_000;
      setTimeout(() => exitAfter(() => plan.late?.(exitAfterMs)), exitAfterMs).unref();
      // A `begin` or `end` that throws must not leave the process up either.
      stop(signal).catch((err: unknown) => exitAfter(() => plan.onError?.("shutdown", err)));
    });
  }
}
