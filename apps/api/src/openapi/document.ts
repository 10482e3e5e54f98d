/**
 * The OpenAPI 3.1 document of every route the API serves, generated from the same Zod schemas that
 * validate requests (packages/shared) and describe responses (./schemas.ts).
 * test/openapi walks the Express app and fails when a route is missing here.
 */
import { OpenAPIRegistry, OpenApiGeneratorV31, type ResponseConfig, type RouteConfig } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";
import { ERROR_STATUS, type ErrorCode } from "@serp/shared";
import { JOB_REQUEST_EXAMPLES } from "./examples.js";
import * as s from "./schemas.js";

type Responses = RouteConfig["responses"];
export type OpenApiDocument = ReturnType<OpenApiGeneratorV31["generateDocument"]>;

const bearer = [{ bearerAuth: [] }];

const json = (schema: z.ZodType, description: string, headers?: ResponseConfig["headers"]): ResponseConfig => ({
  description,
  ...(headers ? { headers } : {}),
  content: { "application/json": { schema } },
});

const H = {
  retryAfter: { $ref: "#/components/headers/Retry-After" },
  rateLimit: { $ref: "#/components/headers/RateLimit" },
  rateLimitPolicy: { $ref: "#/components/headers/RateLimit-Policy" },
  idempotentReplayed: {
    description: "`true` when the answer is the job an earlier submission with the same Idempotency-Key made",
    schema: { type: "string" as const, enum: ["true"] },
  },
};
const rateHeaders = { RateLimit: H.rateLimit, "RateLimit-Policy": H.rateLimitPolicy };

/** Meaning of each error code, shown beside the status that carries it. */
const CODE_TEXT: Record<ErrorCode, string> = {
  invalid_request: "a field is missing or invalid (details names each one)",
  invalid_json: "the body is not valid JSON",
  unauthorized: "missing, invalid or revoked API key",
  insufficient_credits: "less than 1 credit available",
  not_found: "no such resource for this key (unknown, expired or another account's)",
  method_not_allowed: "method not allowed on this path",
  idempotency_key_in_use: "a submission with this Idempotency-Key is still being created; retry in a moment",
  idempotency_key_reused: "this Idempotency-Key was used with a different body in the last 24 hours",
  unsupported_media_type: "the body is not JSON",
  payload_too_large: "the body is larger than the configured limit",
  rate_limited: "the account's request rate is exceeded; retry after Retry-After seconds",
  concurrency_limited: "the account has as many jobs pending or processing as it may; retry when some finish",
  internal_error: "unexpected server error",
  upstream_error: "the upstream search engine failed",
  unavailable: "storage is unreachable; retry after Retry-After seconds",
};

/** Error responses of the job endpoints' shape `{error: {message, code}}`, grouped by status. */
function errors(...codes: ErrorCode[]): Responses {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of [...codes, "internal_error", "unavailable"] as ErrorCode[]) {
    const status = ERROR_STATUS[code];
    byStatus.set(status, [...new Set([...(byStatus.get(status) ?? []), code])]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => {
      const description = list.map((c) => `\`${c}\`: ${CODE_TEXT[c]}`).join("; ");
      const headers = status === 429 ? { "Retry-After": H.retryAfter, ...rateHeaders } : status === 503 ? { "Retry-After": H.retryAfter } : undefined;
      return [String(status), json(s.errorBody, description, headers)];
    }),
  );
}

/** Error responses of the compatibility endpoints' shape `{error: string}`. */
function compatErrors(...statuses: number[]): Responses {
  const text: Record<number, string> = {
    400: "invalid parameters",
    401: "missing, invalid or revoked API key",
    402: "not enough credits",
    404: "not found",
    429: "rate or concurrency limit exceeded; retry after Retry-After seconds",
    502: "the upstream search engine failed",
    503: "storage is unreachable; retry after Retry-After seconds",
  };
  return Object.fromEntries(
    [...statuses, 503].map((st) => [
      String(st),
      json(s.compatErrorBody, text[st] ?? "error", st === 429 ? { "Retry-After": H.retryAfter, ...rateHeaders } : st === 503 ? { "Retry-After": H.retryAfter } : undefined),
    ]),
  );
}

