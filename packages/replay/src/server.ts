/**
 * The replay upstream: answers the upstream's own paths with captured pages, injects faults on request
 * and, in guard mode, refuses clients the way the upstream does. Workers reach it with
 * UPSTREAM_BASE_URL=http://127.0.0.1:<port> (https://… with `https`).
 */
import { stat } from "node:fs/promises";
import { gzipSync } from "node:zlib";
import { createServer } from "node:http";
import { createSecureServer } from "node:http2";
import type { AddressInfo, Server as NetServer, Socket } from "node:net";
import type { TLSSocket } from "node:tls";
import { trackClientHellos } from "read-tls-client-hello";
import { Catalog, contentTypeOf, statusOf } from "./catalog.js";
import { selfSignedCertificate } from "./certificate.js";
import { challengePage } from "./challenge.js";
import { control, CONTROL_PREFIX, readBody, RequestLog, type RecordedRequest, type RequestDetails } from "./control.js";
import { clientAddress, EXEMPTION_COOKIE, ExitModel, parseExits, type ExitConfig, type ExitStats } from "./exits.js";
import { delayOf, FaultState, parseFaults, type FaultMode, type Faults } from "./faults.js";
import { describeHello, type HelloDescription } from "./fingerprint.js";
import { Guard, needsFingerprint, parseGuard, type GuardConfig, type GuardPresetName, type GuardVerdict } from "./guard.js";
import { blockAnswer, enableJsPage, errorPage, noResultsPage, randomToken, sorryPage, unsupportedBrowserPage, type BlockAnswer, type SorryCaptcha } from "./pages.js";
import { abort, isGone, send, type ReplayRequest, type ReplayResponse } from "./respond.js";
import { Stats, type ReplayStats } from "./stats.js";
import { isReplayKind, REPLAY_KINDS, slugOf, targetOf, type ReplayKind, type Target } from "./target.js";

export interface ReplayRoute {
  /** Matches requests of this kind (any kind when unset). */
  kind?: ReplayKind;
  /** Matches this query (or product id), compared as slugs (any when unset). */
  q?: string;
  /** Relative to `dir`, or absolute. */
  file: string;
  /** Default: 200 (or the status in the file's name, e.g. `error-502-…`). */
  status?: number;
}

export interface ReplayOptions {
  /** Directory mode: the captured pages folder (web/, news/, … as in the fixtures MANIFEST). */
  dir?: string;
  /** Single-page mode: this one file answers every request. Relative to `dir`, or absolute. */
  page?: string;
  /** Checked before `page` and `dir`; first match wins. */
  routes?: ReplayRoute[];
  /** Per-kind default file for directory mode, when no file name matches the query. */
  defaults?: Partial<Record<ReplayKind, string>>;
  /**
   * Directory mode, when nothing was captured for a query: answer the first capture of the kind
   * anyway (another query's page) instead of "no results" / 404. Off by default; only for tests and
   * demos that want some page whatever the query.
   */
  fallback?: boolean;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
  /** Faults active from the start. */
  faults?: Faults;
  /** The request log keeps this many latest entries. Default 10000. */
  maxRecorded?: number;
  /**
   * Serve HTTPS (HTTP/2 and HTTP/1.1 via ALPN) with a self-signed certificate made at start. Forced on
   * when `guard` reads the TLS fingerprint (tls, uaConsistency, deadAgents.unlessBrowserTls).
   */
  https?: boolean;
  /** Guard mode from the start: a config or a preset name. Default: unguarded. */
  guard?: GuardConfig | GuardPresetName;
  /**
   * The exit model from the start (README "Exits"): each source address gets a country and a class, a
   * search budget per window, address-bound challenge cookies, /sorry/ pages with a one-time data-s and
   * the exemption cookie a solved token earns. Default: off (every client alike, as before).
   */
  exits?: ExitConfig;
}

export type { RecordedRequest, ReplayStats };

