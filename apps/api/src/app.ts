import express, { type Express } from "express";
import { authenticate } from "./auth.js";
import type { AppContext } from "./context.js";
import { errorHandler, notFound } from "./errors.js";
import { buildOpenApiDocument } from "./openapi/document.js";
import { requestTelemetry } from "./ops/request-telemetry.js";
import { accountRoutes } from "./routes/account.js";
import { compatRoutes } from "./routes/compat.js";
import { docsRoutes } from "./routes/docs.js";
import { jobRoutes } from "./routes/jobs.js";
import { mcpRoutes } from "./routes/mcp.js";
import { metricsRoutes, opsRoutes } from "./routes/ops.js";
import { webhookRoutes } from "./routes/webhooks.js";

/** Builds the Express app; never listens (index.ts does), so tests drive it directly. */
export function createApp(ctx: AppContext): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", false);
  // JSON answers to API calls: no ETag (each would cost a hash of the body, and nothing revalidates).
  app.set("etag", false);
  app.use(requestTelemetry(app, ctx.logger, ctx.metrics));

  // The REST API first, where nearly all traffic goes: every router a request passes on its way
  // costs a match per route (about 3% of a submission's CPU, bench/submissions.ts).
  app.use("/v1", authenticate(ctx.accounts));
  app.use(jobRoutes(ctx));
  app.use(accountRoutes(ctx));
  app.use(webhookRoutes(ctx));

  // Unauthenticated or self-authenticating surfaces.
  app.use(opsRoutes(ctx));
  app.use(docsRoutes(buildOpenApiDocument(ctx.env.PUBLIC_BASE_URL)));
  app.use(compatRoutes(ctx));
  app.use(mcpRoutes(ctx));

  app.use(notFound);
  app.use(errorHandler);
  return app;
}

/** The app of METRICS_PORT: GET /metrics alone (behind METRICS_TOKEN when set), so the API's port need not expose it. */
export function createMetricsApp(ctx: AppContext, token: string | undefined): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.use(metricsRoutes(ctx, token));
  app.use(notFound);
  app.use(errorHandler);
  return app;
}
