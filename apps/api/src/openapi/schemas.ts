/**
 * Zod schemas of what the API answers, for the OpenAPI document and the routes' typed replies
 * (requests, the job and its params come from packages/shared as they are; results are in
 * ./results.ts).
 */
import { z } from "zod";
import { ENDPOINTS, ERROR_STATUS, PARAMS_SCHEMAS, isoDateSchema, jobParamsSchema, jobRequestSchema, jobSchema } from "@serp/shared";
import { named, pascal } from "./named.js";
import { deliveriesResponse, deliveryAttemptSchema, webhookSecretResponse } from "../webhooks/schemas.js";
import { jobResult } from "./results.js";
import { compatEnvelopeSchema } from "../compat/envelope.js";

export * from "./results.js";

// ---- Requests: the shared schemas, named -------------------------------------------------------

for (const endpoint of ENDPOINTS) named(PARAMS_SCHEMAS[endpoint], `${pascal(endpoint)}Params`);
for (const variant of jobRequestSchema.options) named(variant, `${pascal(variant.shape.endpoint.value)}JobRequest`);
export const jobRequest = named(jobRequestSchema, "JobRequest");

// ---- Errors ------------------------------------------------------------------------------------

export const errorCode = named(
  z.enum(Object.keys(ERROR_STATUS) as [keyof typeof ERROR_STATUS, ...(keyof typeof ERROR_STATUS)[]]),
  "ErrorCode",
);

export const errorBody = named(
  z.object({
    error: z.object({
      message: z.string().meta({ description: "What went wrong, in words a customer can act on" }),
      code: errorCode,
      requestId: z.string().meta({ description: "Also sent as the X-Request-Id header" }),
      details: z
        .array(z.object({ field: z.string().meta({ example: "params.query" }), message: z.string() }))
        .optional()
        .meta({ description: "Every invalid field (invalid_request only)" }),
    }),
  }),
  "Error",
);

/** The compatibility endpoints' error body (SPEC §7). */
export const compatErrorBody = named(z.object({ error: z.string() }), "CompatError");

// ---- Jobs --------------------------------------------------------------------------------------

// The job and its params are the shared schemas the Job type is inferred from (packages/shared/src/job.ts).
export const jobParams = named(jobParamsSchema, "JobParams");
export const job = named(jobSchema, "Job");

export const jobResponse = named(
  z.object({ job, result: jobResult.nullable().meta({ description: "Present once the job is completed" }) }),
  "JobResponse",
);

export const jobAccepted = named(
  z.object({ job, message: z.string().meta({ example: "Job queued on fast; poll GET /v1/jobs/{id} for its result" }) }),
  "JobAccepted",
);

// ---- Account -----------------------------------------------------------------------------------

const limitSource = z.enum(["default", "override"]);

export const accountView = named(
  z.object({
    id: z.string().meta({ example: "acct_01JZ8K3Q4V7X9YB2C5D6E7F8G9" }),
    name: z.string(),
    createdAt: isoDateSchema,
    balance: z.int().meta({ description: "Credits bought minus credits charged" }),
    reserved: z.int().meta({ description: "Credits held by jobs pending or processing (one each)" }),
    available: z.int().meta({ description: "balance - reserved: what new jobs can use" }),
    usage: z
      .record(z.string(), z.object({ completed: z.int(), failed: z.int(), credits: z.int() }))
      .meta({ description: "Per endpoint: jobs completed, jobs failed, credits charged" }),
    limits: z.object({
      rate: z.object({
        limit: z.int().nullable().meta({ description: "Requests per window on POST /v1/jobs, /search.json and POST /mcp; null = no limit" }),
        windowSeconds: z.int(),
        source: limitSource,
      }),
      concurrency: z.object({
        limit: z.int().nullable().meta({ description: "Jobs pending or processing at once; null = no limit" }),
        inFlight: z.int().meta({ description: "Jobs pending or processing now" }),
        source: limitSource,
      }),
    }),
    keys: z.array(
      z.object({
        id: z.string().meta({ description: "The key's public id (its first characters)", example: "sk_live_a1B2" }),
        label: z.string(),
        createdAt: isoDateSchema,
        revokedAt: isoDateSchema.nullable(),
      }),
    ),
  }),
  "Account",
);
export type AccountView = z.output<typeof accountView>;

