import { Router, json } from "express";
import { ApiError } from "@serp/shared";
import type { AppContext } from "../context.js";
import { submitter } from "../limits/index.js";

export function jobRoutes(ctx: AppContext): Router {
  const router = Router();
  // Any valid JSON is parsed; the schema then says what is wrong with a non-object.
  const parseJson = json({ limit: ctx.env.BODY_LIMIT, strict: false, type: () => true });

  router.post(
    "/v1/jobs",
    ctx.rateLimit,
    (req, _res, next) => {
      if (!req.is("application/json")) {
        throw new ApiError("unsupported_media_type", "Send the job as JSON with 'Content-Type: application/json'");
      }
      next();
    },
    parseJson,
    async (req, res) => {
      const outcome = await ctx.jobService.submit(submitter(req, res), req.body);
      res.status(outcome.status).json(outcome.body);
    },
  );

  router.get("/v1/jobs/:jobId", async (req, res) => {
    res.json(await ctx.jobService.get(req.accountId!, req.params.jobId));
  });

  return router;
}
