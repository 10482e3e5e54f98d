/** The request log and the /__replay/* control endpoints (never faulted, never logged). */
import type { IncomingMessage, ServerResponse } from "node:http";
import { FaultsError, parseFaults, type FaultMode, type FaultState } from "./faults.js";
import { sendJson } from "./respond.js";
import type { ReplayKind } from "./target.js";

export const CONTROL_PREFIX = "/__replay/";
const MAX_CONTROL_BODY = 64 * 1024;

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  userAgent?: string;
  /** ISO time the request arrived. */
  at: string;
  /** The same instant in epoch milliseconds, to the microsecond (for timing a path through the service). */
  atMs: number;
  /** Unset for paths the upstream has no page for, and for the /sorry/ and enablejs pages. */
  kind?: ReplayKind;
  fault?: FaultMode;
}

/** The latest `max` upstream requests, oldest first. */
export class RequestLog {
  private entries: RecordedRequest[] = [];

  constructor(private readonly max: number) {}

  add(req: IncomingMessage, url: URL, kind: ReplayKind | undefined, fault: FaultMode | undefined): void {
    const entry: RecordedRequest = {
      method: req.method ?? "GET",
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      at: "",
      atMs: performance.timeOrigin + performance.now(),
    };
    entry.at = new Date(entry.atMs).toISOString();
    const userAgent = req.headers["user-agent"];
    if (userAgent !== undefined) entry.userAgent = userAgent;
    if (kind) entry.kind = kind;
    if (fault) entry.fault = fault;
    this.entries.push(entry);
    if (this.entries.length > this.max) this.entries.splice(0, this.entries.length - this.max);
  }

  list(): RecordedRequest[] {
    return this.entries.map((e) => ({ ...e, query: { ...e.query } }));
  }

  clear(): void {
    this.entries = [];
  }
}

async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_CONTROL_BODY) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

async function setFaults(req: IncomingMessage, res: ServerResponse, faults: FaultState): Promise<void> {
  const text = await readBody(req);
  if (text === undefined) {
    sendJson(res, 413, { error: `body over ${MAX_CONTROL_BODY} bytes` });
    res.once("finish", () => req.destroy());
    return;
  }
  try {
    faults.set(parseFaults(JSON.parse(text)));
  } catch (error) {
    return sendJson(res, 400, { error: error instanceof FaultsError ? error.message : "body must be JSON" });
  }
  sendJson(res, 200, faults.current());
}

export async function control(req: IncomingMessage, res: ServerResponse, path: string, faults: FaultState, log: RequestLog): Promise<void> {
  const route = `${req.method} ${path}`;
  switch (route) {
    case "GET /__replay/faults":
      return sendJson(res, 200, faults.current());
    case "POST /__replay/faults":
      return setFaults(req, res, faults);
    case "DELETE /__replay/faults":
      faults.clear();
      return sendJson(res, 200, faults.current());
    case "GET /__replay/requests":
      return sendJson(res, 200, log.list());
    case "DELETE /__replay/requests":
      log.clear();
      return sendJson(res, 200, []);
    default:
      return sendJson(res, 404, { error: `no control endpoint ${route}` });
  }
}
