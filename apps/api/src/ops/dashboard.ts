import { createHash, timingSafeEqual } from "node:crypto";
import { createBullBoard } from "@bull-board/api";
import { BullMQAdapter } from "@bull-board/api/bullMQAdapter";
import { ExpressAdapter } from "@bull-board/express";
import type { Queue } from "bullmq";
import { Router, type RequestHandler } from "express";
import { ApiError } from "@serp/shared";

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
  const expected = digest(adminToken);
  return (req, res, next) => {
    const presented = presentedToken(req.headers.authorization);
    if (presented !== undefined && timingSafeEqual(digest(presented), expected)) return next();
    res.setHeader("WWW-Authenticate", 'Basic realm="serp admin", charset="UTF-8"');
    next(new ApiError("unauthorized", "The admin dashboard needs the admin token (Bearer, or basic auth password)"));
  };
}

function presentedToken(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const [scheme, value = ""] = header.trim().split(/\s+/, 2);
  if (/^bearer$/i.test(scheme ?? "")) return value;
  if (/^basic$/i.test(scheme ?? "")) {
    const decoded = Buffer.from(value, "base64").toString("utf8");
    const colon = decoded.indexOf(":");
    return colon >= 0 ? decoded.slice(colon + 1) : undefined;
  }
  return undefined;
}

/** Equal-length digests, so the comparison is constant-time whatever was presented. */
function digest(token: string): Buffer {
  return createHash("sha256").update(token).digest();
}
