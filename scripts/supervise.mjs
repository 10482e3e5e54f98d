/**
 * Keeping `npm start`'s processes up, and taking them down together (scripts/run.mjs and
 * scripts/redis-keeper.mjs). A child that dies on its own is started again after a back-off, so a
 * crash loop costs a restart every 30 s at most, not a busy loop; the others keep serving meanwhile.
 * Plain JavaScript with Node's standard library only: it runs before dependencies are installed.
 */
import { readFileSync } from "node:fs";

/** First restart after 1 s, then 2 s, 4 s … up to 30 s; a child that stayed up a minute starts over at 1 s. */
export const BACKOFF = Object.freeze({ firstMs: 1_000, maxMs: 30_000, resetAfterMs: 60_000 });

/**
 * The exit code of an app that refused its configuration (sysexits' EX_CONFIG): starting it again
 * cannot help until the setting is fixed, so it is not restarted.
 */
export const EXIT_CONFIG = 78;

/**
 * Output whose reader has gone (a pipe closed by the process that started us) must not end this
 * process: a write then fails with EPIPE, emitted as an 'error' on the stream, which Node throws
 * when nobody listens. The lines are dropped instead, and the process goes on supervising.
 */
export function surviveLostOutput() {
  for (const stream of [process.stdout, process.stderr]) stream.on("error", () => undefined);
}

/** The wait before restart number `n` (1-based) of a run of crashes in a row. */
export function restartDelay(n, backoff = BACKOFF) {
  return Math.min(backoff.firstMs * 2 ** Math.max(0, n - 1), backoff.maxMs);
}

/** Why a child ended, for the log: "exit code 1" or "signal SIGKILL". */
export function exitReason(code, signal) {
  return signal ? `signal ${signal}` : `exit code ${code}`;
}

const seconds = (ms) => `${Number((ms / 1_000).toFixed(1))} s`;

/** One child process, started again after a back-off whenever it ends before stop() is called. */
export class Supervised {
  /**
   * @param {string} name how the log names it
   * @param {() => import("node:child_process").ChildProcess} start spawns it (again)
   * @param {{ say: (msg: string) => void, backoff?: typeof BACKOFF, onStart?: (child: import("node:child_process").ChildProcess) => void, onConfigError?: (name: string) => void }} options
   */
  constructor(name, start, { say, backoff = BACKOFF, onStart = () => undefined, onConfigError = () => undefined }) {
    Object.assign(this, { name, start, say, backoff, onStart, onConfigError });
    /** Restarts in a row, each after less than `resetAfterMs` of running. */
    this.crashes = 0;
    this.stopping = false;
    this.child = undefined;
    this.timer = undefined;
  }

  get pid() {
    return this.child && this.child.exitCode === null && this.child.signalCode === null ? this.child.pid : undefined;
  }

  run() {
    const startedAt = Date.now();
    const child = this.start();
    this.child = child;
    child.once("error", (err) => this.say(`${this.name} could not start: ${err.message}`));
    child.once("exit", (code, signal) => this.exited(code, signal, Date.now() - startedAt));
    this.say(`${this.name} started (pid ${child.pid})`);
    this.onStart(child);
    return this;
  }

  exited(code, signal, upMs) {
    if (this.stopping) {
      this.say(`${this.name} stopped (${exitReason(code, signal)})`);
      return;
    }
    if (code === EXIT_CONFIG) {
      this.say(`${this.name} refused its configuration (exit code ${code}; its log names the setting): not restarting it`);
      this.onConfigError(this.name);
      return;
    }
    if (upMs >= this.backoff.resetAfterMs) this.crashes = 0;
    this.crashes++;
    const delay = restartDelay(this.crashes, this.backoff);
    this.say(`${this.name} ended on its own (${exitReason(code, signal)}) after ${seconds(upMs)}: restarting in ${seconds(delay)} (restart ${this.crashes} in a row)`);
    this.timer = setTimeout(() => {
      if (!this.stopping) this.run();
    }, delay);
  }

  /** Stops it for good: `signal` now, SIGKILL if it is still running after `graceMs`. Resolves once it has exited. */
  async stop(signal, graceMs) {
    this.stopping = true;
    clearTimeout(this.timer);
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once("exit", resolve));
    child.kill(signal);
    const late =
      signal === "SIGKILL"
        ? undefined
        : setTimeout(() => {
            this.say(`${this.name} still running ${seconds(graceMs)} after ${signal}: killing it`);
            child.kill("SIGKILL");
          }, graceMs);
    await exited;
    clearTimeout(late);
  }

  /** SIGKILL at once (a second Ctrl-C). Resolves once it has exited. */
  kill() {
    return this.stop("SIGKILL", 0);
  }
}

/** The parent pid of `pid` and its command name, from /proc (Linux); undefined elsewhere or when it is gone. */
function procInfo(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const close = stat.lastIndexOf(")");
    const [state, ppid] = stat.slice(close + 2).split(" ");
    return { comm: stat.slice(stat.indexOf("(") + 1, close), state, ppid: Number(ppid) };
  } catch {
    return undefined;
  }
}

/** The command name of `pid` ("redis-server", "postgres"…), undefined when it is gone. */
export function commandOf(pid) {
  return procInfo(pid)?.comm;
}

/** True while `pid` runs (a zombie, dead but not yet reaped, counts as gone). */
export function isRunning(pid) {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return err.code === "EPERM";
  }
  return procInfo(pid)?.state !== "Z";
}

const SHELLS = new Set(["sh", "dash", "bash", "zsh", "ash", "busybox"]);

/**
 * Calls `onGone` once when the process that started this one is gone (this one was handed to
 * PID 1 or a subreaper), polling every `everyMs` without keeping the event loop alive.
 * Why polling: npm 10+ runs a script through `sh -c`, and on SIGTERM it signals only that shell,
 * which dies without passing the signal on; nothing tells this process but its parent changing.
 * When that parent is a shell started by npm, npm is watched too (the shell's own parent), so a
 * SIGKILL of npm, which leaves the shell waiting, also counts.
 */
export function watchParent(onGone, everyMs = 250) {
  const parent = process.ppid;
  const info = process.env.npm_lifecycle_event ? procInfo(parent) : undefined;
  const grandparent = info && SHELLS.has(info.comm) ? info.ppid : undefined;
  const timer = setInterval(() => {
    if (process.ppid === parent && (grandparent === undefined || procInfo(parent)?.ppid === grandparent)) return;
    clearInterval(timer);
    onGone();
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
