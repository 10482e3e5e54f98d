/**
 * Which exit a search leaves from. A search's country picks the pools that list it, lowest tier
 * first; when none lists it, a pool without countries serves it and the lease says so
 * (`fallback`). Within a pool a session is one exit (a static proxy, or a gateway session id) with
 * its cookie jar (and, on the browser rung, its browser context, keyed by the session's label): the
 * tries of one search stay on their session unless it fails; a session serves later searches of
 * the same pool and country until its TTL or use cap, then a fresh one is made. A session blocked
 * is dropped. Whether an exit may be asked at all is the fleet's health (health.ts): a pool whose
 * exits all rest is passed over for the next tier, and asked again when a rest ends (one probe).
 */
import { randomBytes } from "node:crypto";
import type { Agent as HttpAgent } from "node:http";
import type { Agent as HttpsAgent } from "node:https";
import { HttpProxyAgent, HttpsProxyAgent } from "hpagent";
import { SocksProxyAgent } from "socks-proxy-agent";
import { fillGateway, proxyLabel, type ExitsConfig, type PoolConfig } from "./config.js";
import type { ExitEvent, ExitHealth, ExitReason } from "./health.js";

export interface Proxy {
  /** The configured URL; may hold credentials, so never log it: use `label`. */
  readonly url: string;
  /** `host:port` of a static proxy, `pool/country/session` of a gateway session: safe for logs and records. */
  readonly label: string;
  readonly agents: { http: HttpAgent; https: HttpsAgent };
}

