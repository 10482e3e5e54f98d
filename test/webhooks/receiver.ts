/** A webhook receiver on loopback for tests: records every request, answers as each test says. */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface Received {
  path: string;
  headers: Record<string, string>;
  body: string;
  at: number;
}

export interface Reply {
  status: number;
  headers?: Record<string, string>;
}

/** How a path answers its n-th request (0-based). Unset paths answer 204. */
export type Behaviour = (n: number) => Reply;

export class Receiver {
  readonly received: Received[] = [];
  /** TCP connections accepted, whether or not a request followed. */
  connections = 0;
  private readonly behaviours = new Map<string, Behaviour>();
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
  private constructor(
    readonly host: string,
    public port: number,
  ) {}

  static async start(host = "127.0.0.1", port = 0): Promise<Receiver> {
    const r = new Receiver(host, port);
    await r.listen();
    return r;
  }

  /** Host as it appears in a URL (IPv6 in brackets). */
  url(path: string, host = this.host): string {
    const h = host.includes(":") ? `[${host}]` : host;
    return `http://${h}:${this.port}${path}`;
  }

  on(path: string, behaviour: Behaviour): void {
    this.behaviours.set(path, behaviour);
  }

  at(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async listen(): Promise<void> {
    const server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const path = req.url ?? "/";
        const n = this.at(path).length;
        this.received.push({ path, headers: flatten(req.headers), body: Buffer.concat(chunks).toString("utf8"), at: Date.now() });
        const reply = this.behaviours.get(path)?.(n) ?? { status: 204 };
        res.writeHead(reply.status, reply.headers);
        res.end();
      });
    });
    server.on("connection", (s) => {
      this.connections++;
      this.sockets.add(s);
      s.on("close", () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, this.host, () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Stops listening (connections are then refused) and drops open connections. */
  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Resolves once `path` has received `n` requests. */
  async waitFor(path: string, n = 1, timeoutMs = 15_000): Promise<Received[]> {
    const until = Date.now() + timeoutMs;
    while (this.at(path).length < n) {
      if (Date.now() > until) throw new Error(`${path}: ${this.at(path).length} of ${n} requests after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 25));
    }
    return this.at(path);
  }
}

function flatten(h: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k] = Array.isArray(v) ? v.join(", ") : v;
  return out;
}
