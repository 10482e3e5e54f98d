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

/**
 * How long the API takes to stop after SIGTERM, from its live deadline: requests in flight are
 * answered for up to `drainMs` (a live request may wait the whole deadline, plus a margin to settle
 * a timed-out job), the closers get until `deadlineMs`, and the process is gone at `exitAfterMs`
 * whatever Redis, PostgreSQL or the log's reader do. An orchestrator's grace period (compose's
 * stop_grace_period, a pod's terminationGracePeriodSeconds after its preStop) must outlast `exitAfterMs`.
 */
export function apiShutdownBounds(liveDeadlineMs: number): { drainMs: number; deadlineMs: number; exitAfterMs: number } {
  const drainMs = liveDeadlineMs + 5_000;
  return { drainMs, deadlineMs: drainMs + 5_000, exitAfterMs: drainMs + 10_000 };
}
