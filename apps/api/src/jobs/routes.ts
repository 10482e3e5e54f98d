import { Router, json } from "express";
import { ApiError } from "@serp/shared";
import type { AppContext } from "../context.js";
import { submitter } from "../limits/index.js";
import { rawPageOf, sendRawPage } from "./raw-page.js";

export function jobRoutes(ctx: AppContext): Router {
  const router = Router();
  // Any valid JSON is parsed; the schema then says what is wrong with a non-object.
  const parseJson = json({ limit: ctx.env.BODY_LIMIT, strict: false, type: () => true });

  router.post(
    "/v1/jobs",
    ctx.rateLimit,
    (req, _res, next) => {
      idempotencyKey(req.get("Idempotency-Key")); // a bad key is refused before the body is read
      if (!req.is("application/json")) {
        throw new ApiError("unsupported_media_type", "Send the job as JSON with 'Content-Type: application/json'");
      }
      next();
    },
    parseJson,
    async (req, res) => {
      const outcome = await ctx.jobService.submit(submitter(req, res), req.body, idempotencyKey(req.get("Idempotency-Key")));
      if (outcome.replayed) res.setHeader("Idempotent-Replayed", "true");
      res.status(outcome.status).json(outcome.body);
    },
  );

  router.get("/v1/jobs/:jobId", async (req, res) => {
    res.json(await ctx.jobService.get(req.accountId!, req.params.jobId));
  });

  // The upstream page the job's result was parsed from, while it is kept (RAW_HTML_RETENTION_SECONDS).
  router.get("/v1/jobs/:jobId/html", async (req, res) => {
    const id = req.params.jobId;
    const record = /^job_[0-9A-Z]{26}$/.test(id) ? await ctx.jobs.get(id) : null;
    // Another account's job is as unknown as an expired one.
    if (!record || record.accountId !== req.accountId) throw new ApiError("not_found", `No job ${id}`);
    await sendRawPage(req, res, await rawPageOf(ctx.rawPages, record));
  });

  return router;
}

/** Stripe's rule: up to 255 printable ASCII characters (a UUID is the usual choice). */
function idempotencyKey(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  if (!/^[\x21-\x7e]{1,255}$/.test(raw)) {
    throw new ApiError("invalid_request", "Idempotency-Key must be 1 to 255 printable ASCII characters without spaces, such as a UUID", [
      { field: "Idempotency-Key", message: "must be 1 to 255 printable ASCII characters without spaces" },
    ]);
  }
  return raw;
}
