/**
 * A private redis-server a test can stop and start again (append-only on, so what it
 * acknowledged survives a restart). Never the shared Redis of the test run.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, spawnRedis } from "../../scripts/redis.mjs";

export { freePort };

export class PrivateRedis {
  private child?: ChildProcess;
  private constructor(
    readonly port: number,
    readonly dir: string,
  ) {}

  static async start(): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort(), mkdtempSync(join(tmpdir(), "serp-test-redis-")));
    await r.up();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts it (again) on the same port and data directory. */
  async up(): Promise<void> {
    this.child = await spawnRedis(this.port, this.dir);
  }

  /** A clean stop: redis-server writes its append-only file out on SIGTERM. */
  async down(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((ok) => child.once("exit", ok));
    child.kill("SIGTERM");
    await exited;
  }

  async destroy(): Promise<void> {
    await this.down();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
