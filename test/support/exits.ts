/**
 * Exits on loopback for tests: forward proxies (HTTP CONNECT and absolute-form, SOCKS5) that open their
 * upstream connections from their own 127.x source address, and a fake provider gateway (one HTTP proxy
 * port) that reads `cc-XX` and `sessid-…` from the proxy username and gives every (country, session) its
 * own 127.x address. The replay's exit model (`exits` option) tells them apart by that address.
 *
 *   const fleet = await startExitFleet({ staticExits: [{ country: "us" }], gatewayCountries: ["de", "fr"] });
 *   const replay = await startReplayServer({ dir, exits: { ...fleet.exits, budget: { searches: 5, windowMs: 60_000, flagMs: 30_000 } } });
 *   fleet.static[0].url          // http://127.0.0.1:PORT (or with user:pw@), leaves from fleet.static[0].address
 *   fleet.gateway.template       // http://cust-test-cc-{country}-sessid-{session}:PASSWORD@127.0.0.1:PORT
 *   await fleet.close();
 *
 * Only loopback destinations are forwarded (anything else gets 403): tests never reach the internet.
 */
import { Agent, createServer, request, type IncomingHttpHeaders, type IncomingMessage, type RequestOptions, type ServerResponse } from "node:http";
import { connect, createServer as createTcpServer, isIPv4, type AddressInfo, type Server, type Socket } from "node:net";
import { connect as tlsConnect } from "node:tls";
import { readFileSync } from "node:fs";
import type { ExitClass, ExitConfig } from "@serp/replay";
import { profileTable, PROFILE_SETS, shippedProfilesFile, type ProfileTable } from "@serp/upstream";

export interface ProxyAuth {
  username: string;
  password: string;
}

/** Where one proxied request leaves from, or why the proxy refuses it. */
export type ProxyDecision = { localAddress: string } | { status: 403 | 407 | 502; reason: string };

/** Decides from the proxy credentials (undefined when the client sent none). */
export type ProxyResolver = (auth: ProxyAuth | undefined) => ProxyDecision;

export interface ProxyCounts {
  /** CONNECT tunnels and SOCKS5 connects opened. */
  tunnels: number;
  /** Absolute-form HTTP requests forwarded. */
  forwarded: number;
  /** Refused (403, 407, 502) before reaching the upstream. */
  refused: number;
}

export interface RunningProxy {
  port: number;
  counts(): ProxyCounts;
  close(): Promise<void>;
}

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "::1", "[::1]"]);

function loopback(host: string): boolean {
  return LOOPBACK_HOSTS.has(host) || (isIPv4(host) && host.startsWith("127."));
}

function basicAuth(header: string | undefined): ProxyAuth | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header?.trim() ?? "");
  if (!match) return undefined;
  const text = Buffer.from(match[1] ?? "", "base64").toString("utf8");
  const at = text.indexOf(":");
  if (at < 0) return undefined;
  return { username: decodeURIComponent(text.slice(0, at)), password: decodeURIComponent(text.slice(at + 1)) };
}

function refusalHead(decision: { status: number; reason: string }): string {
  const title = decision.status === 407 ? "Proxy Authentication Required" : decision.status === 403 ? "Forbidden" : "Bad Gateway";
  const challenge = decision.status === 407 ? 'Proxy-Authenticate: Basic realm="exit"\r\n' : "";
  return `HTTP/1.1 ${decision.status} ${title}\r\n${challenge}Content-Type: text/plain\r\nContent-Length: ${Buffer.byteLength(decision.reason)}\r\nConnection: close\r\n\r\n${decision.reason}`;
}

function listen(server: Server, host = "127.0.0.1"): Promise<number> {
  return new Promise((ready, fail) => {
    server.once("error", fail);
    server.listen(0, host, () => {
      server.off("error", fail);
      ready((server.address() as AddressInfo).port);
    });
  });
}

function closer(server: Server, sockets: Set<Socket>, agent?: Agent): () => Promise<void> {
  let closing: Promise<void> | undefined;
  return () => {
    closing ??= new Promise<void>((done) => {
      server.close(() => done());
      for (const socket of sockets) socket.destroy();
      agent?.destroy();
    });
    return closing;
  };
}

/**
 * An HTTP proxy: CONNECT tunnels (https, and http for clients that tunnel) and absolute-form requests
 * (plain http through a proxy), each opened from the address `resolve` picks for the request's credentials.
 */
