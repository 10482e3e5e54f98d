/**
 * The `http` transport: one plain HTTP request to the upstream with got, over Node's own TLS. A
 * redirect is returned (and classified), never followed; got never retries (tries across profiles
 * and proxies happen in scrape.ts); the body is decompressed, capped in size and decoded by its
 * declared charset. Direct requests reuse kept-alive connections (`DirectAgents`); proxied ones
 * reuse the proxy's.
 */
import { Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import got, { type CancelableRequest, type Response } from "got";
import type { UpstreamResponse } from "./classify.js";
import type { Proxy } from "./proxies.js";
import type { Transport } from "./transports.js";

/** How upstream certificates are checked: a private CA (PEM) to trust, or none at all. */
export interface UpstreamTls {
  ca?: string;
  /** Verification off, for upstream requests only (UPSTREAM_TLS_INSECURE). */
  insecure?: boolean;
}

export interface FetchSettings {
  /** Whole-request time limit, connect to last byte. */
  timeoutMs: number;
  /** A body larger than this (after decompression) is abandoned. */
  maxBodyBytes: number;
  tls?: UpstreamTls;
}

/** Kept-alive agents for requests that go out without a proxy, one pair per upstream client. */
export class DirectAgents {
  readonly http = new HttpAgent({ keepAlive: true, maxSockets: 64 });
  readonly https: HttpsAgent;
  constructor(tls: UpstreamTls = {}) {
    this.https = new HttpsAgent({ keepAlive: true, maxSockets: 64, ca: tls.ca, rejectUnauthorized: !tls.insecure });
  }
  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}

export interface FetchRequest {
  url: string;
  headers: Record<string, string>;
  proxy?: Proxy;
  /** Used when no proxy is: kept-alive connections of the caller's. */
  direct?: DirectAgents;
  signal?: AbortSignal;
}

/**
 * The clock and signals of one request for the transports that time it themselves: elapsed ms, the
 * request's own time limit, and that limit joined with the caller's signal. Throws if the caller
 * has already aborted.
 */
export function startRequest(caller: AbortSignal | undefined, timeoutMs: number) {
  caller?.throwIfAborted();
  const started = performance.now();
  const timeout = AbortSignal.timeout(timeoutMs);
  return { ms: () => Math.round(performance.now() - started), timeout, signal: caller ? AbortSignal.any([caller, timeout]) : timeout };
}

/** Why no response could be read: too slow, no connection, cut short, or too big. */
export type FetchFailure = "timeout" | "network" | "truncated" | "too_large";

/** Bytes a request moved over the wire: `up` sent, `down` received (compressed as sent). */
export interface WireBytes {
  up: number;
  down: number;
}

/** `bytes`: what the request moved through its exit, when the transport can tell. */
export type FetchResult =
  | { ok: true; response: UpstreamResponse; ms: number; bytes?: WireBytes }
  | { ok: false; failure: FetchFailure; detail: string; ms: number; bytes?: WireBytes };

/** Sends the request. Resolves with a response or a failure; rejects only when `signal` aborts. */
export async function fetchPage(req: FetchRequest, settings: FetchSettings): Promise<FetchResult> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  let tooLarge = false;
  let received = 0;
  const sent = requestBytes(req.url, req.headers);
  let request: CancelableRequest<Response<Buffer>> | undefined;
  try {
    req.signal?.throwIfAborted();
    request = got(req.url, {
      headers: req.headers,
      responseType: "buffer",
      followRedirect: false,
      throwHttpErrors: false,
      retry: { limit: 0 },
      decompress: true,
      strictContentLength: true,
      timeout: { request: settings.timeoutMs },
      agent: req.proxy ? { http: req.proxy.agents.http, https: req.proxy.agents.https } : req.direct ? { http: req.direct.http, https: req.direct.https } : undefined,
      https: { certificateAuthority: settings.tls?.ca, rejectUnauthorized: !settings.tls?.insecure },
      signal: req.signal,
    });
    request.on("downloadProgress", ({ transferred }: { transferred: number }) => {
      received = transferred;
      if (transferred > settings.maxBodyBytes && !tooLarge) {
        tooLarge = true;
        request?.cancel();
      }
    });
    const res = await request;
    return {
      ok: true,
      ms: ms(),
      bytes: { up: sent, down: headerBytes(res.rawHeaders) + received },
      response: {
        statusCode: res.statusCode,
        headers: res.headers,
        body: decode(res.body, res.headers["content-type"]),
        url: req.url,
      },
    };
  } catch (error) {
    if (req.signal?.aborted) throw req.signal.reason ?? error;
    if (tooLarge) return { ok: false, failure: "too_large", detail: `body over ${settings.maxBodyBytes} bytes`, ms: ms(), bytes: { up: sent, down: received } };
    return { ok: false, ...describe(error), ms: ms(), bytes: { up: sent, down: received } };
  }
}

