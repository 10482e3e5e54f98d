/**
 * The OpenAPI 3.1 document of every route the API serves: what each route file declared in its
 * table (routes/*.ts, where the same declaration validates and mounts the route), plus the shared
 * components. test/openapi walks the Express app and fails when a route is missing here.
 */
import { OpenAPIRegistry, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";
import { accountRouteTable } from "../routes/account.js";
import { compatRouteTable } from "../routes/compat.js";
import type { RouteTable } from "../routes/define.js";
import { docsRouteTable } from "../routes/docs.js";
import { jobRouteTable } from "../routes/jobs.js";
import { mcpRouteTable } from "../routes/mcp.js";
import { opsRouteTable } from "../routes/ops.js";
import { webhookRouteTable } from "../routes/webhooks.js";

export type OpenApiDocument = ReturnType<OpenApiGeneratorV31["generateDocument"]>;

/** Every route table, in the order the document lists their paths. */
const TABLES: RouteTable[] = [jobRouteTable, accountRouteTable, webhookRouteTable, compatRouteTable, mcpRouteTable, opsRouteTable, docsRouteTable];

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
  for (const table of TABLES) {
    for (const route of table.routes) r.registerPath(route);
    for (const webhook of table.webhooks) r.registerWebhook(webhook);
  }
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