export async function startHttpProxy(resolve: ProxyResolver): Promise<RunningProxy> {
  const counts: ProxyCounts = { tunnels: 0, forwarded: 0, refused: 0 };
  const sockets = new Set<Socket>();
  // One agent per proxy: keep-alive upstream connections are pooled per local address (part of the agent's key).
  const agent = new Agent({ keepAlive: true });

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let target: URL;
    try {
      target = new URL(req.url ?? "");
    } catch {
      counts.refused += 1;
      res.writeHead(400, { "content-type": "text/plain" }).end("absolute-form URL expected");
      return;
    }
    const decision = loopback(target.hostname) ? resolve(basicAuth(req.headers["proxy-authorization"])) : { status: 403 as const, reason: "only loopback destinations" };
    if ("status" in decision) {
      counts.refused += 1;
      res.writeHead(decision.status, decision.status === 407 ? { "proxy-authenticate": 'Basic realm="exit"' } : {}).end(decision.reason);
      return;
    }
    counts.forwarded += 1;
    const headers = { ...req.headers };
    delete headers["proxy-authorization"];
    delete headers["proxy-connection"];
    const upstream = request(
      { hostname: target.hostname, port: target.port || 80, path: `${target.pathname}${target.search}`, method: req.method, headers, localAddress: decision.localAddress, agent },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502).end("upstream connection failed");
      else res.destroy();
    });
    req.pipe(upstream);
  });

  server.on("connect", (req: IncomingMessage, client: Socket, head: Buffer) => {
    const [host = "", portText = ""] = splitHostPort(req.url ?? "");
    const decision = loopback(host) ? resolve(basicAuth(req.headers["proxy-authorization"])) : { status: 403 as const, reason: "only loopback destinations" };
    if ("status" in decision) {
      counts.refused += 1;
      client.end(refusalHead(decision));
      return;
    }
    counts.tunnels += 1;
    const upstream = connect({ host, port: Number(portText), localAddress: decision.localAddress });
    sockets.add(upstream);
    upstream.once("close", () => sockets.delete(upstream));
    upstream.once("connect", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => {
      if (client.writable && upstream.connecting) client.end(refusalHead({ status: 502, reason: "upstream connection failed" }));
      else client.destroy();
    });
    client.on("error", () => upstream.destroy());
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });

  const port = await listen(server);
  return { port, counts: () => ({ ...counts }), close: closer(server, sockets, agent) };
}

function splitHostPort(authority: string): [string, string] {
  const match = /^\[?([^\]]*?)\]?:(\d{1,5})$/.exec(authority);
  return match ? [match[1] ?? "", match[2] ?? ""] : ["", ""];
}

/** Reads exactly `n` bytes from `socket` (SOCKS5 handshake), buffering what arrives. */
function reader(socket: Socket): (n: number) => Promise<Buffer> {
  let buffered = Buffer.alloc(0);
  let waiting: { n: number; done: (b: Buffer) => void; fail: (e: Error) => void } | undefined;
  const pump = () => {
    if (waiting && buffered.length >= waiting.n) {
      const { n, done } = waiting;
      waiting = undefined;
      const chunk = buffered.subarray(0, n);
      buffered = buffered.subarray(n);
      done(chunk);
    }
  };
  const onData = (data: Buffer) => {
    buffered = Buffer.concat([buffered, data]);
    pump();
  };
  socket.on("data", onData);
  socket.once("close", () => waiting?.fail(new Error("closed")));
  return (n: number) =>
    new Promise<Buffer>((done, fail) => {
      waiting = { n, done, fail };
      pump();
    });
}

/**
 * A SOCKS5 proxy (RFC 1928 CONNECT, RFC 1929 username/password): no well-kept npm SOCKS5 *server* exists
 * (only clients), and the handshake is small. Connects from the address `resolve` picks.
 */