const jobIdParams = z.object({ jobId: z.string().meta({ example: "job_01JZ8K3Q4V7X9YB2C5D6E7F8G9" }) });

function registerJobs(r: OpenAPIRegistry): void {
  r.registerPath({
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
        "Idempotency-Key": z.string().min(1).max(255).optional().meta({
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
  });
  r.registerPath({
    method: "get",
    path: "/v1/jobs/{jobId}",
    operationId: "getJob",
    tags: ["Jobs"],
    summary: "Get a job and its result",
    security: bearer,
    request: { params: jobIdParams },
    responses: { 200: json(s.jobResponse, "The job, with its result once completed"), ...errors("unauthorized", "not_found") },
  });
  r.registerPath({
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
  r.registerPath({
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
}

function registerAccount(r: OpenAPIRegistry): void {
  r.registerPath({
    method: "get",
    path: "/v1/account",
    operationId: "getAccount",
    tags: ["Account"],
    summary: "The caller's account",
    description: "Credits (balance, reserved, available), usage per endpoint, limits with their source, and the keys' public ids.",
    security: bearer,
    responses: { 200: json(s.accountView, "The account"), ...errors("unauthorized") },
  });
  r.registerPath({
    method: "get",
    path: "/v1/account/usage",
    operationId: "getUsage",
    tags: ["Account"],
    summary: "Usage by day or month",
    description:
      "Jobs (completed and failed), cache hits and credits per endpoint and period (UTC), from the ledger in PostgreSQL. " +
      "`from` is inclusive and `to` exclusive; by default the last 30 days; at most 366 days. " +
      "Entries reach the ledger within about a second of each job's end, so the current period can trail by that much.",
    security: bearer,
    request: {
      query: z.object({
        from: z.string().optional().meta({ description: "Start (inclusive): a date YYYY-MM-DD (midnight UTC) or an ISO 8601 instant", example: "2026-11-01" }),
        to: z.string().optional().meta({ description: "End (exclusive): a date or an instant; default now", example: "2026-12-01" }),
        granularity: z.enum(["day", "month"]).optional().meta({ description: "Period of each row (default day)" }),
      }),
    },
    responses: { 200: json(s.usageView, "Usage rows, oldest period first"), ...errors("invalid_request", "unauthorized") },
  });
  r.registerPath({
    method: "get",
    path: "/v1/webhooks/secret",
    operationId: "getWebhookSecret",
    tags: ["Webhooks"],
    summary: "The account's webhook signing secret",
    security: bearer,
    responses: { 200: json(s.webhookSecret, "The secret (`whsec_…`)"), ...errors("unauthorized") },
  });
  r.registerPath({
    method: "post",
    path: "/v1/webhooks/secret/rotate",
    operationId: "rotateWebhookSecret",
    tags: ["Webhooks"],
    summary: "Replace the webhook signing secret",
    security: bearer,
    responses: { 200: json(s.webhookSecret, "The new secret"), ...errors("unauthorized") },
  });
  r.registerWebhook({
    method: "post",
    path: "job.final",
    operationId: "jobFinal",
    tags: ["Webhooks"],
    summary: "A fast or regular job with a postbackUrl became final",
    description:
      "POSTed to the job's postbackUrl. Signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature " +
      "`v1,<base64 HMAC-SHA256 of {id}.{timestamp}.{body}>` with the account's secret). Any 2xx is delivered; otherwise " +
      "retried with growing delays for about a day; 410 stops at once.",
    request: {
      headers: z.object({
        "webhook-id": z.string().meta({ description: "The same on every retry of one job's delivery: an idempotency key" }),
        "webhook-timestamp": z.string().meta({ description: "Unix seconds of this attempt" }),
        "webhook-signature": z.string().meta({ example: "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=" }),
      }),
      body: { content: { "application/json": { schema: s.webhookEvent } } },
    },
    responses: { 200: { description: "Any 2xx acknowledges the delivery" }, 410: { description: "Stop delivering to this URL" } },
  });
}

function registerCompat(r: OpenAPIRegistry): void {
  for (const path of ["/search.json", "/search"] as const) {
    r.registerPath({
      method: "get",
      path,
      operationId: path === "/search" ? "compatSearchAlias" : "compatSearch",
      tags: ["Compatibility"],
      summary: path === "/search" ? "Alias of /search.json" : "Search in the reference API's style",
      description:
        "Runs one live job (1 credit; failed searches are free) and answers in the reference search-results API's shape; " +
        "with async=true it answers at once (status Processing) and the result is read at /searches/{id}.json. " +
        "Parameters that cannot be applied (num, the domain selector, safe, source) are ignored. output=html answers the " +
        "upstream page itself (search_metadata.raw_html_file links to it), output=md (or Accept: text/markdown) compact markdown. " +
        "Rate-limited per account.",
      security: [{ apiKeyQuery: [] }, { bearerAuth: [] }],
      request: { query: s.compatSearchQuery },
      responses: {
        200: {
          description: "The results (JSON; the upstream page with output=html; markdown with output=md or Accept: text/markdown)",
          headers: rateHeaders,
          content: { "application/json": { schema: s.compatSearchResponse }, "text/html": { schema: z.string() }, "text/markdown": { schema: z.string() } },
        },
        ...compatErrors(400, 401, 402, 429, 502),
      },
    });
  }
  for (const path of ["/search.json", "/search"] as const) {
    r.registerPath({
      method: "head",
      path,
      operationId: path === "/search" ? "compatSearchAliasHead" : "compatSearchHead",
      tags: ["Compatibility"],
      summary: "Not allowed: a HEAD would run a billed search",
      responses: { 405: { description: "Use GET (Allow: GET)" } },
    });
  }
  for (const [path, form] of [["/search.html", "html"], ["/search.md", "md"]] as const) {
    r.registerPath({
      method: "get",
      path,
      operationId: form === "html" ? "compatSearchHtml" : "compatSearchMarkdown",
      tags: ["Compatibility"],
      summary: form === "html" ? "A search, answered with the upstream page itself" : "A search, answered in markdown",
      description:
        form === "html"
          ? "As /search.json with output=html: runs the search (billed alike) and answers the upstream page it was parsed from, " +
            "sandboxed (Content-Security-Policy: sandbox). 400 when the service keeps no pages (RAW_HTML_RETENTION_SECONDS=0)."
          : "As /search.json with output=md: the same result as compact markdown (a heading per block, numbered results with " +
            "title, link and snippet), for agents.",
      security: [{ apiKeyQuery: [] }, { bearerAuth: [] }],
      request: { query: s.compatSearchQuery },
      responses: {
        200: {
          description: form === "html" ? "The upstream page" : "The result in markdown",
          headers: rateHeaders,
          content: form === "html" ? { "text/html": { schema: z.string() } } : { "text/markdown": { schema: z.string() } },
        },
        ...compatErrors(400, 401, 402, 429, 502),
      },
    });
    r.registerPath({
      method: "head",
      path,
      operationId: form === "html" ? "compatSearchHtmlHead" : "compatSearchMarkdownHead",
      tags: ["Compatibility"],
      summary: "Not allowed: a HEAD would run a billed search",
      responses: { 405: { description: "Use GET (Allow: GET)" } },
    });
  }
  r.registerPath({
    method: "get",
    path: "/searches/{id}",
    operationId: "compatArchivedSearch",
    tags: ["Compatibility"],
    summary: "A past search of the caller by its search_metadata.id (a trailing .json is accepted; .html the page, .md markdown)",
    description:
      "The search as /search.json answered it. `{id}.html` (or output=html) is its upstream page while it is kept " +
      "(search_metadata.raw_html_file links there); `{id}.md` (or output=md) the markdown rendering.",
    security: [{ apiKeyQuery: [] }, { bearerAuth: [] }],
    request: {
      params: z.object({ id: z.string().meta({ description: "search_metadata.id, optionally followed by .json, .html or .md", example: "job_01JZ8K3Q4V7X9YB2C5D6E7F8G9.json" }) }),
      query: z.object({
        api_key: z.string().optional().meta({ description: "The API key, when not sent as a Bearer token" }),
        output: z.enum(["json", "html", "md"]).optional().meta({ description: "The form of the answer when the id has no extension. Default json" }),
      }),
    },
    responses: {
      200: {
        description: "The search as /search.json answered it (or its page, or its markdown)",
        content: { "application/json": { schema: s.compatSearchResponse }, "text/html": { schema: z.string() }, "text/markdown": { schema: z.string() } },
      },
      ...compatErrors(401, 404),
    },
  });
  for (const path of ["/account", "/account.json"] as const) {
    r.registerPath({
      method: "get",
      path,
      operationId: path === "/account" ? "compatAccount" : "compatAccountJson",
      tags: ["Compatibility"],
      summary: "Account information in the reference API's style",
      description: "Searches left is the credits available now (a search costs 1).",
      security: [{ apiKeyQuery: [] }, { bearerAuth: [] }],
      request: { query: z.object({ api_key: z.string().optional() }) },
      responses: { 200: json(s.compatAccount, "The account"), ...compatErrors(401) },
    });
  }
  r.registerPath({
    method: "get",
    path: "/locations.json",
    operationId: "locations",
    tags: ["Compatibility"],
    summary: "Look up canonical location names",
    description: "Locations whose name starts with q (empty unless a location list is configured).",
    request: {
      query: z.object({
        q: z.string().optional().meta({ example: "Austin" }),
        limit: z.int().min(1).max(100).default(10).meta({ description: "Most locations to return" }),
      }),
    },
    responses: { 200: json(z.array(s.compatLocation), "Matching locations"), ...compatErrors(400) },
  });
}

/** POST /mcp answers failures as JSON-RPC error objects, with the service's error code in data. */
function mcpErrors(...codes: ErrorCode[]): Responses {
  const out: Responses = {};
  for (const [status, response] of Object.entries(errors(...codes))) {
    out[status] = { ...(response as ResponseConfig), content: { "application/json": { schema: s.jsonRpcError } } };
  }
  return out;
}

function registerMcp(r: OpenAPIRegistry): void {
  r.registerPath({
    method: "post",
    path: "/mcp",
    operationId: "mcp",
    tags: ["MCP"],
    summary: "MCP server (Streamable HTTP, stateless, JSON responses)",
    description:
      "One JSON-RPC 2.0 message of the Model Context Protocol per request (no batches): one tool per job endpoint (each also " +
      "takes queue: live by default) and one to read a job; tool results carry structuredContent and, as their text, a " +
      "compact markdown rendering of the result. Same keys and billing as POST /v1/jobs; rate-limited per account.",
    security: bearer,
    request: { body: { required: true, content: { "application/json": { schema: s.jsonRpcRequest } } } },
    responses: {
      200: json(s.jsonRpcResponse, "The JSON-RPC response", rateHeaders),
      202: { description: "A notification or response was accepted (no body)", headers: rateHeaders },
      ...mcpErrors("invalid_request", "invalid_json", "unauthorized", "payload_too_large", "unsupported_media_type", "rate_limited", "concurrency_limited"),
    },
  });
  for (const method of ["get", "delete"] as const) {
    r.registerPath({
      method,
      path: "/mcp",
      operationId: method === "get" ? "mcpStream" : "mcpEndSession",
      tags: ["MCP"],
      summary: method === "get" ? "Server-sent stream: not offered (stateless)" : "End a session: none to end (stateless)",
      responses: { 405: { description: "Use POST (Allow: POST)", content: { "application/json": { schema: s.jsonRpcError } } } },
    });
  }
}

function registerOps(r: OpenAPIRegistry): void {
  const status = z.object({ status: z.string() }).catchall(z.unknown());
  r.registerPath({
    method: "get",
    path: "/healthz",
    operationId: "healthz",
    tags: ["Operations"],
    summary: "Liveness: the process answers",
    responses: { 200: json(status, "Alive") },
  });
  r.registerPath({
    method: "get",
    path: "/readyz",
    operationId: "readyz",
    tags: ["Operations"],
    summary: "Readiness: storage and queues are reachable",
    responses: {
      200: json(status, "Ready"),
      503: json(s.errorBody, "`unavailable`: storage is unreachable or the API is shutting down", { "Retry-After": H.retryAfter }),
    },
  });
  r.registerPath({
    method: "get",
    path: "/metrics",
    operationId: "metrics",
    tags: ["Operations"],
    summary: "Prometheus metrics",
    responses: { 200: { description: "Prometheus text exposition format", content: { "text/plain": { schema: z.string() } } } },
  });
  r.registerPath({
    method: "get",
    path: "/openapi.json",
    operationId: "openapi",
    tags: ["Operations"],
    summary: "This document",
    responses: { 200: { description: "OpenAPI 3.1 document", content: { "application/json": { schema: z.object({}).catchall(z.unknown()) } } } },
  });
  r.registerPath({
    method: "get",
    path: "/docs",
    operationId: "docs",
    tags: ["Operations"],
    summary: "Interactive documentation of this API",
    responses: { 200: { description: "HTML page", content: { "text/html": { schema: z.string() } } } },
  });
}

function registerComponents(r: OpenAPIRegistry): void {
  r.registerComponent("securitySchemes", "bearerAuth", {
    type: "http",
    scheme: "bearer",
    bearerFormat: "sk_live_…",
    description: "`Authorization: Bearer sk_live_…`",
  });
  r.registerComponent("securitySchemes", "apiKeyQuery", {
    type: "apiKey",
    in: "query",
    name: "api_key",
    description: "The key as a query parameter (compatibility endpoints only)",
  });
  r.registerComponent("headers", "Retry-After", {
    description: "Seconds to wait before retrying; takes precedence over RateLimit",
    schema: { type: "integer", minimum: 1 },
  });
  r.registerComponent("headers", "RateLimit-Policy", {
    description:
      'Quotas (IETF RateLimit header fields): "rate" = q requests per w seconds; "concurrency" = q jobs pending or ' +
      'processing at once. Example: `"rate";q=600;w=60, "concurrency";q=100;qu="concurrent-requests"`',
    schema: { type: "string" },
  });
  r.registerComponent("headers", "RateLimit", {
    description:
      "Quota left (r) and seconds until it resets (t) for each policy of RateLimit-Policy. The concurrency " +
      "policy's r counts the slots left once the submission was counted (this job taking one); a request refused " +
      'before that (rate limit, invalid body) carries the rate only. Example: `"rate";r=599;t=60, "concurrency";r=99`',
    schema: { type: "string" },
  });
}

/** Builds the document; `serverUrl` is the public base URL when one is configured. */
export function buildOpenApiDocument(serverUrl?: string): OpenApiDocument {
  const r = new OpenAPIRegistry();
  registerComponents(r);
  registerJobs(r);
  registerAccount(r);
  registerCompat(r);
  registerMcp(r);
  registerOps(r);
  return new OpenApiGeneratorV31(r.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "Search results API",
      version: "1.0.0",
      description:
        "Search-engine results as structured JSON. Submit a job with POST /v1/jobs (queue live answers at once; fast and " +
        "regular are asynchronous), or use the compatibility endpoint GET /search.json. Authenticate with " +
        "`Authorization: Bearer sk_live_…`. Errors are `{error: {message, code}}` (compatibility endpoints: `{error}`); " +
        "every 429 and 503 carries Retry-After, and rate-limited routes send RateLimit and RateLimit-Policy.",
    },
    servers: [{ url: serverUrl ?? "/" }],
    tags: [
      { name: "Jobs" },
      { name: "Account" },
      { name: "Webhooks" },
      { name: "Compatibility" },
      { name: "MCP" },
      { name: "Operations" },
    ],
  });
}
