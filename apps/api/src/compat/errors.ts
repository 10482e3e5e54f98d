/**
 * This endpoint's errors are `{"error": "..."}` only (SPEC §7). Its handlers catch their own
 * failures instead of passing them to the app's error middleware (which writes the job endpoints'
 * `{error: {message, code}}`), and run the shared middleware (authentication, the rate limit)
 * through `passes`, so what those report comes out in this shape too.
 */
import type { Request, RequestHandler, Response } from "express";
import { ApiError } from "@serp/shared";
import { isStorageDown } from "../errors.js";

type Handler = (req: Request, res: Response) => Promise<void> | void;

/** Wraps a handler: any failure is answered `{error: message}` with its status (and Retry-After). */
export function compat(handler: Handler): RequestHandler {
  return async (req, res) => {
    try {
      await handler(req, res);
    } catch (err) {
      sendError(req, res, err);
    }
  };
}

function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  if (isStorageDown(err)) return new ApiError("unavailable", "Storage is unavailable; try again shortly", undefined, 2);
  return new ApiError("internal_error", "Internal error");
}

export function sendError(req: Request, res: Response, err: unknown): void {
  const e = toApiError(err);
  if (e.code === "internal_error" || e.code === "unavailable") req.log?.error({ err }, "compat request failed");
  if (res.headersSent) return;
  if (e.retryAfterSeconds !== undefined) res.setHeader("Retry-After", String(e.retryAfterSeconds));
  res.status(e.status).json({ error: e.message });
}

/** `{error: {message}}` (the job endpoints' body) → `{error: message}`; anything else unchanged. */
function flatten(body: unknown): unknown {
  const error = (body as { error?: unknown } | null)?.error;
  if (error && typeof error === "object" && typeof (error as { message?: unknown }).message === "string") {
    return { error: (error as { message: string }).message };
  }
  return body;
}

/**
 * Runs a middleware inside a handler. Resolves true when it passed the request on, false when it
 * answered by itself (its JSON body flattened to this endpoint's shape); rejects with what it
 * reported through `next(err)` or threw.
 */
export function passes(mw: RequestHandler, req: Request, res: Response): Promise<boolean> {
  return new Promise<boolean>((resolve, reject) => {
    const json = res.json;
    res.json = function (this: Response, body: unknown) {
      return json.call(this, flatten(body));
    };
    const finish = (settle: () => void) => {
      res.off("finish", answered);
      res.json = json;
      settle();
    };
    const answered = () => finish(() => resolve(false));
    res.once("finish", answered);
    const next = (err?: unknown) => finish(() => (err && err !== "route" && err !== "router" ? reject(err) : resolve(true)));
    try {
      const out: unknown = mw(req, res, next);
      if (out instanceof Promise) out.catch((err: unknown) => finish(() => reject(err)));
    } catch (err) {
      finish(() => reject(err));
    }
  });
}
