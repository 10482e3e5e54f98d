/**
 * The job API: submit a job, read it, its upstream page and its webhook deliveries. Mounted after
 * the /v1 Bearer authentication.
 */
import { Router, json as jsonBody } from "express";
import { z } from "zod";
import { ApiError, isJobId } from "@serp/shared";
import { WebhookStore } from "@serp/store";
import type { AppContext } from "../context.js";
import { rawPageOf, sendRawPage } from "../jobs/raw-page.js";
import { submitter } from "../limits/index.js";
import { JOB_REQUEST_EXAMPLES } from "../openapi/examples.js";
import { H, bearer, errors, json, rateHeaders } from "../openapi/responses.js";
import * as s from "../openapi/schemas.js";
import { RouteTable } from "./define.js";

export const jobRouteTable = new RouteTable();

const jobIdParams = z.object({ jobId: z.string().meta({ example: "job_01JZ8K3Q4V7X9YB2C5D6E7F8G9" }) });

/** Stripe's rule: up to 255 printable ASCII characters (a UUID is the usual choice). */
const PRINTABLE_ASCII = /^[\x21-\x7e]*$/;

const submitJob = jobRouteTable.define({
  method: "post",
  path: "/v1/jobs",
  operationId: "submitJob",
  tags: ["Jobs"],
  summary: "Submit a job",
  description:
    "Runs one search. Queue `live` answers 200 with the finished job and its result; `fast` and `regular` answer 202 at once " +
    "(poll GET /v1/jobs/{jobId} or give a postbackUrl). Reserves 1 credit; a failed job costs 0. " +
    "Rate-limited per account (RateLimit headers) and limited in jobs pending or processing at once.",
  security: bearer,
  request: {
    headers: z.object({
      "Idempotency-Key": z
        .string()
        .min(1)
        .max(255)
        .refine((key) => PRINTABLE_ASCII.test(key))
        .optional()
        .meta({
          description:
            "Makes the submission safe to retry (Stripe's rule): within 24 hours, the same key with the same body answers with the job " +
            "the first submission made, with no second job and no second charge (a live job once it is final, waiting for it if it still runs), " +
            "and the header Idempotent-Replayed: true. The same key with another body is refused (422). Keys are per account; " +
            "1 to 255 printable ASCII characters, such as a UUID. A submission that was refused (credits, limits) does not keep its key.",
          example: "5f0c6d1e-3b7a-4a8e-9d1f-2c4b6a8e0f13",
        }),
    }),
    body: {
      required: true,
      description: "One search: the endpoint, its params, and the queue. Pick an example (one per endpoint) to try it as it is.",
      content: { "application/json": { schema: s.jobRequest, examples: JOB_REQUEST_EXAMPLES } },
    },
  },
  responses: {
    200: json(s.jobResponse, "Live queue: the job, completed or failed, with its result", { ...rateHeaders, "Idempotent-Replayed": H.idempotentReplayed }),
    202: json(s.jobAccepted, "Fast or regular queue: the job is queued", { ...rateHeaders, "Idempotent-Replayed": H.idempotentReplayed }),
    ...errors("invalid_request", "invalid_json", "unauthorized", "insufficient_credits", "payload_too_large", "unsupported_media_type", "rate_limited", "concurrency_limited", "idempotency_key_reused", "idempotency_key_in_use"),
  },
  invalid: {
    headers: () =>
      new ApiError("invalid_request", "Idempotency-Key must be 1 to 255 printable ASCII characters without spaces, such as a UUID", [
        { field: "Idempotency-Key", message: "must be 1 to 255 printable ASCII characters without spaces" },
      ]),
  },
});

const getJob = jobRouteTable.define({
  method: "get",
  path: "/v1/jobs/{jobId}",
  operationId: "getJob",
  tags: ["Jobs"],
  summary: "Get a job and its result",
  security: bearer,
  request: { params: jobIdParams },
  responses: { 200: json(s.jobResponse, "The job, with its result once completed"), ...errors("unauthorized", "not_found") },
});