export const usageView = named(
  z.object({
    from: isoDateSchema.meta({ description: "Start of the range (inclusive)" }),
    to: isoDateSchema.meta({ description: "End of the range (exclusive)" }),
    granularity: z.enum(["day", "month"]),
    usage: z.array(
      z.object({
        period: z.string().meta({ description: "The period's first day, YYYY-MM-DD (UTC)", example: "2026-11-24" }),
        endpoint: z.string().meta({ example: "web-search" }),
        jobs: z.int().meta({ description: "Jobs that ended in the period: completed + failed" }),
        completed: z.int(),
        failed: z.int().meta({ description: "Failed jobs (never charged)" }),
        cacheHits: z.int().meta({ description: "Completed jobs answered from the result cache" }),
        credits: z.int().meta({ description: "Credits charged" }),
      }),
    ).meta({ description: "One row per period and endpoint with any job, oldest period first" }),
  }),
  "Usage",
);

// ---- Compatibility endpoints (/search.json, /search, /searches/{id}, /account, /locations.json) --
// (The search query is compat/params.ts `compatSearchQuery`, the schema the searches validate with.)

// The search's envelope is compat/envelope.ts's schema, the one its routes' typed reply checks.
export const compatSearchResponse = named(compatEnvelopeSchema, "CompatSearch");

export const compatAccount = named(
  z
    .object({
      account_id: z.string(),
      account_name: z.string(),
      plan_name: z.string().meta({ example: "Credits" }),
      total_searches_left: z.int().meta({ description: "Credits available now" }),
      plan_searches_left: z.int(),
      extra_credits: z.int(),
      credits_balance: z.int(),
      credits_reserved: z.int(),
    })
    .catchall(z.unknown())
    .meta({ description: "Account information in the reference API's style" }),
  "CompatAccount",
);

export const compatLocation = named(
  z
    .object({
      name: z.string().meta({ example: "Austin" }),
      canonical_name: z.string().meta({ example: "Austin,Texas,United States" }),
      country_code: z.string().optional().meta({ example: "US" }),
      target_type: z.string().optional().meta({ example: "City" }),
    })
    .catchall(z.unknown()),
  "Location",
);

// ---- MCP (JSON-RPC 2.0) -------------------------------------------------------------------------

const rpcId = z.union([z.string(), z.int()]);

export const jsonRpcRequest = named(
  z.object({ jsonrpc: z.literal("2.0"), id: rpcId.optional(), method: z.string().meta({ example: "tools/call" }), params: z.unknown().optional() }),
  "JsonRpcRequest",
);

export const jsonRpcResponse = named(
  z.object({ jsonrpc: z.literal("2.0"), id: rpcId.nullable(), result: z.unknown().optional(), error: z.unknown().optional() }),
  "JsonRpcResponse",
);

export const jsonRpcError = named(
  z.object({
    jsonrpc: z.literal("2.0"),
    id: rpcId.nullable(),
    error: z.object({
      code: z.int().meta({ description: "JSON-RPC error code" }),
      message: z.string(),
      data: z
        .object({ code: errorCode, requestId: z.string(), details: z.array(z.object({ field: z.string(), message: z.string() })).optional() })
        .optional(),
    }),
  }),
  "JsonRpcError",
);

// ---- Webhooks (the routes' own response schemas, named) ----------------------------------------

export const webhookSecret = named(webhookSecretResponse, "WebhookSecret");
export const deliveries = named(deliveriesResponse, "Deliveries");
named(deliveryAttemptSchema, "DeliveryAttempt");

/** The body POSTed to a postbackUrl: what GET /v1/jobs/{jobId} answers, plus the event. */
export const webhookEvent = named(
  z.object({ event: z.enum(["job.completed", "job.failed"]), job, result: jobResult.nullable() }),
  "WebhookEvent",
);
