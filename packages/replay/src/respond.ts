import type { ServerResponse } from "node:http";

export const HTML = "text/html; charset=UTF-8";

/** Writes a whole response unless the client is already gone. */
export function send(res: ServerResponse, status: number, body: string | Buffer, headers: Record<string, string> = {}): void {
  if (res.destroyed || res.writableEnded) return;
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  res.writeHead(status, { "content-type": HTML, "content-length": String(bytes.length), ...headers });
  res.end(bytes);
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  send(res, status, JSON.stringify(value), { "content-type": "application/json; charset=UTF-8" });
}
