import http from "node:http";
import https from "node:https";
import { TargetRefusedError, type TargetAgents } from "./agent.js";

/** What one POST to a receiver came to. */
export type SendResult =
  | { kind: "response"; statusCode: number; retryAfter: string | undefined; durationMs: number }
  | { kind: "error"; error: string; refused: boolean; durationMs: number };

/** Receivers answer with a status; their body is read (up to this much) only to free the socket. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * POSTs `body` once, through the guarded agents, never following redirects (plain node:http
 * does not). Settles on the response's status line; a receiver that has not answered within
 * `timeoutMs` of the start is cut off.
 */
export function send(url: URL, body: string, headers: Record<string, string>, agents: TargetAgents, timeoutMs: number): Promise<SendResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  return new Promise<SendResult>((resolve) => {
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const settle = (r: SendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const fail = (err: unknown) => {
      settle({ kind: "error", error: describe(err, url, timeoutMs), refused: isRefusal(err), durationMs: elapsed() });
    };
    if (url.protocol !== "http:" && url.protocol !== "https:") {
      settle({ kind: "error", error: "refused: only http and https URLs are delivered to", refused: true, durationMs: 0 });
      return;
    }
    const lib = url.protocol === "https:" ? https : http;
    const req = lib.request(url, {
      method: "POST",
      agent: url.protocol === "https:" ? agents.https : agents.http,
      headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
    });
    timer = setTimeout(() => req.destroy(new DeliveryTimeout()), timeoutMs);
    req.on("error", fail);
    req.on("response", (res) => {
      const retryAfter = res.headers["retry-after"];
      settle({ kind: "response", statusCode: res.statusCode ?? 0, retryAfter, durationMs: elapsed() });
      let read = 0;
      res.on("data", (chunk: Buffer) => {
        read += chunk.length;
        if (read > MAX_RESPONSE_BYTES) res.destroy();
      });
      res.on("error", () => undefined);
      // Whatever the receiver still sends, the socket is let go of after the timeout.
      const drop = setTimeout(() => res.destroy(), timeoutMs).unref();
      res.on("close", () => clearTimeout(drop));
    });
    req.end(body);
  });
}

class DeliveryTimeout extends Error {
  override readonly name = "DeliveryTimeout";
}

function isRefusal(err: unknown): boolean {
  return err instanceof TargetRefusedError || (err as { code?: string })?.code === TargetRefusedError.CODE;
}

/** An error as the attempt record shows it: short, and saying what to fix. */
function describe(err: unknown, url: URL, timeoutMs: number): string {
  if (isRefusal(err)) return (err as Error).message;
  if (err instanceof DeliveryTimeout) return `timed out after ${timeoutMs} ms without a response`;
  const e = err as NodeJS.ErrnoException;
  switch (e?.code) {
    case "ECONNREFUSED":
      return `connection refused by ${url.host}`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `DNS lookup failed for ${url.hostname}`;
    case "ECONNRESET":
      return "connection reset before a response";
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `${url.host} is unreachable`;
    default:
      return e?.code ? `${e.code}: ${e.message}` : String(e?.message ?? err);
  }
}
