/**
 * The replay upstream: answers the upstream's own paths with captured pages, and injects faults on
 * request. Workers reach it with UPSTREAM_BASE_URL=http://127.0.0.1:<port>.
 */
import { stat } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Catalog, contentTypeOf, statusOf } from "./catalog.js";
import { control, CONTROL_PREFIX, RequestLog, type RecordedRequest } from "./control.js";
import { delayOf, FaultState, parseFaults, type FaultMode, type Faults } from "./faults.js";
import { blockAnswer, enableJsPage, errorPage, sorryPage } from "./pages.js";
import { send } from "./respond.js";
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
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: any free port. */
  port?: number;
  /** Faults active from the start. */
  faults?: Faults;
  /** The request log keeps this many latest entries. Default 10000. */
  maxRecorded?: number;
}

export type { RecordedRequest };

export interface ReplayServer {
  url: string;
  port: number;
  close(): Promise<void>;
  setFaults(faults: Faults): void;
  clearFaults(): void;
  requests(): RecordedRequest[];
  clearRequests(): void;
}

const TRUNCATE_SHARE = 0.3;

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
}

function routeMatches(route: ReplayRoute, target: Target): boolean {
  return (route.kind === undefined || route.kind === target.kind) && (route.q === undefined || slugOf(route.q) === slugOf(target.key));
}

export async function startReplayServer(options: ReplayOptions): Promise<ReplayServer> {
  const catalog = new Catalog({ dir: options.dir, defaults: options.defaults });
  await validate(options, catalog);

  const faults = new FaultState();
  if (options.faults) faults.set(parseFaults(options.faults));
  const log = new RequestLog(options.maxRecorded ?? 10_000);
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
    return chosen ? load(chosen) : undefined;
  }

  function originOf(req: IncomingMessage): string {
    const host = req.headers.host;
    return host && /^[A-Za-z0-9.:[\]-]+$/.test(host) ? `http://${host}` : baseUrl;
  }

  /** Answers one upstream request under `mode`; `hang` leaves it unanswered until close(). */
  async function answer(req: IncomingMessage, res: ServerResponse, url: URL, target: Target | undefined, mode: FaultMode | undefined) {
    const faultHeader: Record<string, string> = mode ? { "x-replay-fault": mode } : {};
    if (mode === "hang") return;
    if (mode === "reset") return void req.socket.resetAndDestroy();
    if (mode && mode !== "truncate") {
      const origin = originOf(req);
      const block = blockAnswer(mode, new URL(`${url.pathname}${url.search}`, origin), origin);
      return send(res, block.status, block.body, { ...faultHeader, ...block.headers });
    }
    const page = await pageFor(target);
    if (!page) return send(res, 404, errorPage(404, url.pathname));
    const headers = { ...faultHeader, "content-type": page.contentType, "x-replay-file": page.name };
    if (mode !== "truncate") return send(res, page.status, page.body, headers);
    // No content-length: the response ends cleanly, just short.
    if (res.destroyed) return;
    res.writeHead(page.status, headers);
    res.end(page.body.subarray(0, Math.floor(page.body.length * TRUNCATE_SHARE)));
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://replay.invalid");
    } catch {
      return send(res, 400, errorPage(400));
    }
    const path = url.pathname;
    if (path.startsWith(CONTROL_PREFIX)) return control(req, res, path, faults, log);

    const userAgent = req.headers["user-agent"];
    // The pages the block redirects point at.
    if (path === "/sorry/index") {
      log.add(req, url, undefined, undefined);
      return send(res, 429, sorryPage(url.searchParams.get("continue") ?? ""));
    }
    if (path === "/httpservice/retry/enablejs") {
      log.add(req, url, undefined, undefined);
      return send(res, 200, enableJsPage("", url.searchParams.get("sei") ?? ""));
    }

    const target = targetOf(path, url.searchParams, userAgent);
    if (!target && !options.page) {
      log.add(req, url, undefined, undefined);
      return send(res, 404, errorPage(404, path));
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      log.add(req, url, target?.kind, undefined);
      return send(res, 405, errorPage(405, path), { allow: "GET, HEAD" });
    }
    const active = target ? faults.take(target.kind) : undefined;
    log.add(req, url, target?.kind, active?.mode);
    const delay = delayOf(active);
    if (delay > 0) await sleep(delay);
    if (res.destroyed) return;
    await answer(req, res, url, target, active?.mode);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (closing) return;
      process.emitWarning(`replay: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) send(res, 500, errorPage(500));
      else res.destroy();
    });
  });
  server.on("clientError", (_error, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n");
    else socket.destroy();
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
  baseUrl = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;

  return {
    url: baseUrl,
    port,
    close: () => {
      closing ??= new Promise<void>((done, fail) => {
        for (const timer of timers) clearTimeout(timer);
        timers.clear();
        server.close((error) => (error ? fail(error) : done()));
        // Idle keep-alive sockets and hanging requests alike.
        server.closeAllConnections();
      });
      return closing;
    },
    setFaults: (next) => faults.set(parseFaults(next)),
    clearFaults: () => faults.clear(),
    requests: () => log.list(),
    clearRequests: () => log.clear(),
  };
}
