import type { ErrorRequestHandler, Request, RequestHandler, Response } from "express";
import type { z } from "zod";
import { ApiError, type FieldIssue } from "@serp/shared";
import { PageStoreUnavailableError, ResultMissingError } from "@serp/store";
import type { errorBody } from "./openapi/schemas.js";

/** Zod issues → one entry per invalid field, named by its path (`params.query`). */
export function fieldIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.flatMap((issue): FieldIssue[] => {
    const base = issue.path.map(String).join(".");
    if (issue.code === "unrecognized_keys") {
      return issue.keys.map((k) => ({ field: base ? `${base}.${k}` : k, message: "is not a known field" }));
    }
    return [{ field: base || "body", message: issue.message }];
  });
}

export function invalidRequest(issues: FieldIssue[]): ApiError {
  const summary = issues.map((i) => `${i.field} ${i.message}`).join("; ");
  return new ApiError("invalid_request", `Invalid request: ${summary}`, issues);
}

/** Errors from a Redis (or PostgreSQL) that cannot be reached: the request fails fast with 503. */
export function isStorageDown(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  return (
    err.name === "MaxRetriesPerRequestError" ||
    isHistoryDown(err) ||
    // PostgreSQL not reached since the process started (store/src/pg/app-pool.ts).
    err.name === "PostgresUnavailableError" ||
    /enableOfflineQueue|Connection is closed|ECONNREFUSED|ECONNRESET|ETIMEDOUT|Stream isn't writeable|Redis not ready/.test(err.message) ||
    // A primary just demoted by a failover (the connection is moving to the new one), or a Redis loading its data.
    /^(READONLY|LOADING|MASTERDOWN) /.test(err.message)
  );
}

/** PostgreSQL unreachable while reading the job archive or usage (store/src/pg): history is down, the rest works. */
function isHistoryDown(err: Error): boolean {
  return err.name === "ArchiveUnavailableError";
}

/** Retry-After (seconds) of a history read while PostgreSQL cannot be reached: an outage outlasts a Redis blip. */
const HISTORY_RETRY_AFTER_S = 10;
const HISTORY_UNAVAILABLE =
  "History is unavailable: its database (PostgreSQL) cannot be reached right now, so jobs past their hot window and usage cannot be read. " +
  "Submissions, live jobs and recent jobs are not affected. Try again later";

/**
 * A completed job's result that its record names in the result store (job-results.ts) but cannot be
 * read: gone or unreadable (a 404 that says so, never the job without its result), or the store not
 * answering (503, worth a retry). docs/RAW-PAGES.md, Failures.
 */
export function resultError(err: unknown): ApiError | undefined {
  if (err instanceof ResultMissingError) {
    return new ApiError(
      "not_found",
      `The result of job ${err.jobId} is ${err.unreadable ? "unreadable in" : "gone from"} the result store, so it cannot be served` +
        " (the API and the workers must share RAW_PAGES_DIR, or keep results in a bucket: RAW_PAGES_S3_BUCKET)",
    );
  }
  if (err instanceof PageStoreUnavailableError) return new ApiError("unavailable", "The result store is not answering; try again shortly", undefined, 2);
  return undefined;
}

export const notFound: RequestHandler = (req, _res, next) => {
  next(new ApiError("not_found", `No route for ${req.method} ${req.path}`));
};

/**
 * Any failure as the service's error: an ApiError as thrown, the body parser's refusals as the
 * caller's fault, unreachable storage as 503 `unavailable`, anything else as a 500. Every surface
 * (job API, compatibility, MCP) maps failures with this one function and only writes them its own way.
 */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const bodyError = bodyReadError(err);
  if (bodyError) return bodyError;
  if (err instanceof Error && isHistoryDown(err)) return new ApiError("unavailable", HISTORY_UNAVAILABLE, undefined, HISTORY_RETRY_AFTER_S);
  const result = resultError(err);
  if (result) return result;
  if (isStorageDown(err)) return new ApiError("unavailable", "Storage is unavailable; try again shortly", undefined, 2);
  return new ApiError("internal_error", "Internal error");
}

/**
 * How one surface answers a failure: what it logs, the headers it adds, the body it writes. `B` is
 * the body its routes declare for their errors (openapi/responses.ts), so what it writes fits it.
 */
export interface ErrorSurface<B = unknown> {
  /** The log line of a failure it logs (the server's fault). */
  logMessage: string;
  logs(error: ApiError): boolean;
  /** The error as this surface words it (the MCP parse error, say). */
  word?(error: ApiError): ApiError;
  headers?(error: ApiError, req: Request, res: Response): void;
  body(error: ApiError, req: Request): B;
}

/** The error middleware of one surface: Retry-After on every error that has one, then the surface's body. */
export function errorMiddleware(surface: ErrorSurface): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const mapped = toApiError(err);
    const apiError = surface.word?.(mapped) ?? mapped;
    if (surface.logs(apiError)) req.log?.error({ err }, surface.logMessage);
    if (res.headersSent) return;
    surface.headers?.(apiError, req, res);
    if (apiError.retryAfterSeconds !== undefined) res.setHeader("Retry-After", String(apiError.retryAfterSeconds));
    res.status(apiError.status).json(surface.body(apiError, req));
  };
}

/** The job API's body: `{error: {message, code, requestId, details?}}`. */
export const jobApiErrors: ErrorSurface<z.input<typeof errorBody>> = {
  logMessage: "request failed",
  logs: (e) => e.status >= 500,
  body: (e, req) => ({
    error: { message: e.message, code: e.code, requestId: String(req.id ?? ""), ...(e.details ? { details: e.details } : {}) },
  }),
};

/** The app's last middleware: every failure no surface of its own answered leaves in the job API's shape. */
export const errorHandler = errorMiddleware(jobApiErrors);

/**
 * The body parser's refusals (bad JSON, too large, an unknown encoding or charset, a corrupt gzip
 * body, an upload the client aborted, a length that does not match) as the caller's fault: 4xx,
 * logged as a refusal, never a 500.
 */
function bodyReadError(err: unknown): ApiError | undefined {
  const e = err as { type?: string; status?: number; message?: string; code?: unknown } | null;
  if (e?.status === 400 && typeof e.code === "string" && e.code.startsWith("Z_")) {
    return new ApiError("invalid_request", "The body could not be decompressed: it does not match its Content-Encoding");
  }
  if (e?.type === "entity.parse.failed") return new ApiError("invalid_json", "The body is not valid JSON");
  if (e?.type === "entity.too.large") return new ApiError("payload_too_large", "The body is too large");
  if (e?.type === "encoding.unsupported" || e?.type === "charset.unsupported") {
    return new ApiError("unsupported_media_type", "The body must be UTF-8 JSON");
  }
  if (e?.type === "request.aborted") return new ApiError("invalid_request", "The request was aborted before its body was complete");
  if (e?.status && e.status >= 400 && e.status < 500) return new ApiError("invalid_request", e.message ?? "Bad request");
  return undefined;
}
