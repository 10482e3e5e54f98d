/**
 * Outgoing proxies from configuration, used round-robin. A proxy whose request was blocked or
 * failed rests for a time that doubles with each failure in a row (so a blocked address stops
 * being hammered, and the next request leaves from another one); a success ends its rest.
 */
import type { Agent as HttpAgent } from "node:http";
import type { Agent as HttpsAgent } from "node:https";
import { HttpProxyAgent, HttpsProxyAgent } from "hpagent";

export interface Proxy {
  /** The configured URL; may hold credentials, so never log it: use `label`. */
  readonly url: string;
  /** `host:port`, safe for logs and try records. */
  readonly label: string;
  readonly agents: { http: HttpAgent; https: HttpsAgent };
}

export type ProxyFailure = "blocked" | "timeout" | "network";

export interface ProxyPoolOptions {
  /** First rest after a failure; doubles per failure in a row. Default 30 s. */
  baseRestMs?: number;
  /** Longest rest. Default 30 min. */
  maxRestMs?: number;
  now?: () => number;
}

interface Slot {
  proxy: Proxy;
  failures: number;
  restUntil: number;
  lastFailure?: ProxyFailure;
}

export class ProxyPool {
  private readonly slots: Slot[];
  private cursor = 0;
  private readonly baseRestMs: number;
  private readonly maxRestMs: number;
  private readonly now: () => number;

  constructor(urls: readonly string[], opts: ProxyPoolOptions = {}) {
    this.slots = urls.map((url) => ({ proxy: makeProxy(url), failures: 0, restUntil: 0 }));
    this.baseRestMs = opts.baseRestMs ?? 30_000;
    this.maxRestMs = opts.maxRestMs ?? 30 * 60_000;
    this.now = opts.now ?? Date.now;
  }

  get size(): number {
    return this.slots.length;
  }

  /** Proxies not resting now. */
  available(): number {
    const now = this.now();
    return this.slots.filter((s) => s.restUntil <= now).length;
  }

  /**
   * The next proxy in turn that is not resting. `undefined` when none is configured (go direct);
   * `{ resting }` when every proxy rests, with the reason of the one that rests least.
   */
  next(): Proxy | undefined | { resting: ProxyFailure } {
    if (!this.slots.length) return undefined;
    const now = this.now();
    for (let i = 0; i < this.slots.length; i++) {
      const slot = this.slots[(this.cursor + i) % this.slots.length]!;
      if (slot.restUntil <= now) {
        this.cursor = (this.cursor + i + 1) % this.slots.length;
        return slot.proxy;
      }
    }
    const soonest = this.slots.reduce((a, b) => (b.restUntil < a.restUntil ? b : a));
    return { resting: soonest.lastFailure ?? "blocked" };
  }

  succeeded(proxy: Proxy): void {
    const slot = this.slotOf(proxy);
    if (!slot) return;
    slot.failures = 0;
    slot.restUntil = 0;
  }

  failed(proxy: Proxy, why: ProxyFailure): void {
    const slot = this.slotOf(proxy);
    if (!slot) return;
    slot.failures++;
    slot.lastFailure = why;
    const rest = Math.min(this.maxRestMs, this.baseRestMs * 2 ** (slot.failures - 1));
    slot.restUntil = this.now() + rest;
  }

  /** Milliseconds the proxy still rests (0 when usable). */
  restingFor(proxy: Proxy): number {
    const slot = this.slotOf(proxy);
    return slot ? Math.max(0, slot.restUntil - this.now()) : 0;
  }

  close(): void {
    for (const { proxy } of this.slots) {
      proxy.agents.http.destroy();
      proxy.agents.https.destroy();
    }
  }

  private slotOf(proxy: Proxy): Slot | undefined {
    return this.slots.find((s) => s.proxy === proxy);
  }
}

export function isResting(p: ReturnType<ProxyPool["next"]>): p is { resting: ProxyFailure } {
  return p !== undefined && "resting" in p;
}

function makeProxy(url: string): Proxy {
  const parsed = new URL(url);
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new Error(`proxy ${parsed.host}: only http(s) proxies are supported`);
  }
  const options = { proxy: parsed, keepAlive: true, maxSockets: 64 };
  return {
    url,
    label: parsed.host,
    agents: { http: new HttpProxyAgent(options), https: new HttpsProxyAgent(options) },
  };
}
