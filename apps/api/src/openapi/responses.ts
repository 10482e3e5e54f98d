/**
 * The pieces every route's declared responses are made of: a JSON response, the shared headers,
 * and each surface's error responses (job API, compatibility, MCP) grouped by status.
 */
import type { ResponseConfig, RouteConfig } from "@asteasolutions/zod-to-openapi";
import type { z } from "zod";
import { ERROR_STATUS, type ErrorCode } from "@serp/shared";
import * as s from "./schemas.js";

export type Responses = RouteConfig["responses"];
type Security = RouteConfig["security"];

export const bearer: Security = [{ bearerAuth: [] }];
/** The compatibility endpoints take the key as `api_key` too. */
export const compatSecurity: Security = [{ apiKeyQuery: [] }, { bearerAuth: [] }];

/** A JSON response; it keeps its schema's type, which types the route's reply (routes/define.ts). */
export const json = <T extends z.ZodType>(schema: T, description: string, headers?: ResponseConfig["headers"]) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { "application/json": { schema } },
});

export const H = {
  retryAfter: { $ref: "#/components/headers/Retry-After" },
  rateLimit: { $ref: "#/components/headers/RateLimit" },
  rateLimitPolicy: { $ref: "#/components/headers/RateLimit-Policy" },
  idempotentReplayed: {
    description: "`true` when the answer is the job an earlier submission with the same Idempotency-Key made",
    schema: { type: "string" as const, enum: ["true"] },
  },
};
export const rateHeaders = { RateLimit: H.rateLimit, "RateLimit-Policy": H.rateLimitPolicy };

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
export function errors(...codes: ErrorCode[]): Responses {
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
export function compatErrors(...statuses: number[]): Responses {
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

/** POST /mcp answers failures as JSON-RPC error objects, with the service's error code in data. */
export function mcpErrors(...codes: ErrorCode[]): Responses {
  const out: Responses = {};
  for (const [status, response] of Object.entries(errors(...codes))) {
    out[status] = { ...(response as ResponseConfig), content: { "application/json": { schema: s.jsonRpcError } } };
  }
  return out;
}