export interface ReplayServer {
  /** `http://host:port`, or `https://host:port` with `https`. */
  url: string;
  port: number;
  /** With `https`: the self-signed certificate (PEM), for clients to trust as their CA. */
  certPem?: string;
  close(): Promise<void>;
  setFaults(faults: Faults): void;
  clearFaults(): void;
  requests(): RecordedRequest[];
  clearRequests(): void;
  /** A config or a preset name; throws GuardError when invalid or when it needs https the server lacks. */
  setGuard(guard: GuardConfig | GuardPresetName): void;
  clearGuard(): void;
  guard(): GuardConfig;
  stats(): ReplayStats;
  resetStats(): void;
  /** Turns the exit model on (or replaces its config; counts and flags restart). Throws ExitsError when invalid. */
  setExits(exits: ExitConfig): void;
  /** Turns the exit model off. */
  clearExits(): void;
  exits(): ExitConfig | null;
  /** Per source address: country, class, searches, gl asked, flags, /sorry/ pages, exemptions, foreign cookies. */
  exitStats(): ExitStats;
  /** Forgets the per-address counts and flags. */
  resetExitStats(): void;
}

const TRUNCATE_SHARE = 0.3;

/**
 * Kinds whose miss (nothing captured for the query) is the upstream's "did not match any documents"
 * page. Product pages, the product panel and suggestions answer 404 instead: an unknown product
 * does not exist, and an invented suggestion list would be data nobody captured.
 */
const NO_RESULTS_KINDS: ReadonlySet<ReplayKind> = new Set(["web", "news", "images", "videos", "local", "shopping"]);

/** What `x-replay-file` says for the generated "no results" page. */
export const NO_RESULTS_NAME = "(none: no results)";

interface Page {
  body: Buffer;
  status: number;
  contentType: string;
  /** Shown in `x-replay-file`. */
  name: string;
}

async function mustExist(file: string, what: string): Promise<void> {
  const info = await stat(file).catch(() => undefined);
  if (!info?.isFile()) throw new Error(`replay: ${what} ${file} is not a readable file`);
}

async function validate(options: ReplayOptions, catalog: Catalog): Promise<void> {
  if (!options.dir && !options.page) throw new Error("replay: give `dir` (directory mode) or `page` (single-page mode)");
  if (options.dir) {
    const info = await stat(options.dir).catch(() => undefined);
    if (!info?.isDirectory()) throw new Error(`replay: dir ${options.dir} is not a directory`);
  }
  if (options.page) await mustExist(catalog.resolveFile(options.page), "page");
  for (const route of options.routes ?? []) {
    if (route.kind !== undefined && !isReplayKind(route.kind)) throw new Error(`replay: route kind ${String(route.kind)} is not one of ${REPLAY_KINDS.join(", ")}`);
    if (route.status !== undefined && !(Number.isInteger(route.status) && route.status >= 200 && route.status <= 599)) {
      throw new Error(`replay: route status ${String(route.status)} is not an HTTP status`);
    }
    if (typeof route.file !== "string") throw new Error("replay: every route needs a file");
    await mustExist(catalog.resolveFile(route.file), "route file");
  }
  for (const file of Object.values(options.defaults ?? {})) await mustExist(catalog.resolveFile(file), "default file");
  if (options.faults) parseFaults(options.faults);
  if (options.exits) parseExits(options.exits);
}

/** The ClientHello of a request's connection, described; undefined over plain HTTP. */
function helloOf(req: ReplayRequest): HelloDescription | undefined {
  const hello = (req.socket as TLSSocket).tlsClientHello;
  return hello && describeHello(hello);
}

function routeMatches(route: ReplayRoute, target: Target): boolean {
  return (route.kind === undefined || route.kind === target.kind) && (route.q === undefined || slugOf(route.q) === slugOf(target.key));
}

/** Each captured page compressed once (pages are read once and kept by the catalog). */
const GZIPPED = new WeakMap<Buffer, Buffer>();
function gzipped(body: Buffer): Buffer {
  let zipped = GZIPPED.get(body);
  if (!zipped) GZIPPED.set(body, (zipped = gzipSync(body)));
  return zipped;
}

