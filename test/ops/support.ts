/**
 * Helpers for the operations tests: a redis-server of the test's own (so it can be stopped and
 * started again), and the real API and worker processes, spawned as `npm start` runs them.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { PrivateRedis, freePort } from "../support/redis-server.js";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

export { freePort };

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Thrown by a check to stop waiting at once (e.g. the process being waited on has exited). */
export class StopWaiting extends Error {}

/** Polls `check` until it returns something other than undefined/false, or throws at the timeout. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 10_000, everyMs = 100): Promise<T> {
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value as T;
    } catch (err) {
      if (err instanceof StopWaiting) throw err;
      last = err;
    }
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${String(last)})` : ""}`);
    await sleep(everyMs);
  }
}

/** Answers the HTTP status (0 when the connection is refused). */
export async function statusOf(url: string): Promise<number> {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(3_000) });
    await res.arrayBuffer();
    return res.status;
  } catch {
    return 0;
  }
}

export interface OwnRedis {
  url: string;
  port: number;
  /** SIGTERM, and wait until it has exited. */
  stop(): Promise<void>;
  /** Starts again on the same port and data directory. */
  start(): Promise<void>;
  /** Stops it and removes its data. */
  destroy(): Promise<void>;
}

/** A private redis-server child (append-only on, as in production), on a free port and a temp dir. */
export async function startOwnRedis(): Promise<OwnRedis> {
  const redis = await PrivateRedis.start();
  return { url: redis.url, port: redis.port, stop: () => redis.down(), start: () => redis.up(), destroy: () => redis.destroy() };
}

export interface ServiceProcess {
  child: ChildProcess;
  /** Every log line so far (pino JSON, parsed when possible). */
  logs: Record<string, unknown>[];
  output(): string;
  waitForLog(what: string, match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves with the exit code (or signal) once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Kills it with SIGKILL if it is still running (test clean-up). */
  kill(): Promise<void>;
}

/** Spawns `node --import tsx apps/<app>/src/index.ts` with the given environment, as `npm start` does. */
/**
 * How long an app process may take to start (to log "API listening" or "workers ready"): a bound,
 * not a measure. One takes about 2.3 CPU-s to load, and a busy run with both cores taken by other
 * processes has taken more than 20 s.
 */
export const START_BOUND_MS = 60_000;

export function spawnService(app: "api" | "worker", env: Record<string, string>): ServiceProcess {
  const child = spawn(process.execPath, ["--import", "tsx", `apps/${app}/src/index.ts`], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const logs: Record<string, unknown>[] = [];
  let raw = "";
  let partial = "";
  const onData = (chunk: Buffer) => {
    raw += chunk.toString();
    partial += chunk.toString();
    const lines = partial.split("\n");
    partial = lines.pop() ?? "";
    for (const line of lines) {
      if (!line.trim()) continue;
      try {
        logs.push(JSON.parse(line) as Record<string, unknown>);
      } catch {
        logs.push({ msg: line });
      }
    }
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  // On "close", not "exit": once its output is read too (a busy machine can deliver the last lines after the exit).
  let closed = false;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once("close", (code, signal) => {
      closed = true;
      r({ code, signal });
    }),
  );
  return {
    child,
    logs,
    output: () => raw,
    waitForLog: (what, match, timeoutMs = START_BOUND_MS) =>
      waitFor(what, () => {
        const found = logs.find(match);
        if (!found && closed) throw new StopWaiting(`${app} exited (${child.exitCode ?? child.signalCode}):\n${raw.slice(-3_000)}`);
        return found;
      }, timeoutMs, 50),
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGKILL");
        await exited;
      }
    },
  };
}

/** The value of the sample of `name` whose labels include `labels` (undefined when there is none). */
export function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split("\n")) {
    const m = line.match(/^([a-z_]+)(?:\{([^}]*)\})?\s+(\S+)$/);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) return Number(m[3]);
  }
  return undefined;
}
