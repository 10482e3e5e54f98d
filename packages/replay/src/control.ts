/** The request log and the /__replay/* control endpoints (never faulted, guarded or logged). */
import { FaultsError, parseFaults, type FaultMode, type FaultState } from "./faults.js";
import type { TlsFamily } from "./fingerprint.js";
import { GuardError, type Guard, type GuardAction } from "./guard.js";
import { sendJson, type ReplayRequest, type ReplayResponse } from "./respond.js";
import type { Stats } from "./stats.js";
import { ExitsError, type ExitClass, type ExitModel } from "./exits.js";
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
  /** What the guard answered instead of the page; unset when it let the request through. */
  guard?: GuardAction;
  /** Over https only: the protocol ("1.1" or "2.0"), the ClientHello's JA4 and its family. */
  httpVersion?: string;
  ja4?: string;
  tls?: TlsFamily;
  /** With the exit model on: the source address, and the country and class the model gives it. */
  address?: string;
  exitCountry?: string;
  exitClass?: ExitClass;
  /** With the exit model on: "sorry" when the address was flagged or went over its budget with this search. */
  exit?: "sorry";
}

export type RequestDetails = Pick<RecordedRequest, "kind" | "fault" | "guard" | "httpVersion" | "ja4" | "tls" | "address" | "exitCountry" | "exitClass" | "exit">;

/** The latest `max` upstream requests, oldest first. */
export class RequestLog {
  private entries: RecordedRequest[] = [];

  constructor(private readonly max: number) {}

  add(req: ReplayRequest, url: URL, details: RequestDetails = {}): void {
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
    for (const [key, value] of Object.entries(details)) if (value !== undefined) Object.assign(entry, { [key]: value });
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

/** The request body as text; undefined when it is over the control limit (64 KiB). */
export async function readBody(req: ReplayRequest): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_CONTROL_BODY) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** Reads a JSON body and hands it to `apply`; 400 with `{ error }` when it is not JSON or `apply` rejects it. */
async function update(req: ReplayRequest, res: ReplayResponse, apply: (input: unknown) => unknown): Promise<void> {
  const text = await readBody(req);
  if (text === undefined) {
    sendJson(res, 413, { error: `body over ${MAX_CONTROL_BODY} bytes` });
    res.once("finish", () => req.destroy());
    return;
  }
  let input: unknown;
  try {
    input = JSON.parse(text);
  } catch {
    return sendJson(res, 400, { error: "body must be JSON" });
  }
  try {
    sendJson(res, 200, apply(input));
  } catch (error) {
    if (!(error instanceof FaultsError || error instanceof GuardError || error instanceof ExitsError)) throw error;
    sendJson(res, 400, { error: error.message });
  }
}

export interface ControlState {
  faults: FaultState;
  log: RequestLog;
  guard: Guard;
  stats: Stats;
  exits: ExitModel;
}

export async function control(req: ReplayRequest, res: ReplayResponse, path: string, state: ControlState): Promise<void> {
  const { faults, log, guard, stats, exits } = state;
  const route = `${req.method} ${path}`;
  switch (route) {
    case "GET /__replay/faults":
      return sendJson(res, 200, faults.current());
    case "POST /__replay/faults":
      return update(req, res, (input) => {
        faults.set(parseFaults(input));
        return faults.current();
      });
    case "DELETE /__replay/faults":
      faults.clear();
      return sendJson(res, 200, faults.current());
    case "GET /__replay/requests":
      return sendJson(res, 200, log.list());
    case "DELETE /__replay/requests":
      log.clear();
      return sendJson(res, 200, []);
    case "GET /__replay/guard":
      return sendJson(res, 200, guard.current());
    case "POST /__replay/guard":
      return update(req, res, (input) => {
        guard.set(input);
        return guard.current();
      });
    case "DELETE /__replay/guard":
      guard.clear();
      return sendJson(res, 200, guard.current());
    case "GET /__replay/stats":
      return sendJson(res, 200, stats.current());
    case "DELETE /__replay/stats":
      stats.reset();
      return sendJson(res, 200, stats.current());
    case "GET /__replay/exits":
      return sendJson(res, 200, exits.current());
    case "POST /__replay/exits":
      return update(req, res, (input) => {
        exits.set(input);
        return exits.current();
      });
    case "DELETE /__replay/exits":
      exits.clear();
      return sendJson(res, 200, exits.current());
    case "GET /__replay/exits/stats":
      return sendJson(res, 200, exits.stats());
    case "DELETE /__replay/exits/stats":
      exits.reset();
      return sendJson(res, 200, exits.stats());
    default:
      return sendJson(res, 404, { error: `no control endpoint ${route}` });
  }
}
