import type { ChildProcess } from "node:child_process";
export const BACKOFF: Readonly<{ firstMs: number; maxMs: number; resetAfterMs: number }>;
export const EXIT_CONFIG: 78;
export function restartDelay(n: number, backoff?: typeof BACKOFF): number;
export function exitReason(code: number | null, signal: NodeJS.Signals | null): string;
export function isRunning(pid: number): boolean;
export function commandOf(pid: number): string | undefined;
export function watchParent(onGone: () => void, everyMs?: number): () => void;
export function surviveLostOutput(): void;
export class Supervised {
  constructor(name: string, start: () => ChildProcess, options: { say: (msg: string) => void; backoff?: typeof BACKOFF; onStart?: (child: ChildProcess) => void; onConfigError?: (name: string) => void });
  readonly name: string;
  crashes: number;
  stopping: boolean;
  child: ChildProcess | undefined;
  get pid(): number | undefined;
  run(): this;
  stop(signal: NodeJS.Signals, graceMs: number): Promise<void>;
  kill(): Promise<void>;
}
