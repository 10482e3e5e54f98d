import { randomUUID } from "node:crypto";
import type { Express, RequestHandler } from "express";
import type { Logger } from "pino";
import type { Metrics } from "@serp/metrics";

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The request's id: the caller's X-Request-Id when well formed, else a new UUID. */
      id: string;
      /** A logger bound to the request's id, made the first time something logs. */
      log: Logger;
    }
  }
}

const REQUEST_ID = /^[\w.-]{1,64}$/;
const ownLog = Symbol("requestLog");

/**
 * One line per request, with its id, method, path and status (never headers or the query string:
 * they carry `Authorization: Bearer sk_live_…` and the compatibility endpoint's `api_key`), and the
 * HTTP metrics. Server errors log at error, client errors at info, the rest at debug.
 *
 * In place of pino-http, which builds two child loggers and serializes the request for every
 * request whatever the level: 19 µs of the API's ~140 µs of CPU per submission (bench/submissions.ts).
 * Here `req.log` is made only when something logs, and a line only when its level is on.
 */
export function requestTelemetry(app: Express, logger: Logger, metrics: Metrics): RequestHandler {
  Object.defineProperty(app.request, "log", {
    configurable: true,
    get(this: Express.Request & { [ownLog]?: Logger }): Logger {
      return (this[ownLog] ??= logger.child({ reqId: this.id }));
    },
  });

  return (req, res, next) => {
    const incoming = req.headers["x-request-id"];
    req.id = typeof incoming === "string" && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader("X-Request-Id", req.id);
    const started = performance.now();
    res.once("close", () => {
      const ms = performance.now() - started;
      const route = req.route?.path ? String(req.baseUrl + req.route.path) : "unmatched";
      const finished = res.writableFinished;
      if (finished) {
        metrics.httpDuration.observe({ route, method: req.method }, ms / 1000);
        metrics.httpRequests.inc({ route, method: req.method, status: String(res.statusCode) });
      }
      const level = !finished ? "info" : res.statusCode >= 500 ? "error" : res.statusCode >= 400 ? "info" : "debug";
      if (!logger.isLevelEnabled(level)) return;
      logger[level](
        {
          req: { id: req.id, method: req.method, path: req.originalUrl.split("?")[0] },
          res: { statusCode: res.statusCode },
          responseTime: Math.round(ms),
        },
        finished ? "request completed" : "request aborted",
      );
    });
    next();
  };
}
