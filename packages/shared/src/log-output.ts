import { writeSync } from "node:fs";

/**
 * Where an app's log lines go (pino's destination): standard output, written so that the output
 * can never hold the process up. pino's own stream retries a broken pipe forever when it flushes at
 * exit (sonic-boom's flushSync on EPIPE): an API whose output reader had gone stayed up, past every
 * signal. Here:
 * - a reader that is gone (EPIPE, or any other write error) ends the output; the app runs on;
 * - a reader that stalls makes lines wait, retried every `retryMs`, up to `maxWaitingBytes`, then
 *   further lines are dropped (counted in `dropped`);
 * - at exit, what still waits gets `exitWaitMs` at most to be read (a reader that keeps up gets
 *   every line; one that stalled delays the exit by that much, once).
 * Lines are written at once (in order, nothing lost when the process exits right after).
 */
export class LogOutput {
  private waiting: Buffer[] = [];
  private waitingBytes = 0;
  private retry: NodeJS.Timeout | undefined;
  private gone = false;
  /** Lines dropped because the reader stalled. */
  dropped = 0;

  constructor(
    private readonly fd = 1,
    private readonly maxWaitingBytes = 8 * 1024 * 1024,
    private readonly retryMs = 50,
    private readonly exitWaitMs = 1_000,
  ) {
    // Node makes a piped standard output non-blocking when it first opens it: a write to a full
    // pipe then fails with EAGAIN instead of stopping the whole process until the reader reads.
    if (fd === 1) void process.stdout.fd;
    process.once("exit", () => this.flush(Date.now() + this.exitWaitMs));
  }

  /** pino's destination interface. */
  write(line: string): void {
    if (this.gone) return;
    const bytes = Buffer.from(line);
    if (this.waitingBytes + bytes.length > this.maxWaitingBytes) {
      this.dropped++;
      return;
    }
    this.waiting.push(bytes);
    this.waitingBytes += bytes.length;
    if (!this.retry) this.flush();
  }

  /**
   * Writes what waits, until done or the reader is full: then again in `retryMs`, or, at exit (no
   * more event loop), after a short sleep until `until`.
   */
  private flush(until?: number): void {
    clearTimeout(this.retry);
    this.retry = undefined;
    while (this.waiting.length > 0 && !this.gone) {
      const head = this.waiting[0]!;
      let written: number;
      try {
        written = writeSync(this.fd, head);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "EAGAIN") {
          if (until === undefined) {
            this.retry = setTimeout(() => this.flush(), this.retryMs).unref();
            return;
          }
          if (Date.now() >= until) return;
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
          continue;
        }
        this.gone = true;
        this.waiting = [];
        this.waitingBytes = 0;
        return;
      }
      this.waitingBytes -= written;
      if (written < head.length) this.waiting[0] = head.subarray(written);
      else this.waiting.shift();
    }
  }
}
