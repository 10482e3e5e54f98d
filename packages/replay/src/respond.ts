/** Writing answers over HTTP/1.1 (plain or TLS) and HTTP/2 (the compat API) alike. */
import type { IncomingMessage, ServerResponse } from "node:http";
import { constants, type Http2ServerRequest, type Http2ServerResponse } from "node:http2";
import type { Socket } from "node:net";

export const HTML = "text/html; charset=UTF-8";

export type ReplayRequest = IncomingMessage | Http2ServerRequest;
export type ReplayResponse = ServerResponse | Http2ServerResponse;

/** True once the client is gone or the answer is complete. */
export function isGone(res: ReplayResponse): boolean {
  const destroyed = "stream" in res ? res.stream.destroyed : res.destroyed;
  return destroyed || res.writableEnded;
}

/** Writes a whole response unless the client is already gone. */
export function send(res: ReplayResponse, status: number, body: string | Buffer, headers: Record<string, string> = {}): void {
  if (isGone(res)) return;
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  res.writeHead(status, { "content-type": HTML, "content-length": String(bytes.length), ...headers });
  res.end(bytes);
}

export function sendJson(res: ReplayResponse, status: number, value: unknown): void {
  send(res, status, JSON.stringify(value), { "content-type": "application/json; charset=UTF-8" });
}

/**
 * Ends a request abruptly: a TCP RST over plain HTTP/1.1; over TLS (which cannot send a bare RST from
 * Node) the connection is destroyed; over HTTP/2 only this stream is reset (RST_STREAM INTERNAL_ERROR).
 */
export function abort(req: ReplayRequest): void {
  if ("stream" in req) return void req.stream.close(constants.NGHTTP2_INTERNAL_ERROR);
  const socket = req.socket as Socket & { encrypted?: boolean };
  if (socket.encrypted) socket.destroy();
  else socket.resetAndDestroy();
}
