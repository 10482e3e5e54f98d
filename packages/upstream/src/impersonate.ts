/**
 * The `impersonate` transport: one request with impit, whose TLS ClientHello and HTTP/2 settings
 * are a real browser's (reference/upstream-2026.md §1: the upstream inspects the handshake since
 * 2026-08-23; Node's own TLS cannot match Chrome's). Same contract as fetchPage: a redirect is
 * returned, never followed; no retries; the body is capped and decoded; it rejects only on abort.
 *
 * One impit client per browser and proxy holds its own connection pool (HTTP/2 where the server
 * speaks it), so requests to one host share a connection instead of paying a handshake each.
 * impit cannot take a private CA: a private-CA upstream needs UPSTREAM_TLS_INSECURE=true.
 */
import { Impit } from "impit";
import { decode, headerBytes, requestBytes, startRequest, withJar, type FetchFailure, type FetchResult, type FetchSettings } from "./fetch.js";
import type { Impersonated } from "./profiles.js";
import type { Proxy } from "./proxies.js";
import type { Transport } from "./transports.js";

export interface ImpersonatedRequest {
  url: string;
  /** Sent over the impersonated browser's own headers; an empty value removes one of those. */
  headers: Record<string, string>;
  browser: Impersonated;
  proxy?: Proxy;
  signal?: AbortSignal;
}

export class ImpersonatingClients {
  private readonly clients = new Map<string, Impit>();

  constructor(private readonly insecure = false) {}

  /** Sends the request. Resolves with a response or a failure; rejects only when `signal` aborts. */
  async fetch(req: ImpersonatedRequest, settings: FetchSettings): Promise<FetchResult> {
    // The request's own timer: impit's timeout does not cover a body that trickles in.
    const { ms, timeout, signal } = startRequest(req.signal, settings.timeoutMs);
    try {
      const res = await this.client(req.browser, req.proxy).fetch(req.url, {
        headers: req.headers,
        redirect: "manual",
        timeout: settings.timeoutMs,
        signal,
      });
      const body = await readCapped(res.body, settings.maxBodyBytes);
      if (!body) return { ok: false, failure: "too_large", detail: `body over ${settings.maxBodyBytes} bytes`, ms: ms() };
      const headers: Record<string, string> = {};
      res.headers.forEach((value, name) => (headers[name] = value));
      // impit hands the body decompressed: the declared length is what crossed the wire, when there is one.
      const wire = Number(headers["content-length"]) || body.length;
      return {
        ok: true,
        ms: ms(),
        bytes: { up: requestBytes(req.url, req.headers), down: headerBytes(headers) + wire },
        response: { statusCode: res.status, headers, body: decode(body, headers["content-type"]), url: req.url },
      };
    } catch (error) {
      if (req.signal?.aborted) throw req.signal.reason ?? error;
      if (timeout.aborted) return { ok: false, failure: "timeout", detail: `no answer within ${settings.timeoutMs} ms`, ms: ms() };
      return { ok: false, ...describe(error), ms: ms() };
    }
  }

  /** Drops the clients of a proxy no longer used (a gateway session closed). */
  forget(proxyUrl: string): void {
    for (const key of [...this.clients.keys()]) if (key.endsWith(` ${proxyUrl}`)) this.clients.delete(key);
  }

  /** Drops every client and its pooled connections. */
  close(): void {
    this.clients.clear();
  }

  private client(browser: Impersonated, proxy: Proxy | undefined): Impit {
    const key = `${browser} ${proxy?.url ?? ""}`;
    let client = this.clients.get(key);
    if (!client) {
      client = new Impit({ browser, proxyUrl: proxy?.url, ignoreTlsErrors: this.insecure, followRedirects: false });
      this.clients.set(key, client);
    }
    return client;
  }
}

/** The whole body, or undefined once it passes `max` bytes (the rest is not read). */
async function readCapped(stream: ReadableStream<Uint8Array>, max: number): Promise<Buffer | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return Buffer.concat(chunks, size);
    size += value.byteLength;
    if (size > max) {
      await reader.cancel().catch(() => undefined);
      return undefined;
    }
    chunks.push(value);
  }
}

/** impit's error classes (TimeoutError, ConnectError, ReadError…) by name: the message is a Rust debug dump. */
function describe(error: unknown): { failure: FetchFailure; detail: string } {
  const e = error as { name?: string; constructor?: { name?: string }; message?: string };
  const name = e.constructor?.name && e.constructor.name !== "Error" ? e.constructor.name : (e.name ?? "Error");
  const firstLine = (e.message ?? String(error)).split("\n").find((l) => l.trim()) ?? "";
  const detail = `${name}: ${firstLine.trim()}`.slice(0, 300);
  if (/Timeout/.test(name)) return { failure: "timeout", detail };
  if (name === "ReadError" || name === "RemoteProtocolError") return { failure: "truncated", detail };
  return { failure: "network", detail };
}

/** The `impersonate` transport's entry in TRANSPORTS: the profile's browser, the session's cookies as a header. */
export const impersonateTransport: Transport = {
  label: (profile) => `impersonate ${profile.browser}`,
  send: ({ url, headers, jar, profile, proxy, signal }, { impersonating, settings }) =>
    impersonating.fetch({ url, headers: withJar(headers, jar), browser: profile.browser!, proxy, signal }, settings),
};
