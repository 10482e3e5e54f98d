/**
 * Operations surface, mounted before authentication:
 * - GET /healthz: the process is alive (no dependency is checked, so a Redis outage never restarts it);
 * - GET /readyz: Redis answers and the process is not shutting down; else 503 `unavailable` + Retry-After.
 *   PostgreSQL is not needed to be ready (only history reads need it): the body says whether
 *   history is available (`history`, with a `detail` when it is not);
 * - GET /metrics: Prometheus text, with queue depths read from BullMQ at scrape time; behind
 *   METRICS_TOKEN when it is set, and on a port of its own (METRICS_PORT, ops/metrics-server.ts) instead when that is;
 * - /admin/queues: the queue dashboard, only when ADMIN_TOKEN is set;
 * - GET /admin/upstream: what each running worker publishes about its upstream profiles (table
 *   version, every breaker's state, rest, last outcome and success rate, the last canary), behind
 *   the same token.
 * The /admin pages are internals, not part of the API, so they are not declared.
 */
import { Router } from "express";
import { z } from "zod";
import { ApiError } from "@serp/shared";
import { UpstreamStatusBoard } from "@serp/store";
import type { AppContext } from "../context.js";
import { H, json } from "../openapi/responses.js";
import * as s from "../openapi/schemas.js";
import { DASHBOARD_PATH, dashboardRouter, requireAdmin, requireToken } from "../ops/dashboard.js";
import { refreshQueueDepths } from "../ops/queue-depth.js";
import { READY_RETRY_AFTER_S, historyReadiness, isDraining, redisAnswers } from "../ops/readiness.js";
import { RouteTable } from "./define.js";

export const opsRouteTable = new RouteTable();

const status = z.object({ status: z.string() }).catchall(z.unknown());

const healthz = opsRouteTable.define({
  method: "get",
  path: "/healthz",
  operationId: "healthz",
  tags: ["Operations"],
  summary: "Liveness: the process answers",
  responses: { 200: json(status, "Alive") },
});

const readyz = opsRouteTable.define({
  method: "get",
  path: "/readyz",
  operationId: "readyz",
  tags: ["Operations"],
  summary: "Readiness: storage and queues are reachable",
  responses: {
    200: json(status, "Ready for submissions; `history` says whether history (archived jobs, usage) can be read"),
    503: json(s.errorBody, "`unavailable`: storage is unreachable or the API is shutting down", { "Retry-After": H.retryAfter }),
  },
});

const metrics = opsRouteTable.define({
  method: "get",
  path: "/metrics",
  operationId: "metrics",
  tags: ["Operations"],
  summary: "Prometheus metrics",
  responses: { 200: { description: "Prometheus text exposition format", content: { "text/plain": { schema: z.string() } } } },
});

export function opsRoutes(ctx: AppContext): Router {
  const settings = ctx.env;
  const router = Router();
  router.use(["/healthz", "/readyz"], (_req, res, next) => {
    res.setHeader("Cache-Control", "no-store");
    next();
  });

  healthz.mount(
    router,
    healthz.handle((_input, reply) => {
      reply(200, { status: "ok" });
    }),
  );

  readyz.mount(
    router,
    readyz.handle(async (_input, reply) => {
      if (isDraining(ctx)) throw new ApiError("unavailable", "The API is shutting down", undefined, READY_RETRY_AFTER_S);
      if (!(await redisAnswers(ctx.redis))) throw new ApiError("unavailable", "Storage is unreachable", undefined, READY_RETRY_AFTER_S);
      reply(200, { status: "ready", ...(await historyReadiness(ctx.pg)) });
    }),
  );

  if (settings.METRICS_PORT === undefined) router.use(metricsRoutes(ctx, settings.METRICS_TOKEN));

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

/** GET /metrics, closed by `token` (METRICS_TOKEN: Bearer, or basic auth password) when it is set: 401 without it. */
export function metricsRoutes(ctx: AppContext, token: string | undefined): Router {
  const router = Router();
  router.use("/metrics", (_req, res, next) => {
    res.setHeader("Cache-Control", "no-store");
    next();
  });
  if (token) router.use("/metrics", requireToken(token, "serp metrics", "Metrics need the metrics token (METRICS_TOKEN: Bearer, or basic auth password)"));
  metrics.mount(
    router,
    metrics.handle(async (_input, _reply, _req, res) => {
      await refreshQueueDepths(ctx);
      const body = await ctx.metrics.registry.metrics();
      res.setHeader("Content-Type", ctx.metrics.registry.contentType);
      res.send(body);
    }),
  );
  return router;
}
