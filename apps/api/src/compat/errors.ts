/**
 * This endpoint's errors are `{"error": "..."}` only (SPEC §7). The compatibility router answers
 * its failures with its own error middleware, so what its routes and the shared middleware they
 * run (authentication, the rate limit) report comes out in this shape, never the job endpoints'
 * `{error: {message, code}}`.
 */
import type { z } from "zod";
import type { ErrorSurface } from "../errors.js";
import type { compatErrorBody } from "../openapi/schemas.js";

export const compatErrorSurface: ErrorSurface<z.input<typeof compatErrorBody>> = {
  logMessage: "compat request failed",
  logs: (e) => e.code === "internal_error" || e.code === "unavailable",
  body: (e) => ({ error: e.message }),
};
