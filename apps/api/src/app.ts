import { randomUUID } from "node:crypto";
import express, { type Express } from "express";
import { pinoHttp } from "pino-http";
import { accountRoutes } from "./account/routes.js";
import { authenticate } from "./auth.js";
import { compatRoutes } from "./compat/routes.js";
import type { AppContext } from "./context.js";
import { errorHandler, notFound } from "./errors.js";
import { jobRoutes } from "./jobs/routes.js";
import { mcpRoutes } from "./mcp/routes.js";
import { docsRoutes } from "./openapi/routes.js";
import { opsRoutes } from "./ops/routes.js";
import { webhookRoutes } from "./webhooks/routes.js";

/** Builds the Express app; never listens (index.ts does), so tests drive it directly. */
export function createApp(ctx: AppContext): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", false);
  app.use(
    pinoHttp({
      logger: ctx.logger,
      genReqId: (req, res) => {
        const incoming = req.headers["x-request-id"];
        const id = typeof incoming === "string" && /^[\w.-]{1,64}$/.test(incoming) ? incoming : randomUUID();
        res.setHeader("X-Request-Id", id);
        return id;
      },
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? "error" : res.statusCode >= 400 ? "info" : "debug"),
      // Method and path only: headers carry `Authorization: Bearer sk_live_…` and the compatibility
      // endpoint's query string carries `api_key`, and neither belongs in logs.
      serializers: {
        req: (req: { id: unknown; method: string; url: string }) => ({ id: req.id, method: req.method, path: req.url.split("?")[0] }),
        res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
      },
    }),
  );
  app.use((req, res, next) => {
    const end = ctx.metrics.httpDuration.startTimer();
    res.on("finish", () => {
      const route = req.route?.path ? String(req.baseUrl + req.route.path) : "unmatched";
      end({ route, method: req.method });
      ctx.metrics.httpRequests.inc({ route, method: req.method, status: String(res.statusCode) });
    });
    next();
  });

  // Unauthenticated or self-authenticating surfaces first.
  app.use(opsRoutes(ctx));
  app.use(docsRoutes(ctx));
  app.use(compatRoutes(ctx));
  app.use("/mcp", mcpRoutes(ctx));

  app.use("/v1", authenticate(ctx.accounts));
  app.use(accountRoutes(ctx));
  app.use(webhookRoutes(ctx));
  app.use(jobRoutes(ctx));

  app.use(notFound);
  app.use(errorHandler);
  return app;
}