/** Builds the agents got uses for a proxy URL: hpagent for http(s) proxies, a SOCKS agent for socks5. */
export function makeProxy(url: string, label = proxyLabel(url)): Proxy {
  const parsed = new URL(url);
  if (parsed.protocol === "socks5:" || parsed.protocol === "socks5h:") {
    const agent = new SocksProxyAgent(parsed, { keepAlive: true });
    return { url, label, agents: { http: agent as unknown as HttpAgent, https: agent as unknown as HttpsAgent } };
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error(`proxy ${label}: protocol ${parsed.protocol} is not supported`);
  const options = { proxy: parsed, keepAlive: true, maxSockets: 64 };
  return { url, label, agents: { http: new HttpProxyAgent(options), https: new HttpsProxyAgent(options) } };
}

export interface Session {
  readonly id: string;
  readonly pool: string;
  /** The country the session exits in (undefined: a pool without countries). */
  readonly country: string | undefined;
  /** What health is kept under: the static proxy's label, or the session's own. */
  readonly exit: string;
  readonly proxy: Proxy;
  readonly expiresAt: number;
  uses: number;
  inFlight: number;
  dropped: boolean;
  /** Cookies the session earned (name → value): an exemption from a solved /sorry/ page. */
  readonly cookies: Map<string, string>;
}

/** One search's hold on a session. */
export interface Lease {
  session: Session;
  pool: string;
  tier: number;
  /** The country the search asked for. */
  country: string;
  /** No pool lists the country: a pool without countries serves it. */
  fallback: boolean;
  /** This try is the fleet's one probe of an exit whose rest ended. */
  probe: boolean;
}

export type Pick = Lease | { resting: ExitReason } | undefined;

export function isLease(p: Pick): p is Lease {
  return p !== undefined && "session" in p;
}

interface PoolState {
  config: PoolConfig;
  /** Static pools: one proxy per configured URL. */
  proxies: Proxy[];
  cursor: number;
  /** Live sessions by country ("" for none). */
  sessions: Map<string, Session[]>;
}

/** What the router tells its observer (metrics). */
export interface RouterEvents {
  sessionOpened?(pool: string): void;
  sessionClosed?(pool: string): void;
}

export class ExitRouter {
  private pools: PoolState[] = [];
  private configSource = "";

  constructor(
    config: ExitsConfig,
    private readonly health: ExitHealth,
    private readonly events: RouterEvents = {},
    private readonly now: () => number = Date.now,
    /** Called when a session's proxy is no longer used (its agents closed here): transports drop their clients of it. */
    private readonly onForget: (proxy: Proxy) => void = () => undefined,
  ) {
    this.configure(config);
  }

  /** Takes a new pool configuration (a reloaded file); sessions of pools that changed are closed. */
  configure(config: ExitsConfig): void {
    const old = new Map(this.pools.map((p) => [p.config.name, p]));
    this.pools = config.pools.map((c) => {
      const before = old.get(c.name);
      if (before && JSON.stringify(before.config) === JSON.stringify(c)) {
        old.delete(c.name);
        return before;
      }
      return { config: c, proxies: (c.proxies ?? []).map((u) => makeProxy(u)), cursor: 0, sessions: new Map() };
    });
    for (const gone of old.values()) this.closePool(gone);
    this.configSource = config.source;
  }

  get configured(): boolean {
    return this.pools.length > 0;
  }

  get source(): string {
    return this.configSource;
  }

  /** The pools as configured, without URLs: names, tiers, countries, exit labels. */
  describe(): { name: string; tier: number; countries?: string[]; kind: "static" | "gateway"; exits: string[]; sessions: number }[] {
    return this.pools.map((p) => ({
      name: p.config.name,
      tier: p.config.tier,
      ...(p.config.countries ? { countries: p.config.countries } : {}),
      kind: p.config.gateway ? "gateway" : "static",
      exits: p.proxies.map((x) => x.label),
      sessions: [...p.sessions.values()].reduce((n, l) => n + l.length, 0),
    }));
  }

  /** The exit as a metric label: a static proxy of a short list, else `*`. */
  metricLabel(lease: Lease): string {
    const pool = this.pools.find((p) => p.config.name === lease.pool);
    return pool && !pool.config.gateway && pool.proxies.length <= 16 ? lease.session.exit : "*";
  }

  /** Sessions open now per pool. */
  sessionsInUse(): Record<string, number> {
    return Object.fromEntries(this.pools.map((p) => [p.config.name, [...p.sessions.values()].reduce((n, l) => n + l.filter((s) => !s.dropped).length, 0)]));
  }

  /**
   * A session for a search in `country`, avoiding the exits in `avoid` (those that failed this
   * search). `undefined`: no pools, go direct. `{ resting }`: every pool that may serve the country rests.
   */
  async lease(country: string, avoid: ReadonlySet<string> = new Set()): Promise<Pick> {
    if (!this.pools.length) return undefined;
    const listing = this.pools.filter((p) => p.config.countries?.includes(country));
    const fallback = listing.length === 0;
    const candidates = (fallback ? this.pools.filter((p) => !p.config.countries) : listing).sort((a, b) => a.config.tier - b.config.tier);
    let reason: ExitReason | undefined;
    for (const pool of candidates) {
      const got = pool.config.gateway ? await this.gatewaySession(pool, country, avoid) : await this.staticSession(pool, country, avoid);
      if ("resting" in got) {
        reason ??= got.resting;
        continue;
      }
      return this.hold(got.session, pool, country, fallback, got.probe);
    }
    return { resting: reason ?? "blocked" };
  }

  /**
   * The try's outcome, for the fleet's health; a block or a proxy error drops the session.
   * Undefined: nothing to say (a wall, a parse failure). `proxyItself`: the proxy refused the
   * credentials (407) or its port refused the connection, a fault of the whole gateway, not of one
   * session's address.
   */
  async report(lease: Lease, event: ExitEvent | undefined, proxyItself = false): Promise<void> {
    const { session } = lease;
    if (event === "blocked" || event === "proxy_error") this.drop(session);
    if (event === undefined) return;
    const pool = this.pools.find((p) => p.config.name === session.pool);
    // A gateway's session that failed is dropped and never asked again; only the gateway's own faults rest the pool.
    if (pool?.config.gateway) {
      if (event === "proxy_error" && proxyItself) await this.health.report(session.pool, GATEWAY, event);
      else if (event === "success") await this.health.report(session.pool, GATEWAY, event);
      return;
    }
    await this.health.report(session.pool, session.exit, event);
  }

  /** The search is done with the session. */
  release(lease: Lease): void {
    const s = lease.session;
    s.inFlight = Math.max(0, s.inFlight - 1);
    if ((s.dropped || this.spent(s)) && s.inFlight === 0) this.close(s);
  }

  /** Closes every session and proxy. */
  shutdown(): void {
    for (const p of this.pools) this.closePool(p);
    this.pools = [];
  }

  /** The fleet's verdict; with its store out of reach, an exit is asked (a search is not refused for want of Redis). */
  private async claim(pool: string, exit: string): Promise<"free" | "probe" | "resting"> {
    try {
      return await this.health.claim(pool, exit);
    } catch {
      return "free";
    }
  }

  private hold(session: Session, pool: PoolState, country: string, fallback: boolean, probe: boolean): Lease {
    session.inFlight++;
    session.uses++;
    return { session, pool: pool.config.name, tier: pool.config.tier, country, fallback, probe };
  }

  private async staticSession(pool: PoolState, country: string, avoid: ReadonlySet<string>): Promise<{ session: Session; probe: boolean } | { resting: ExitReason }> {
    const key = pool.config.countries ? country : "";
    const live = this.live(pool, key);
    const n = pool.proxies.length;
    // Idle exits first, in turn from the cursor; then the least busy.
    const order = pool.proxies
      .map((proxy, i) => ({ proxy, turn: (i - pool.cursor + n) % n, busy: live.find((s) => s.exit === proxy.label)?.inFlight ?? 0 }))
      .filter((c) => !avoid.has(c.proxy.label))
      .sort((a, b) => a.busy - b.busy || a.turn - b.turn);
    for (const { proxy } of order) {
      const verdict = await this.claim(pool.config.name, proxy.label);
      if (verdict === "resting") continue;
      pool.cursor = (pool.proxies.indexOf(proxy) + 1) % n;
      let session = live.find((s) => s.exit === proxy.label);
      if (!session) {
        session = this.open(pool, key || undefined, proxy.label, proxy);
        live.push(session);
      }
      return { session, probe: verdict === "probe" };
    }
    return { resting: "blocked" };
  }

  private async gatewaySession(pool: PoolState, country: string, avoid: ReadonlySet<string>): Promise<{ session: Session; probe: boolean } | { resting: ExitReason }> {
    const verdict = await this.claim(pool.config.name, GATEWAY);
    if (verdict === "resting") return { resting: "proxy_error" };
    const key = pool.config.countries ? country : "";
    const live = this.live(pool, key);
    let session = live.find((s) => s.inFlight === 0 && !avoid.has(s.exit));
    if (!session) {
      const id = randomBytes(6).toString("hex");
      const url = fillGateway(pool.config.gateway!, { country: key || "us", session: id });
      const label = `${pool.config.name}/${key || "any"}/${id}`;
      session = this.open(pool, key || undefined, label, makeProxy(url, label), id);
      live.push(session);
    }
    return { session, probe: verdict === "probe" };
  }

  /** The pool's sessions for the country that may still serve, those spent closed. */
  private live(pool: PoolState, key: string): Session[] {
    const all = pool.sessions.get(key) ?? [];
    const live = all.filter((s) => !s.dropped && !this.spent(s));
    for (const s of all) if (!live.includes(s) && s.inFlight === 0) this.close(s);
    // Spent sessions still in flight stay out of the list; release() closes them.
    for (const s of all) if (!live.includes(s)) s.dropped = true;
    pool.sessions.set(key, live);
    return live;
  }

  private spent(s: Session): boolean {
    const pool = this.pools.find((p) => p.config.name === s.pool);
    if (!pool) return true;
    return this.now() >= s.expiresAt || s.uses >= pool.config.maxUsesPerSession;
  }

  private open(pool: PoolState, country: string | undefined, exit: string, proxy: Proxy, id = randomBytes(6).toString("hex")): Session {
    this.events.sessionOpened?.(pool.config.name);
    return {
      id, pool: pool.config.name, country, exit, proxy, expiresAt: this.now() + pool.config.sessionTtlSeconds * 1000,
      uses: 0, inFlight: 0, dropped: false, cookies: new Map(),
    };
  }

  private drop(s: Session): void {
    if (s.dropped) return;
    s.dropped = true;
    const pool = this.pools.find((p) => p.config.name === s.pool);
    const list = pool?.sessions.get(s.country ?? "");
    if (list) pool!.sessions.set(s.country ?? "", list.filter((x) => x !== s));
  }

  private closed = new WeakSet<Session>();
  private close(s: Session): void {
    if (this.closed.has(s)) return;
    this.closed.add(s);
    s.dropped = true;
    this.events.sessionClosed?.(s.pool);
    // A static proxy's agents belong to the pool and outlive its sessions; a gateway session's are its own.
    const pool = this.pools.find((p) => p.config.name === s.pool);
    if (!pool?.proxies.includes(s.proxy)) {
      s.proxy.agents.http.destroy();
      s.proxy.agents.https.destroy();
      this.onForget(s.proxy);
    }
  }

  private closePool(p: PoolState): void {
    for (const list of p.sessions.values()) for (const s of list) this.close(s);
    p.sessions.clear();
    for (const proxy of p.proxies) {
      proxy.agents.http.destroy();
      proxy.agents.https.destroy();
      this.onForget(proxy);
    }
  }
}

/** What a gateway pool's proxy errors are kept under: the gateway itself, not one session. */
export const GATEWAY = "gateway";
