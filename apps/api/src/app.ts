import { randomUUID } from "node:crypto";
import express, { type Express } from "express";
import type { Logger } from "pino";
import { pinoHttp } from "pino-http";
import type { AccountStore } from "@serp/store";
import { authenticate } from "./auth.js";
import { errorHandler, notFound } from "./errors.js";
import { jobRoutes } from "./jobs/routes.js";
import type { JobService } from "./jobs/service.js";

export interface AppDeps {
  accounts: AccountStore;
  jobService: JobService;
  logger: Logger;
  bodyLimit: string;
}

/** Builds the Express app; never listens (index.ts does), so tests drive it directly. */
export function createApp(deps: AppDeps): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", false);
  app.use(
    pinoHttp({
      logger: deps.logger,
      genReqId: (req, res) => {
        const incoming = req.headers["x-request-id"];
        const id = typeof incoming === "string" && /^[\w.-]{1,64}$/.test(incoming) ? incoming : randomUUID();
        res.setHeader("X-Request-Id", id);
        return id;
      },
      customLogLevel: (_req, res, err) => (err || res.statusCode >= 500 ? "error" : res.statusCode >= 400 ? "info" : "debug"),
    }),
  );

  app.use("/v1", authenticate(deps.accounts));
  app.use(jobRoutes(deps.jobService, deps.bodyLimit));

  app.use(notFound);
  app.use(errorHandler);
  return app;
}
