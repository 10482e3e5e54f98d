/**
 * A private redis-server a test can stop and start again (append-only on, so what it
 * acknowledged survives a restart). Never the shared Redis of the test run.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, redisServerBinary, spawnRedis, waitForRedis } from "../../scripts/redis.mjs";

export { freePort };

/**
 * A free port below the kernel's ephemeral range (32768 and up on Linux), for a drill that binds a
 * port again or names it ahead (an API after a restart, a Redis its sentinels know by port): a port
 * from the ephemeral range could meanwhile be taken by any other suite's `listen(0)` or outgoing
 * connection, which then answers (or refuses) in its place.
 */
export async function stablePort(): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((ok) => {
      const server = createServer();
      server.once("error", () => ok(false));
      server.listen(port, "127.0.0.1", () => server.close(() => ok(true)));
    });
    if (free) return port;
  }
  return freePort();
}

/** redis-server as a managed Redis should run (docs/REDIS.md): append-only, no eviction; `replicaOf` makes it a replica. */
export function spawnRedisNode(port: number, dir: string, replicaOf?: number): Promise<ChildProcess> {
  mkdirSync(dir, { recursive: true });
  const child = spawn(
    redisServerBinary(),
    ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "yes", "--appendfsync", "everysec",
      "--maxmemory-policy", "noeviction", "--logfile", join(dir, "redis.log"), ...(replicaOf ? ["--replicaof", "127.0.0.1", String(replicaOf)] : [])],
    { stdio: "ignore" },
  );
  return waitForRedis(port, child, dir);
}

/**
 * Stops a redis-server child and resolves once it has exited (at once if it already has). SIGTERM
 * is a clean stop that writes the append-only file out, but Redis refuses it while it is writing
 * its initial append-only file ("Writing initial AOF, can't exit", as a replica does right after a
 * full resync): SIGTERM is sent again every second until it exits, and SIGKILL after `boundMs`.
 */
export async function stopRedisProcess(child: ChildProcess | undefined, signal: NodeJS.Signals = "SIGTERM", boundMs = 30_000): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((ok) => child.once("exit", () => ok()));
  child.kill(signal);
  if (signal === "SIGKILL") return exited;
  const until = Date.now() + boundMs;
  const again = setInterval(() => child.kill(Date.now() < until ? signal : "SIGKILL"), 1_000);
  try {
    await exited;
  } finally {
    clearInterval(again);
  }
}

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
    await stopRedisProcess(child);
  }

  async destroy(): Promise<void> {
    await this.down();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