export async function startReplayServer(options: ReplayOptions): Promise<ReplayServer> {
  const catalog = new Catalog({ dir: options.dir, defaults: options.defaults, fallback: options.fallback });
  await validate(options, catalog);
  const initialGuard = options.guard === undefined ? {} : parseGuard(options.guard);
  const https = options.https === true || needsFingerprint(initialGuard);

  const faults = new FaultState();
  if (options.faults) faults.set(parseFaults(options.faults));
  const log = new RequestLog(options.maxRecorded ?? 10_000);
  const guard = new Guard(https);
  guard.set(initialGuard);
  const stats = new Stats();
  const exits = new ExitModel();
  if (options.exits) exits.set(options.exits);
  const timers = new Set<NodeJS.Timeout>();
  let closing: Promise<void> | undefined;
  let baseUrl = "";

  const sleep = (ms: number) =>
    new Promise<void>((done) => {
      const timer = setTimeout(() => {
        timers.delete(timer);
        done();
      }, ms);
      timers.add(timer);
    });

  async function load(file: string, status?: number): Promise<Page> {
    const absolute = catalog.resolveFile(file);
    return {
      body: await catalog.read(absolute),
      status: status ?? statusOf(absolute),
      contentType: contentTypeOf(absolute),
      name: catalog.displayName(absolute),
    };
  }

  /** Route table, then single page, then the directory; undefined means the upstream's 404. */
  async function pageFor(target: Target | undefined): Promise<Page | undefined> {
    const route = target && options.routes?.find((r) => routeMatches(r, target));
    if (route) return load(route.file, route.status);
    if (options.page) return load(options.page);
    const chosen = target && (await catalog.choose(target));
    if (chosen) return load(chosen);
    // Nothing captured for this query: say so, as the upstream would, never with another query's page.
    if (target && NO_RESULTS_KINDS.has(target.kind)) {
      return { body: Buffer.from(noResultsPage(target.key)), status: 200, contentType: "text/html; charset=UTF-8", name: NO_RESULTS_NAME };
    }
    return undefined;
  }

  function originOf(req: ReplayRequest): string {
    // HTTP/2 carries the host in :authority.
    const host = req.headers.host ?? req.headers[":authority"];
    return typeof host === "string" && /^[A-Za-z0-9.:[\]-]+$/.test(host) ? `${https ? "https" : "http"}://${host}` : baseUrl;
  }

  /** What the upstream answers instead of the page when the guard stops a request. */
  function guardAnswer(req: ReplayRequest, url: URL, verdict: Exclude<GuardVerdict, { action: "pass" }>): BlockAnswer {
    switch (verdict.action) {
      case "tls":
      case "ua":
        return { status: 403, body: errorPage(403, url.pathname), headers: {} };
      case "dead-agent":
        return { status: 200, body: unsupportedBrowserPage(), headers: {} };
      case "rate":
      case "headless": {
        const origin = originOf(req);
        const mode = verdict.action === "rate" && verdict.answer === "429" ? "rate-limit" : "sorry-redirect";
        return blockAnswer(mode, new URL(`${url.pathname}${url.search}`, origin), origin);
      }
      case "challenge": {
        const { issued, ttlMs, headlessDetect } = verdict;
        return { status: 200, body: challengePage(url.searchParams.get("q") ?? "", randomToken(), issued, ttlMs, headlessDetect), headers: {} };
      }
    }
  }

  /** With the exit model on: a /sorry/ widget with a fresh data-s issued to the request's address. */
  function captchaFor(req: ReplayRequest, q: string | undefined): SorryCaptcha | undefined {
    if (!exits.enabled) return undefined;
    const address = clientAddress(req.socket.remoteAddress);
    return { siteKey: exits.siteKey, dataS: exits.issueDataS(address), q: q ?? randomToken(), address };
  }

  /** The /sorry/index page: GET shows the CAPTCHA; with the exit model on, POST redeems a solved token. */
  async function sorry(req: ReplayRequest, res: ReplayResponse, url: URL): Promise<void> {
    let continueUrl = url.searchParams.get("continue") ?? "";
    let q = url.searchParams.get("q") ?? undefined;
    if (req.method === "POST" && exits.enabled) {
      const body = await readBody(req);
      if (body === undefined) return send(res, 413, errorPage(413, url.pathname), { connection: "close" });
      const form = new URLSearchParams(body);
      continueUrl = form.get("continue") ?? continueUrl;
      q = form.get("q") ?? q;
      const token = form.get("g-recaptcha-response") ?? "";
      const address = clientAddress(req.socket.remoteAddress);
      const value = token ? exits.redeem(address, token) : undefined;
      if (value !== undefined) {
        const cookie = `${EXEMPTION_COOKIE}=${value}; path=/; max-age=${Math.ceil(exits.exemptionTtlMs / 1000)}; HttpOnly`;
        // Only this server's own URLs are followed (an open redirect is no part of the model).
        const target = /^\/(?!\/)/.test(continueUrl) || continueUrl.startsWith(`${originOf(req)}/`) ? continueUrl : "/";
        return send(res, 302, "", { location: target, "set-cookie": cookie });
      }
    }
    return send(res, 429, sorryPage(continueUrl, captchaFor(req, q)));
  }

  /** Answers one upstream request under `mode`; `hang` leaves it unanswered until close(). */
  async function answer(req: ReplayRequest, res: ReplayResponse, url: URL, target: Target | undefined, mode: FaultMode | undefined, extraHeaders: Record<string, string> = {}) {
    const faultHeader: Record<string, string> = { ...extraHeaders, ...(mode ? { "x-replay-fault": mode } : {}) };
    if (mode === "hang") return;
    if (mode === "reset") return abort(req);
    if (mode && mode !== "truncate") {
      const origin = originOf(req);
      const captcha = mode === "captcha" ? captchaFor(req, url.searchParams.get("q") ?? undefined) : undefined;
      const block = blockAnswer(mode, new URL(`${url.pathname}${url.search}`, origin), origin, captcha);
      return send(res, block.status, block.body, { ...faultHeader, ...block.headers });
    }
    const page = await pageFor(target);
    if (!page) return send(res, 404, errorPage(404, url.pathname));
    const headers = { ...faultHeader, "content-type": page.contentType, "x-replay-file": page.name };
    if (mode !== "truncate") {
      // Compressed for a client that asks, as the upstream's pages are (what crosses a proxy is this size).
      if (!/\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""))) return send(res, page.status, page.body, headers);
      return send(res, page.status, gzipped(page.body), { ...headers, "content-encoding": "gzip", vary: "accept-encoding" });
    }
    // No content-length: the response ends cleanly, just short.
    if (isGone(res)) return;
    res.writeHead(page.status, headers);
    res.end(page.body.subarray(0, Math.floor(page.body.length * TRUNCATE_SHARE)));
  }

  async function handle(req: ReplayRequest, res: ReplayResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://replay.invalid");
    } catch {
      return send(res, 400, errorPage(400));
    }
    const path = url.pathname;
    if (path.startsWith(CONTROL_PREFIX)) return control(req, res, path, { faults, log, guard, stats, exits });

    const userAgent = req.headers["user-agent"];
    const hello = https ? helloOf(req) : undefined;
    const address = exits.enabled ? clientAddress(req.socket.remoteAddress) : undefined;
    const exit = address === undefined ? undefined : exits.profileOf(address);
    const client: RequestDetails = {
      ...(https ? { httpVersion: req.httpVersion, ja4: hello?.ja4, tls: hello?.family } : {}),
      ...(address === undefined ? {} : { address, exitCountry: exit?.country, exitClass: exit?.class }),
    };
    // The pages the block redirects point at are never guarded.
    const unguarded = path === "/sorry/index" || path === "/httpservice/retry/enablejs";
    const cookie = req.headers.cookie;
    const target = unguarded ? undefined : targetOf(path, url.searchParams, userAgent);
    // A flagged address gets /sorry/ for every search, before anything else looks at the request.
    if (address !== undefined && target && exits.flagged(address, cookie)) {
      stats.request(undefined);
      log.add(req, url, { ...client, kind: target.kind, exit: "sorry" });
      return sendSorryRedirect(req, res, url);
    }
    const verdict = unguarded ? undefined : guard.check({ path, userAgent, tls: hello, remoteAddress: req.socket.remoteAddress, cookie, bindTo: address });
    stats.request(verdict);
    if (address !== undefined && verdict?.action === "challenge" && verdict.foreignCookie) exits.foreignCookie(address);
    if (path === "/sorry/index") {
      log.add(req, url, client);
      return sorry(req, res, url);
    }
    if (path === "/httpservice/retry/enablejs") {
      log.add(req, url, client);
      return send(res, 200, enableJsPage("", url.searchParams.get("sei") ?? ""));
    }

    if (verdict && verdict.action !== "pass") {
      log.add(req, url, { ...client, kind: target?.kind, guard: verdict.action });
      const stop = guardAnswer(req, url, verdict);
      return send(res, stop.status, stop.body, { "x-replay-guard": verdict.action, ...stop.headers });
    }
    if (!target && !options.page) {
      log.add(req, url, client);
      return send(res, 404, errorPage(404, path));
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      log.add(req, url, { ...client, kind: target?.kind });
      return send(res, 405, errorPage(405, path), { allow: "GET, HEAD" });
    }
    let exitHeaders: Record<string, string> = {};
    if (address !== undefined && target) {
      // The model cannot serve another country's capture: it records which address (country) asked for
      // which gl, says so in x-replay-exit-country, and counts the search against the budget.
      const counted = exits.search(address, url.searchParams.get("gl") ?? undefined, cookie);
      if (counted.action === "sorry") {
        log.add(req, url, { ...client, kind: target.kind, exit: "sorry" });
        return sendSorryRedirect(req, res, url);
      }
      exitHeaders = { "x-replay-exit-country": counted.profile.country, "x-replay-exit-class": counted.profile.class };
    }
    const active = target ? faults.take(target.kind) : undefined;
    log.add(req, url, { ...client, kind: target?.kind, fault: active?.mode });
    const delay = delayOf(active);
    if (delay > 0) await sleep(delay);
    if (isGone(res)) return;
    await answer(req, res, url, target, active?.mode, exitHeaders);
  }

  /** The upstream's answer to a flagged address: 302 to /sorry/index?continue=…&q=…. */
  function sendSorryRedirect(req: ReplayRequest, res: ReplayResponse, url: URL): void {
    const origin = originOf(req);
    const block = blockAnswer("sorry-redirect", new URL(`${url.pathname}${url.search}`, origin), origin);
    send(res, block.status, block.body, { "x-replay-exit": "sorry", ...block.headers });
  }

  const listener = (req: ReplayRequest, res: ReplayResponse) => {
    handle(req, res).catch((error: unknown) => {
      if (closing) return;
      process.emitWarning(`replay: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) send(res, 500, errorPage(500));
      else res.destroy();
    });
  };
  const certificate = https ? await selfSignedCertificate() : undefined;
  // HTTP/2 as well: impersonating clients offer h2 in ALPN the way browsers do.
  const server: NetServer = certificate ? createSecureServer({ allowHTTP1: true, ...certificate }, listener) : createServer(listener);
  if (certificate) {
    trackClientHellos(server as ReturnType<typeof createSecureServer>);
    server.on("secureConnection", () => stats.handshake());
  }
  server.on("clientError", (_error: Error, socket: Socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n");
    else socket.destroy();
  });
  // Every connection, so that close() ends idle keep-alive ones, HTTP/2 sessions and hanging requests.
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });

  const host = options.host ?? "127.0.0.1";
  await new Promise<void>((ready, fail) => {
    server.once("error", fail);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", fail);
      ready();
    });
  });
  const port = (server.address() as AddressInfo).port;
  baseUrl = `${https ? "https" : "http"}://${host.includes(":") ? `[${host}]` : host}:${port}`;

  return {
    url: baseUrl,
    port,
    ...(certificate ? { certPem: certificate.cert } : {}),
    close: () => {
      closing ??= new Promise<void>((done, fail) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close((error) => (error ? fail(error) : done()));
        for (const socket of sockets) socket.destroy();
      });
      return closing;
    },
    setFaults: (next) => faults.set(parseFaults(next)),
    clearFaults: () => faults.clear(),
    requests: () => log.list(),
    clearRequests: () => log.clear(),
    setGuard: (next) => guard.set(next),
    clearGuard: () => guard.clear(),
    guard: () => guard.current(),
    stats: () => stats.current(),
    resetStats: () => stats.reset(),
    setExits: (next) => exits.set(next),
    clearExits: () => exits.clear(),
    exits: () => exits.current(),
    exitStats: () => exits.stats(),
    resetExitStats: () => exits.reset(),
  };
}
