/**
 * POST /mcp: MCP over Streamable HTTP, stateless (no sessions; a new server and transport per
 * request), JSON responses. Same Bearer keys, rate limit and billing as the job endpoints.
 * HTTP-level failures answer with a JSON-RPC error body, like the SDK's own transport errors.
 */
import type { IncomingMessage } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ErrorCode, LATEST_PROTOCOL_VERSION, type JSONRPCErrorResponse, type RequestId } from "@modelcontextprotocol/sdk/types.js";
import { Router, json as jsonBody, type Request, type RequestHandler } from "express";
import type { z } from "zod";
import { ApiError } from "@serp/shared";
import { authenticate } from "../auth.js";
import type { AppContext } from "../context.js";
import { errorMiddleware, type ErrorSurface } from "../errors.js";
import { submitter } from "../limits/index.js";
import { buildMcpServer } from "../mcp/server.js";
import { TOOL_NAMES } from "../mcp/tools.js";
import { bearer, json, mcpErrors, rateHeaders } from "../openapi/responses.js";
import * as s from "../openapi/schemas.js";
import { RouteTable } from "./define.js";

export const mcpRouteTable = new RouteTable();

const mcp = mcpRouteTable.define({
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

const notOffered = (["get", "delete"] as const).map((method) =>
  mcpRouteTable.define({
    method,
    path: "/mcp",
    operationId: method === "get" ? "mcpStream" : "mcpEndSession",
    tags: ["MCP"],
    summary: method === "get" ? "Server-sent stream: not offered (stateless)" : "End a session: none to end (stateless)",
    responses: { 405: { description: "Use POST (Allow: POST)", content: { "application/json": { schema: s.jsonRpcError } } } },
  }),
);

export function mcpRoutes(ctx: AppContext): Router {
  const router = Router();

  mcp.mount(
    router,
    authenticate(ctx.accounts),
    ctx.rateLimit,
    jsonBody({ limit: ctx.env.BODY_LIMIT }),
    singleMessage,
    async (req, res) => {
      const unknown = unknownToolCall(req.body);
      if (unknown) {
        // Answered here, not by the transport: through the route's typed reply (its JSON-RPC response).
        mcp.replyOn(res)(200, unknown);
        return;
      }
      acceptNewerProtocol(req);
      const server = buildMcpServer(ctx, submitter(req, res), req.log);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on("close", () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    },
  );

  // No server-initiated stream and no sessions to end: GET and DELETE (and the rest) get 405.
  const refuse: RequestHandler = (_req, res) => {
    res.setHeader("Allow", "POST");
    throw new ApiError("method_not_allowed", "Use POST: this MCP endpoint is stateless and opens no server-sent stream");
  };
  for (const route of notOffered) route.mount(router, refuse);
  router.all("/mcp", refuse);

  // Only failures of the routes above reach it: errors of the app's other routers skip this router.
  router.use(errorMiddleware(jsonRpcErrors));
  return router;
}

/**
 * JSON-RPC batches were removed in protocol 2025-06-18; one message per POST also keeps the rate
 * limit counting tool calls.
 */
const singleMessage: RequestHandler = (req, _res, next) => {
  if (Array.isArray(req.body) && req.body.length !== 1) {
    throw new ApiError("invalid_request", "Send one JSON-RPC message per request: batches are not supported");
  }
  next();
};

/**
 * The SDK answers a call to an unknown tool with an isError result; the MCP spec (server/tools)
 * makes it a protocol error, -32602, so it is answered here before the SDK sees it.
 */
function unknownToolCall(body: unknown): (JSONRPCErrorResponse & { id: RequestId }) | undefined {
  const msg = (Array.isArray(body) ? body[0] : body) as { method?: unknown; id?: RequestId; params?: { name?: unknown } } | undefined;
  if (msg?.method !== "tools/call" || msg.id === undefined) return undefined;
  const name = msg.params?.name;
  if (typeof name !== "string" || TOOL_NAMES.has(name)) return undefined;
  return { jsonrpc: "2.0", id: msg.id, error: { code: ErrorCode.InvalidParams, message: `Unknown tool: ${name}` } };
}

/**
 * A client on a newer protocol revision than this SDK knows (2026-07-28 sends the header on every
 * request and drops the initialize handshake) is served as the newest known revision instead of
 * refused with 400. The transport reads the header through Node's parsed and raw headers.
 */
function acceptNewerProtocol(req: IncomingMessage): void {
  const version = req.headers["mcp-protocol-version"];
  if (typeof version !== "string" || !/^\d{4}-\d{2}-\d{2}$/.test(version) || version <= LATEST_PROTOCOL_VERSION) return;
  req.headers["mcp-protocol-version"] = LATEST_PROTOCOL_VERSION;
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]!.toLowerCase() === "mcp-protocol-version") req.rawHeaders[i + 1] = LATEST_PROTOCOL_VERSION;
  }
}

function jsonRpcCode(code: ApiError["code"], status: number): number {
  if (code === "invalid_json") return ErrorCode.ParseError;
  if (code === "invalid_request") return ErrorCode.InvalidRequest;
  return status >= 500 ? ErrorCode.InternalError : -32000;
}

/** RFC 6750: a challenge on every 401, with invalid_token when a key was presented. */
function bearerChallenge(req: Request): string {
  return req.get("authorization") === undefined ? 'Bearer realm="mcp"' : 'Bearer realm="mcp", error="invalid_token"';
}

/** JSON-RPC error objects, with the service's error code in data. */
const jsonRpcErrors: ErrorSurface<z.input<typeof s.jsonRpcError>> = {
  logMessage: "mcp request failed",
  logs: (e) => e.status >= 500,
  // JSON-RPC's own name for a body that does not parse.
  word: (e) => (e.code === "invalid_json" ? new ApiError("invalid_json", "Parse error: the body is not valid JSON") : e),
  headers: (e, req, res) => {
    if (e.code === "unauthorized") res.setHeader("WWW-Authenticate", bearerChallenge(req));
  },
  body: (e, req) => ({
    jsonrpc: "2.0",
    id: null,
    error: {
      code: jsonRpcCode(e.code, e.status),
      message: e.message,
      data: { code: e.code, requestId: String(req.id ?? ""), ...(e.details ? { details: e.details } : {}) },
    },
  }),
};
