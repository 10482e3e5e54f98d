import { Router } from "express";
import { ApiError } from "@serp/shared";
import type { AppContext } from "../context.js";
import { UpstreamStatusBoard } from "@serp/store";
import { DASHBOARD_PATH, dashboardRouter, requireAdmin } from "./dashboard.js";
import { refreshQueueDepths } from "./queue-depth.js";
import { READY_RETRY_AFTER_S, isDraining, redisAnswers } from "./readiness.js";
import { loadOpsSettings } from "./settings.js";

/**
 * Operations surface, mounted before authentication:
 * - GET /healthz: the process is alive (no dependency is checked, so a Redis outage never restarts it);
 * - GET /readyz: Redis answers and the process is not shutting down; else 503 `unavailable` + Retry-After;
 * - GET /metrics: Prometheus text, with queue depths read from BullMQ at scrape time;
 * - /admin/queues: the queue dashboard, only when ADMIN_TOKEN is set;
 * - GET /admin/upstream: what each running worker publishes about its upstream profiles (table
 *   version, every breaker's state, rest, last outcome and success rate, the last canary), behind
 *   the same token.
 */
export function opsRoutes(ctx: AppContext): Router {
  const settings = loadOpsSettings();
  const router = Router();
  router.use(["/healthz", "/readyz", "/metrics"], (_req, res, next) => {
    res.setHeader("Cache-Control", "no-store");
    next();
  });

  router.get("/healthz", (_req, res) => {
    res.json({ status: "ok" });
  });

  router.get("/readyz", async (_req, res) => {
    if (isDraining(ctx)) throw new ApiError("unavailable", "The API is shutting down", undefined, READY_RETRY_AFTER_S);
    if (!(await redisAnswers(ctx.redis))) throw new ApiError("unavailable", "Storage is unreachable", undefined, READY_RETRY_AFTER_S);
    res.json({ status: "ready" });
  });

  router.get("/metrics", async (_req, res) => {
    await refreshQueueDepths(ctx);
    const body = await ctx.metrics.registry.metrics();
    res.setHeader("Content-Type", ctx.metrics.registry.contentType);
    res.send(body);
  });

  const dashboard = dashboardRouter(Object.values(ctx.queues), settings.ADMIN_TOKEN);
  if (dashboard) router.use(DASHBOARD_PATH, dashboard);
  if (settings.ADMIN_TOKEN) {
    const board = new UpstreamStatusBoard(ctx.redis, ctx.keys);
    router.get("/admin/upstream", requireAdmin(settings.ADMIN_TOKEN), async (_req, res) => {
      res.setHeader("Cache-Control", "no-store");
      res.json({ workers: await board.list() });
    });
  }
  return router;
}
