/**
 * A private redis-server a drill can stop and start again (append-only on, so what it
 * acknowledged survives a restart). Never the shared Redis of the test run.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => ok(port));
    });
    s.on("error", fail);
  });
}

async function ping(port: number): Promise<boolean> {
  return new Promise((ok) => {
    const sock = net.connect(port, "127.0.0.1");
    sock.setTimeout(300);
    sock.on("connect", () => sock.write("PING\r\n"));
    sock.on("data", (d) => {
      ok(d.toString().startsWith("+PONG"));
      sock.destroy();
    });
    sock.on("error", () => ok(false));
    sock.on("timeout", () => {
      sock.destroy();
      ok(false);
    });
  });
}

export class PrivateRedis {
  private child?: ChildProcess;
  private constructor(
    readonly port: number,
    readonly dir: string,
  ) {}

  static async start(): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort(), mkdtempSync(join(tmpdir(), "serp-drill-redis-")));
    await r.up();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async up(): Promise<void> {
    this.child = spawn(
      "redis-server",
      ["--port", String(this.port), "--bind", "127.0.0.1", "--dir", this.dir, "--save", "", "--appendonly", "yes",
        "--appendfsync", "everysec", "--maxmemory-policy", "noeviction"],
      { stdio: "ignore" },
    );
    for (let i = 0; i < 100; i++) {
      if (await ping(this.port)) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`private redis-server did not start on ${this.port}`);
  }

  /** A clean stop: redis-server writes its append-only file out on SIGTERM. */
  async down(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null) return;
    await new Promise<void>((ok) => {
      child.once("exit", () => ok());
      child.kill("SIGTERM");
    });
  }

  async destroy(): Promise<void> {
    await this.down();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
