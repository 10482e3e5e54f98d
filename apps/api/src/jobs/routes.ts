import { Router, json } from "express";
import { ApiError } from "@serp/shared";
import type { JobService } from "./service.js";

export function jobRoutes(service: JobService, bodyLimit: string): Router {
  const router = Router();
  const parseJson = json({ limit: bodyLimit, strict: false, type: () => true });

  router.post("/v1/jobs", (req, _res, next) => {
    if (!req.is("application/json")) {
      throw new ApiError("unsupported_media_type", "Send the job as JSON with 'Content-Type: application/json'");
    }
    next();
  }, parseJson, async (req, res) => {
    const outcome = await service.submit(req.accountId!, req.body);
    res.status(outcome.status).json(outcome.body);
  });

  router.get("/v1/jobs/:jobId", async (req, res) => {
    res.json(await service.get(req.accountId!, req.params.jobId));
  });

  return router;
}
