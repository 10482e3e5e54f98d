import type { Server, ServerResponse } from "node:http";

export interface DrainableServer {
  /**
   * Stops accepting connections and resolves once every request in flight has been answered.
   * Responses not yet started carry `Connection: close`, and keep-alive connections are closed as
   * soon as they are idle, so clients reconnect to another instance. Past `deadlineMs` the
   * connections still open are cut.
   */
  close(deadlineMs: number): Promise<void>;
}

/** Call once, before the server takes requests: it tracks the responses in flight. */
export function drainable(server: Server): DrainableServer {
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  server.prependListener("request", (_req, res) => {
    if (draining) res.shouldKeepAlive = false;
    inFlight.add(res);
    res.once("close", () => inFlight.delete(res));
  });
  return {
    close(deadlineMs) {
      draining = true;
      for (const res of inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
      return new Promise((resolve) => {
        const sweep = setInterval(() => server.closeIdleConnections(), 250);
        const cut = setTimeout(() => server.closeAllConnections(), deadlineMs);
        server.close(() => {
          clearInterval(sweep);
          clearTimeout(cut);
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}