export async function startSocks5Proxy(resolve: ProxyResolver, requireAuth: boolean): Promise<RunningProxy> {
  const counts: ProxyCounts = { tunnels: 0, forwarded: 0, refused: 0 };
  const sockets = new Set<Socket>();

  async function handshake(client: Socket): Promise<void> {
    const read = reader(client);
    const [version = 0, methodCount = 0] = await read(2);
    if (version !== 5) return void client.destroy();
    const methods = [...(await read(methodCount))];
    const method = requireAuth ? 0x02 : 0x00;
    if (!methods.includes(method)) {
      counts.refused += 1;
      return void client.end(Buffer.from([5, 0xff]));
    }
    client.write(Buffer.from([5, method]));
    let auth: ProxyAuth | undefined;
    if (requireAuth) {
      const [, userLength = 0] = await read(2);
      const username = (await read(userLength)).toString("utf8");
      const [passLength = 0] = await read(1);
      auth = { username, password: (await read(passLength)).toString("utf8") };
    }
    const decision = resolve(auth);
    if (requireAuth) {
      if ("status" in decision && decision.status === 407) {
        counts.refused += 1;
        return void client.end(Buffer.from([1, 1]));
      }
      client.write(Buffer.from([1, 0]));
    }
    const [, command = 0, , type = 0] = await read(4);
    let host: string;
    if (type === 1) host = [...(await read(4))].join(".");
    else if (type === 3) host = (await read((await read(1))[0] ?? 0)).toString("utf8");
    else if (type === 4) host = ((await read(16)).toString("hex").match(/.{4}/g) ?? []).join(":");
    else return void client.destroy();
    const port = (await read(2)).readUInt16BE(0);
    const reply = (code: number) => Buffer.from([5, code, 0, 1, 0, 0, 0, 0, 0, 0]);
    if (command !== 1) return void client.end(reply(7));
    if ("status" in decision || !loopback(host)) {
      counts.refused += 1;
      return void client.end(reply(2));
    }
    client.removeAllListeners("data");
    counts.tunnels += 1;
    const upstream = connect({ host, port, localAddress: decision.localAddress });
    sockets.add(upstream);
    upstream.once("close", () => sockets.delete(upstream));
    upstream.once("connect", () => {
      client.write(reply(0));
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on("error", () => (upstream.connecting ? client.end(reply(5)) : client.destroy()));
    client.on("error", () => upstream.destroy());
  }

  const server = createTcpServer((client) => {
    sockets.add(client);
    client.once("close", () => sockets.delete(client));
    client.on("error", () => client.destroy());
    handshake(client).catch(() => client.destroy());
  });
  const port = await listen(server);
  return { port, counts: () => ({ ...counts }), close: closer(server, sockets) };
}

/** `cc-XX` / `country-XX` and `sessid-ID` / `session-ID` from a provider-style proxy username. */
export function parseGatewayUsername(username: string): { country?: string; session?: string } {
  const country = /(?:^|-)(?:cc|country)-([A-Za-z]{2})(?=-|$)/.exec(username)?.[1]?.toLowerCase();
  const session = /(?:^|-)(?:sessid|session)-([A-Za-z0-9_]{1,64})(?=-|$)/.exec(username)?.[1];
  return { ...(country ? { country } : {}), ...(session ? { session } : {}) };
}

export interface StaticExitSpec {
  country: string;
  /** Default "datacenter". */
  class?: ExitClass;
  /** Default "http". */
  protocol?: "http" | "socks5";
  /** true: made-up credentials; an object: these. Default: none. */
  auth?: boolean | ProxyAuth;
}

export interface StaticExit {
  /** The proxy URL to configure (credentials included when it has them). */
  url: string;
  /** The source address the replay sees. */
  address: string;
  country: string;
  class: ExitClass;
  protocol: "http" | "socks5";
  auth?: ProxyAuth;
  counts(): ProxyCounts;
}

export interface GatewaySession {
  country: string;
  /** Undefined for a rotating (no sessid) connection. */
  session?: string;
  address: string;
}

export interface FleetGateway {
  /** `http://cust-test-cc-{country}-sessid-{session}:PASSWORD@127.0.0.1:PORT` */
  template: string;
  /** The template filled for one country and session. */
  urlFor(country: string, session: string): string;
  port: number;
  countries: string[];
  class: ExitClass;
  /** The address a (country, session) leaves from (allocated on first use; undefined when never used). */
  addressOf(country: string, session: string): string | undefined;
  /** Every (country, session) the gateway has seen, in order of first use. */
  sessions(): GatewaySession[];
  counts(): ProxyCounts;
}

export interface ExitFleetOptions {
  staticExits?: StaticExitSpec[];
  /** Countries the gateway exits in (each gets its own 127.(110+i).x.y range). Default: no gateway. */
  gatewayCountries?: string[];
  /** Default "residential". */
  gatewayClass?: ExitClass;
  /** The gateway's password. Default "gw-secret". */
  gatewayPassword?: string;
}

export interface ExitFleet {
  static: StaticExit[];
  gateway?: FleetGateway;
  /** Pass as the replay's `exits` option (add a `budget`); unknown addresses default to "zz"/datacenter. */
  exits: ExitConfig;
  close(): Promise<void>;
}

const STATIC_PREFIX = "127.50.0.";
const GATEWAY_SECOND_OCTET = 110;

export async function startExitFleet(options: ExitFleetOptions): Promise<ExitFleet> {
  const running: RunningProxy[] = [];
  const close = async () => {
    await Promise.all(running.map((proxy) => proxy.close()));
  };
  try {
    const staticExits: StaticExit[] = [];
    for (const [i, spec] of (options.staticExits ?? []).entries()) {
      if (i >= 250) throw new Error("startExitFleet: at most 250 static exits");
      const address = `${STATIC_PREFIX}${i + 1}`;
      const auth = spec.auth === true ? { username: `user${i + 1}`, password: `pw-${i + 1}` } : spec.auth || undefined;
      const resolve: ProxyResolver = (given) =>
        auth && (given?.username !== auth.username || given.password !== auth.password) ? { status: 407, reason: "proxy authentication required" } : { localAddress: address };
      const protocol = spec.protocol ?? "http";
      const proxy = protocol === "socks5" ? await startSocks5Proxy(resolve, auth !== undefined) : await startHttpProxy(resolve);
      running.push(proxy);
      const credentials = auth ? `${encodeURIComponent(auth.username)}:${encodeURIComponent(auth.password)}@` : "";
      staticExits.push({
        url: `${protocol}://${credentials}127.0.0.1:${proxy.port}`,
        address,
        country: spec.country.toLowerCase(),
        class: spec.class ?? "datacenter",
        protocol,
        ...(auth ? { auth } : {}),
        counts: proxy.counts,
      });
    }

    const exits: ExitConfig = {
      addresses: Object.fromEntries(staticExits.map((exit) => [exit.address, { country: exit.country, class: exit.class }])),
      rules: [],
      default: { country: "zz", class: "datacenter" },
    };

    let gateway: FleetGateway | undefined;
    const countries = (options.gatewayCountries ?? []).map((c) => c.toLowerCase());
    if (countries.length > 0) {
      if (countries.length > 100) throw new Error("startExitFleet: at most 100 gateway countries");
      const gatewayClass = options.gatewayClass ?? "residential";
      const password = options.gatewayPassword ?? "gw-secret";
      const bySession = new Map<string, string>();
      const seen: GatewaySession[] = [];
      const next = new Map<string, number>();
      let rotation = 0;
      const allocate = (country: string): string => {
        const n = (next.get(country) ?? 0) + 1;
        if (n > 62_500) throw new Error("gateway: out of addresses");
        next.set(country, n);
        return `127.${GATEWAY_SECOND_OCTET + countries.indexOf(country)}.${Math.floor(n / 250)}.${(n % 250) + 1}`;
      };
      const resolve: ProxyResolver = (auth) => {
        if (!auth || auth.password !== password) return { status: 407, reason: "proxy authentication required" };
        const parsed = parseGatewayUsername(auth.username);
        // No country: the provider picks one (here: round robin over the gateway's countries).
        const country = parsed.country ?? countries[rotation++ % countries.length] ?? "";
        if (!countries.includes(country)) return { status: 502, reason: `no exit available in country ${country}` };
        if (parsed.session === undefined) {
          const address = allocate(country);
          seen.push({ country, address });
          return { localAddress: address };
        }
        const key = `${country} ${parsed.session}`;
        let address = bySession.get(key);
        if (!address) {
          address = allocate(country);
          bySession.set(key, address);
          seen.push({ country, session: parsed.session, address });
        }
        return { localAddress: address };
      };
      const proxy = await startHttpProxy(resolve);
      running.push(proxy);
      const template = `http://cust-test-cc-{country}-sessid-{session}:${password}@127.0.0.1:${proxy.port}`;
      gateway = {
        template,
        urlFor: (country, session) => template.replace("{country}", country).replace("{session}", session),
        port: proxy.port,
        countries,
        class: gatewayClass,
        addressOf: (country, session) => bySession.get(`${country.toLowerCase()} ${session}`),
        sessions: () => seen.map((s) => ({ ...s })),
        counts: proxy.counts,
      };
      exits.rules = countries.map((country, i) => ({ prefix: `127.${GATEWAY_SECOND_OCTET + i}.`, country, class: gatewayClass }));
    }

    return { static: staticExits, ...(gateway ? { gateway } : {}), exits, close };
  } catch (error) {
    await close();
    throw error;
  }
}

export interface ProxiedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/** Opens a SOCKS5 tunnel to `host:port` through `proxy` (with its URL's credentials, if any). */
export function socks5Tunnel(proxy: URL, host: string, port: number): Promise<Socket> {
  return new Promise((done, fail) => {
    const socket = connect({ host: proxy.hostname, port: Number(proxy.port) });
    socket.once("error", fail);
    const read = reader(socket);
    const username = decodeURIComponent(proxy.username);
    const password = decodeURIComponent(proxy.password);
    const steps = async () => {
      await new Promise((ready) => socket.once("connect", ready));
      socket.write(Buffer.from([5, 1, username ? 2 : 0]));
      const [, method] = await read(2);
      if (method === 0xff) throw new Error("socks5: no acceptable method");
      if (method === 2) {
        socket.write(Buffer.concat([Buffer.from([1, Buffer.byteLength(username)]), Buffer.from(username), Buffer.from([Buffer.byteLength(password)]), Buffer.from(password)]));
        const [, status] = await read(2);
        if (status !== 0) throw new Error("socks5: authentication refused");
      }
      const name = Buffer.from(host);
      const portBytes = Buffer.alloc(2);
      portBytes.writeUInt16BE(port);
      socket.write(Buffer.concat([Buffer.from([5, 1, 0, 3, name.length]), name, portBytes]));
      const [, code] = await read(10);
      if (code !== 0) throw new Error(`socks5: connect refused (${code})`);
      socket.removeAllListeners("data");
      socket.off("error", fail);
      return socket;
    };
    steps().then(done, (error: unknown) => {
      socket.destroy();
      fail(error);
    });
  });
}

/** Opens a CONNECT tunnel to `host:port` through an HTTP proxy (with its URL's credentials, if any). */
export function connectTunnel(proxy: URL, host: string, port: number): Promise<Socket> {
  return new Promise((done, fail) => {
    const auth = proxy.username ? { "proxy-authorization": `Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString("base64")}` } : {};
    const req = request({ host: proxy.hostname, port: Number(proxy.port), method: "CONNECT", path: `${host}:${port}`, headers: { host: `${host}:${port}`, ...auth }, agent: false });
    req.once("connect", (res, socket) => {
      if (res.statusCode === 200) return done(socket);
      socket.destroy();
      fail(new Error(`CONNECT refused: ${res.statusCode}`));
    });
    req.once("response", (res) => {
      res.resume();
      fail(new Error(`CONNECT refused: ${res.statusCode}`));
    });
    req.once("error", fail);
    req.end();
  });
}

/**
 * One request to `target` through `proxyUrl`, for tests that drive the replay from a given exit without the
 * service. http targets: absolute-form with Proxy-Authorization (http proxy) or a SOCKS5 tunnel; https
 * targets: a CONNECT (or SOCKS5) tunnel, then TLS trusting `ca` (the replay's `certPem`).
 */
export async function requestVia(
  proxyUrl: string,
  target: string,
  init: { method?: string; headers?: Record<string, string>; body?: string; ca?: string } = {},
): Promise<ProxiedResponse> {
  const proxy = new URL(proxyUrl);
  const url = new URL(target);
  const secure = url.protocol === "https:";
  const headers: Record<string, string> = { host: url.host, ...init.headers };
  if (init.body !== undefined) headers["content-length"] = String(Buffer.byteLength(init.body));
  const method = init.method ?? "GET";
  const port = Number(url.port || (secure ? 443 : 80));
  let options: RequestOptions;
  if (proxy.protocol === "socks5:" || secure) {
    const tunnel = proxy.protocol === "socks5:" ? await socks5Tunnel(proxy, url.hostname, port) : await connectTunnel(proxy, url.hostname, port);
    const socket = secure ? tlsConnect({ socket: tunnel, ca: init.ca, servername: isIPv4(url.hostname) ? undefined : url.hostname }) : tunnel;
    // No agent, so that the request runs over the tunnel (`agent: false` would make a fresh Agent that dials itself).
    options = { method, headers, path: `${url.pathname}${url.search}`, createConnection: () => socket };
  } else {
    const auth = proxy.username ? { "proxy-authorization": `Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString("base64")}` } : {};
    options = { method, headers: { ...headers, ...auth }, agent: false, host: proxy.hostname, port: Number(proxy.port), path: url.href };
  }
  return new Promise((done, fail) => {
    const req = request(options, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => done({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", fail);
    });
    req.on("error", fail);
    req.end(init.body);
  });
}

/** The shipped profile table with only its browser rungs: the exits tests of the browser rung. */
export function browserOnlyTable(): ProfileTable {
  const shipped = JSON.parse(readFileSync(shippedProfilesFile(), "utf8"));
  return profileTable({
    ...shipped,
    version: "browser-only",
    kinds: Object.fromEntries(PROFILE_SETS.map((kind) => [kind, (shipped.kinds[kind] as string[]).filter((name) => shipped.profiles[name].transport === "browser")])),
  });
}