const getJobPage = jobRouteTable.define({
  method: "get",
  path: "/v1/jobs/{jobId}/html",
  operationId: "getJobPage",
  tags: ["Jobs"],
  summary: "The upstream page a completed job was parsed from",
  description:
    "The page as the upstream sent it (HTML; JSON for web-autocomplete), kept compressed for RAW_HTML_RETENTION_SECONDS " +
    "(default 3600) after the job completes, for the job's owner only. Served in a sandbox (Content-Security-Policy: sandbox): " +
    "its scripts never run. A client that accepts br gets the stored bytes with Content-Encoding: br. 404 for another " +
    "account's job, a job not completed, a page no longer kept, or a service that keeps none.",
  security: bearer,
  request: { params: jobIdParams },
  responses: {
    200: {
      description: "The page",
      headers: { "Content-Encoding": { description: "br when the client accepts it", schema: { type: "string", enum: ["br"] } } },
      content: { "text/html": { schema: z.string() }, "application/json": { schema: z.string().meta({ description: "web-autocomplete: the upstream's JSON, as text" }) } },
    },
    ...errors("unauthorized", "not_found"),
  },
});

const listDeliveries = jobRouteTable.define({
  method: "get",
  path: "/v1/jobs/{jobId}/deliveries",
  operationId: "listDeliveries",
  tags: ["Webhooks"],
  summary: "Webhook delivery attempts of a job",
  description: "Every attempt to deliver the job's webhook: time, HTTP status, error.",
  security: bearer,
  request: { params: jobIdParams },
  responses: { 200: json(s.deliveries, "The delivery state and every attempt, oldest first"), ...errors("unauthorized", "not_found") },
});

export function jobRoutes(ctx: AppContext): Router {
  const router = Router();
  // Any valid JSON is parsed; the schema then says what is wrong with a non-object.
  const parseJson = jsonBody({ limit: ctx.env.BODY_LIMIT, strict: false, type: () => true });
  const webhooks = new WebhookStore(ctx.redis, ctx.keys, ctx.env.JOB_RETENTION_SECONDS);

  /** The caller's own job, without its result: another account's is as unknown as an expired one (404, never 403). */
  const ownJob = async (id: string, accountId: string | undefined) => {
    const record = isJobId(id) ? await ctx.jobs.get(id, { result: false }) : null;
    if (!record || record.accountId !== accountId) throw new ApiError("not_found", `No job ${id}`);
    return record;
  };

  submitJob.mount(
    router,
    ctx.rateLimit,
    submitJob.validate, // a bad Idempotency-Key is refused before the body is read
    (req, _res, next) => {
      if (!req.is("application/json")) {
        throw new ApiError("unsupported_media_type", "Send the job as JSON with 'Content-Type: application/json'");
      }
      next();
    },
    parseJson,
    submitJob.handle(async ({ headers, body }, reply, req, res) => {
      const key = headers["Idempotency-Key"];
      // The key's claim fingerprints the body as sent: another spelling of the same job is another body.
      const outcome = await ctx.jobService.submit(submitter(req, res), body, key === undefined ? undefined : { key, body: req.body });
      if (outcome.replayed) res.setHeader("Idempotent-Replayed", "true");
      if (outcome.status === 200) reply(200, outcome.body);
      else reply(202, outcome.body);
    }),
  );

  getJob.mount(
    router,
    getJob.handle(async ({ params }, reply, req) => {
      reply(200, await ctx.jobService.get(req.accountId!, params.jobId));
    }),
  );

  // The upstream page the job's result was parsed from, while it is kept (RAW_HTML_RETENTION_SECONDS).
  getJobPage.mount(
    router,
    getJobPage.handle(async ({ params }, _reply, req, res) => {
      const record = await ownJob(params.jobId, req.accountId);
      await sendRawPage(req, res, await rawPageOf(ctx.rawPages, record));
    }),
  );

  listDeliveries.mount(
    router,
    listDeliveries.handle(async ({ params }, reply, req) => {
      const id = params.jobId;
      const record = await ownJob(id, req.accountId);
      const log = await webhooks.log(id);
      const url = record.job.postbackUrl ?? null;
      // Before the job is final no delivery exists yet; without a postbackUrl (or on live) none ever will.
      const expected = url !== null && record.job.queue !== "live";
      reply(200, {
        jobId: id,
        url,
        state: log?.state ?? (expected ? "pending" : "none"),
        nextAttemptAt: log?.nextAttemptAt ?? null,
        attempts: log?.attempts ?? [],
      });
    }),
  );

  return router;
}
