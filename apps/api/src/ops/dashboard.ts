import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import type { Queue } from "bullmq";
import { Router, type RequestHandler } from "express";
import { ApiError, presentsToken } from "@serp/shared";

export const DASHBOARD_PATH = "/admin/queues";

/**
 * The operators' queue dashboard (bull-board), behind the admin token. Without a token it is not
 * mounted at all, so the path answers 404 like any unknown route.
 *
 * Read-only on purpose: the service owns each job's record and credit reservation, so removing or
 * emptying a BullMQ job from the dashboard would strand its reservation, and retrying a final job is
 * a no-op anyway. Operators look here; they act through the CLI.
 */
export function dashboardRouter(queues: readonly Queue[], adminToken: string | undefined): Router | undefined {
  if (!adminToken) return undefined;
  const serverAdapter = new ExpressAdapter().setBasePath(DASHBOARD_PATH);
  createBullBoard({
    queues: queues.map((q) => new BullMQAdapter(q, { readOnlyMode: true })),
    serverAdapter,
    options: { uiConfig: { boardTitle: "SERP queues" } },
  });
  const router = Router();
  router.use(requireAdmin(adminToken), serverAdapter.getRouter() as RequestHandler);
  return router;
}

/** Accepts `Authorization: Bearer <token>` (scripts) or HTTP basic auth with the token as password (browsers). */
export function requireAdmin(adminToken: string): RequestHandler {
  return requireToken(adminToken, "serp admin", "The admin dashboard needs the admin token (Bearer, or basic auth password)");
}

/** A route closed by a token (constant-time comparison): 401 with a basic-auth challenge without it. */
export function requireToken(token: string, realm: string, message: string): RequestHandler {
  return (req, res, next) => {
    if (presentsToken(req.headers.authorization, token)) return next();
    res.setHeader("WWW-Authenticate", `Basic realm="${realm}", charset="UTF-8"`);
    next(new ApiError("unauthorized", message));
  };
}
