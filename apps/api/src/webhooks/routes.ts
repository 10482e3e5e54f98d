import { Router } from "express";
import { ApiError } from "@serp/shared";
import { WebhookStore } from "@serp/store";
import type { AppContext } from "../context.js";
import type { DeliveriesResponse } from "./schemas.js";

/**
 * The account's webhook signing secret, and each job's delivery attempts (owner only). Mounted
 * after the /v1 Bearer authentication.
 */
export function webhookRoutes(ctx: AppContext): Router {
  const router = Router();
  const webhooks = new WebhookStore(ctx.redis, ctx.keys, ctx.env.JOB_RETENTION_SECONDS);

  /** The secret deliveries are signed with (`whsec_…`, Standard Webhooks), made on first use. */
  router.get("/v1/webhooks/secret", async (req, res) => {
    res.set("Cache-Control", "no-store").json({ secret: await webhooks.secret(req.accountId!) });
  });

  /** A new secret; deliveries from now on are signed with it only. */
  router.post("/v1/webhooks/secret/rotate", async (req, res) => {
    const secret = await webhooks.rotateSecret(req.accountId!);
    req.log?.info({ accountId: req.accountId }, "webhook secret rotated");
    res.set("Cache-Control", "no-store").json({ secret });
  });

  router.get("/v1/jobs/:jobId/deliveries", async (req, res) => {
    const id = req.params.jobId;
    const record = /^job_[0-9A-Z]{26}$/.test(id) ? await ctx.jobs.get(id) : null;
    // Another account's job is as unknown as an expired one: 404, never 403.
    if (!record || record.accountId !== req.accountId) throw new ApiError("not_found", `No job ${id}`);
    const log = await webhooks.log(id);
    const url = record.job.postbackUrl ?? null;
    // Before the job is final no delivery exists yet; without a postbackUrl (or on live) none ever will.
    const expected = url !== null && record.job.queue !== "live";
    const body: DeliveriesResponse = {
      jobId: id,
      url,
      state: log?.state ?? (expected ? "pending" : "none"),
      nextAttemptAt: log?.nextAttemptAt ?? null,
      attempts: log?.attempts ?? [],
    };
    res.json(body);
  });

  return router;
}
