import express, { type Express } from "express";
import { accountRoutes } from "./account/routes.js";
import { authenticate } from "./auth.js";
import { compatRoutes } from "./compat/routes.js";
import type { AppContext } from "./context.js";
import { errorHandler, notFound } from "./errors.js";
import { jobRoutes } from "./jobs/routes.js";
import { mcpRoutes } from "./mcp/routes.js";
import { docsRoutes } from "./openapi/routes.js";
import { requestTelemetry } from "./ops/request-telemetry.js";
import { opsRoutes } from "./ops/routes.js";
import { webhookRoutes } from "./webhooks/routes.js";

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
  app.use(docsRoutes(ctx));
  app.use(compatRoutes(ctx));
  app.use("/mcp", mcpRoutes(ctx));

  app.use(notFound);
  app.use(errorHandler);
  return app;
}
