/**
 * POST /mcp: MCP over Streamable HTTP, stateless (no sessions; a new server and transport per
 * request), JSON responses. Same Bearer keys, rate limit and billing as the job endpoints.
 * HTTP-level failures answer with a JSON-RPC error body, like the SDK's own transport errors.
 */
import type { IncomingMessage } from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ErrorCode, LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
import { Router, json, type ErrorRequestHandler, type Request, type RequestHandler } from "express";
import { ApiError } from "@serp/shared";
import { authenticate } from "../auth.js";
import type { AppContext } from "../context.js";
import { bodyReadError, isStorageDown } from "../errors.js";
import { submitter } from "../limits/index.js";
import { buildMcpServer } from "./server.js";
import { TOOL_NAMES } from "./tools.js";

export function mcpRoutes(ctx: AppContext): Router {
  const router = Router();

  router.post(
    "/",
    authenticate(ctx.accounts),
    ctx.rateLimit,
    json({ limit: ctx.env.BODY_LIMIT }),
    singleMessage,
    async (req, res) => {
      const unknown = unknownToolCall(req.body);
      if (unknown) {
        res.json(unknown);
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
  router.all("/", (_req, res) => {
    res.setHeader("Allow", "POST");
    throw new ApiError("method_not_allowed", "Use POST: this MCP endpoint is stateless and opens no server-sent stream");
  });

  router.use(jsonRpcErrors);
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
function unknownToolCall(body: unknown): object | undefined {
  const msg = (Array.isArray(body) ? body[0] : body) as { method?: unknown; id?: unknown; params?: { name?: unknown } } | undefined;
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

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const type = (err as { type?: string } | null)?.type;
  if (type === "entity.parse.failed") return new ApiError("invalid_json", "Parse error: the body is not valid JSON");
  // A corrupt gzip body or an aborted upload is the caller's fault, as on /v1/jobs: 4xx, no error log.
  const bodyError = bodyReadError(err);
  if (bodyError) return bodyError;
  if (isStorageDown(err)) return new ApiError("unavailable", "Storage is unavailable; try again shortly", undefined, 2);
  return new ApiError("internal_error", "Internal error");
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

const jsonRpcErrors: ErrorRequestHandler = (err, req, res, _next) => {
  const apiError = toApiError(err);
  if (apiError.status >= 500) req.log.error({ err }, "mcp request failed");
  if (res.headersSent) return;
  if (apiError.code === "unauthorized") res.setHeader("WWW-Authenticate", bearerChallenge(req));
  if (apiError.retryAfterSeconds !== undefined) res.setHeader("Retry-After", String(apiError.retryAfterSeconds));
  res.status(apiError.status).json({
    jsonrpc: "2.0",
    id: null,
    error: {
      code: jsonRpcCode(apiError.code, apiError.status),
      message: apiError.message,
      data: { code: apiError.code, requestId: String(req.id ?? ""), ...(apiError.details ? { details: apiError.details } : {}) },
    },
  });
};
