/**
 * HTTP(S) agents that check the address actually dialled, at connect time: an IP literal before
 * connecting, a host name after its DNS lookup (every address returned, A and AAAA), so a name
 * that resolves to an internal address (or rebinds to one) is refused without a packet sent.
 * The policy table lives in @serp/store (`refusedAddress`), shared with the API's submit check.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import type { Duplex } from "node:stream";
import { refusedAddress, type AddressKind } from "@serp/store";

export class TargetRefusedError extends Error {
  override readonly name = "TargetRefusedError";
  static readonly CODE = "ERR_WEBHOOK_TARGET_REFUSED";
  readonly code = TargetRefusedError.CODE;
  constructor(
    readonly host: string,
    readonly address: string,
    readonly kind: AddressKind,
  ) {
    super(
      host === address
        ? `refused: ${address} is a ${kind} address`
        : `refused: ${host} resolves to ${address}, a ${kind} address`,
    );
  }
}

type LookupFn = NonNullable<net.TcpSocketConnectOpts["lookup"]>;
type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** Wraps a DNS lookup so that any refused address in its answer fails the connection. */
function guardedLookup(allowPrivate: boolean, base: LookupFn): LookupFn {
  const guarded = (hostname: string, options: object, callback: LookupCallback) => {
    (base as unknown as (h: string, o: object, cb: LookupCallback) => void)(hostname, options, (err, address, family) => {
      if (err) return callback(err, address, family);
      const answers = Array.isArray(address) ? address.map((a) => a.address) : [address];
      for (const a of answers) {
        const kind = refusedAddress(a, allowPrivate);
        if (kind) return callback(new TargetRefusedError(hostname, a, kind), address, family);
      }
      callback(null, address, family);
    });
  };
  return guarded as unknown as LookupFn;
}

type ConnectOptions = net.TcpNetConnectOpts & { lookup?: LookupFn };
type OnCreate = (err: Error | null, socket: Duplex) => void;

/** Checks a literal host at once, and puts the guarded lookup on every other connection. */
function guardConnection(allowPrivate: boolean, options: ConnectOptions, onCreate: OnCreate | undefined): { refused: net.Socket } | { options: ConnectOptions } {
  const host = options.host ?? "localhost";
  const kind = net.isIP(host) ? refusedAddress(host, allowPrivate) : null;
  if (kind) {
    const socket = new net.Socket();
    const err = new TargetRefusedError(host, host, kind);
    if (onCreate) onCreate(err, socket);
    else socket.destroy(err);
    return { refused: socket };
  }
  return { options: { ...options, lookup: guardedLookup(allowPrivate, options.lookup ?? (dnsLookup as unknown as LookupFn)) } };
}

class GuardedHttpAgent extends http.Agent {
  constructor(private readonly allowPrivate: boolean) {
    super({ keepAlive: false });
  }
  override createConnection(options: ConnectOptions, onCreate?: OnCreate) {
    const g = guardConnection(this.allowPrivate, options, onCreate);
    if ("refused" in g) return g.refused;
    return super.createConnection(g.options as never, onCreate);
  }
}

class GuardedHttpsAgent extends https.Agent {
  constructor(private readonly allowPrivate: boolean) {
    super({ keepAlive: false });
  }
  override createConnection(options: ConnectOptions, onCreate?: OnCreate) {
    const g = guardConnection(this.allowPrivate, options, onCreate);
    if ("refused" in g) return g.refused;
    return super.createConnection(g.options as never, onCreate);
  }
}

export interface TargetAgents {
  http: http.Agent;
  https: https.Agent;
}

/**
 * One agent per scheme. Keep-alive is off so every delivery dials (and is checked) afresh.
 * `allowPrivate` lets loopback, private, link-local and CGNAT targets through (tests, private
 * deployments); metadata and unspecified addresses stay refused either way.
 */
export function createTargetAgents(allowPrivate: boolean): TargetAgents {
  return { http: new GuardedHttpAgent(allowPrivate), https: new GuardedHttpsAgent(allowPrivate) };
}