/** A request's line and headers as they go on the wire (HTTP/1.1). */
export function requestBytes(url: string, headers: Record<string, string>): number {
  const u = new URL(url);
  let n = `GET ${u.pathname}${u.search} HTTP/1.1\r\nhost: ${u.host}\r\n\r\n`.length;
  for (const [k, v] of Object.entries(headers)) n += k.length + Buffer.byteLength(v) + 4;
  return n;
}

/** A response's status line and headers as they came (`rawHeaders`: name, value, name, value…). */
export function headerBytes(raw: readonly string[] | Record<string, string>): number {
  let n = 17;
  if (Array.isArray(raw)) for (const part of raw) n += Buffer.byteLength(part) + 2;
  else for (const [k, v] of Object.entries(raw)) n += k.length + Buffer.byteLength(v) + 4;
  return n;
}

function describe(error: unknown): { failure: FetchFailure; detail: string } {
  const e = error as { name?: string; code?: string; message?: string };
  const detail = [e.code, e.message].filter(Boolean).join(": ") || String(error);
  if (e.name === "TimeoutError" || e.code === "ETIMEDOUT") return { failure: "timeout", detail };
  // The connection closed before the declared length or the last chunk arrived.
  if (e.name === "ReadError" || e.code === "ERR_HTTP_CONTENT_LENGTH_MISMATCH" || e.code === "ERR_STREAM_PREMATURE_CLOSE") {
    return { failure: "truncated", detail };
  }
  return { failure: "network", detail };
}

/**
 * Bytes → text by the charset the response declares (header, else an early `<meta charset>` or
 * `<?xml encoding>`): old layouts may answer in Latin-1 or Shift_JIS. Unknown labels read as UTF-8.
 */
export function decode(body: Buffer, contentType: string | undefined): string {
  const head = body.subarray(0, 1024).toString("latin1");
  const label =
    /charset=["']?([\w-]+)/i.exec(contentType ?? "")?.[1] ??
    /<meta[^>]+charset=["']?([\w-]+)/i.exec(head)?.[1] ??
    /<\?xml[^>]+encoding=["']([\w-]+)/i.exec(head)?.[1] ??
    "utf-8";
  try {
    return new TextDecoder(label).decode(body);
  } catch {
    return new TextDecoder("utf-8").decode(body);
  }
}

/**
 * A form post through the same agents as `fetchPage` (the CAPTCHA rung redeems its token this way,
 * through the exit that got the page). Resolves with the status and the cookies set; rejects on a
 * network failure (the caller treats any failure as a solve that did not pay).
 */
export async function postForm(
  req: { url: string; headers: Record<string, string>; body: string; proxy?: Proxy; direct?: DirectAgents; signal?: AbortSignal },
  settings: FetchSettings,
): Promise<{ statusCode: number; cookies: Map<string, string> }> {
  const res = await got.post(req.url, {
    headers: req.headers,
    body: req.body,
    followRedirect: false,
    throwHttpErrors: false,
    retry: { limit: 0 },
    timeout: { request: settings.timeoutMs },
    agent: req.proxy ? { http: req.proxy.agents.http, https: req.proxy.agents.https } : req.direct ? { http: req.direct.http, https: req.direct.https } : undefined,
    https: { certificateAuthority: settings.tls?.ca, rejectUnauthorized: !settings.tls?.insecure },
    signal: req.signal,
  });
  const cookies = new Map<string, string>();
  for (const line of res.headers["set-cookie"] ?? []) {
    const [pair] = line.split(";");
    const at = pair!.indexOf("=");
    if (at > 0) cookies.set(pair!.slice(0, at).trim(), pair!.slice(at + 1).trim());
  }
  return { statusCode: res.statusCode, cookies };
}

/** The session's cookies joined to the request's own `cookie` header. */
export function withJar(headers: Record<string, string>, jar: ReadonlyMap<string, string> | undefined): Record<string, string> {
  if (!jar?.size) return headers;
  const mine = [...jar].map(([k, v]) => `${k}=${v}`).join("; ");
  return { ...headers, cookie: headers.cookie ? `${headers.cookie}; ${mine}` : mine };
}

/** The `http` transport's entry in TRANSPORTS: the session's cookies go as a header. */
export const httpTransport: Transport = {
  label: () => "http",
  send: ({ url, headers, jar, proxy, signal }, { direct, settings }) => fetchPage({ url, headers: withJar(headers, jar), proxy, direct, signal }, settings),
};
