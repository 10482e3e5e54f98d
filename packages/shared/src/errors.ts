/** Every error code the service answers with, and its HTTP status (DECISIONS.md, Errors). */
export const ERROR_STATUS = {
  invalid_request: 400,
  invalid_json: 400,
  unauthorized: 401,
  insufficient_credits: 402,
  not_found: 404,
  method_not_allowed: 405,
  idempotency_key_in_use: 409,
  unsupported_media_type: 415,
  payload_too_large: 413,
  idempotency_key_reused: 422,
  rate_limited: 429,
  concurrency_limited: 429,
  internal_error: 500,
  upstream_error: 502,
  unavailable: 503,
} as const satisfies Record<string, number>;
export type ErrorCode = keyof typeof ERROR_STATUS;

export interface FieldIssue {
  field: string;
  message: string;
}

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: FieldIssue[],
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = "ApiError";
    this.status = ERROR_STATUS[code];
  }
}

/** Customer-facing failure texts for jobs: what went wrong, in words a customer can act on. */
export const JOB_ERRORS = {
  timedOut: "timed out",
  blocked: "upstream blocked the request",
  upstreamTimeout: "upstream timed out",
  unparseable: "no results page could be parsed",
  /** Every results page that came back was understood only in part (coverage.ts): no part of one is sold. */
  partial: "the results page was not understood in full, so no partial result was returned",
  upstreamError: "upstream returned an error",
  /** No answer at all: DNS, a refused or reset connection, a TLS failure (the code is in the worker's log). */
  network: "could not reach the upstream (network error)",
  consent: "upstream asked for cookie consent and no profile could pass it",
  jsWall: "upstream required JavaScript and no profile could pass it",
  refused: "upstream refused every way of asking it",
  notSupported: "this result kind is not supported yet",
  /** A full-page job (the default layout) that no full-page rung could serve while the light page answered (docs/LAYOUTS.md). */
  fullUnavailable: (cause: string) =>
    `no full results page could be had (${cause}); the light page answered, so layout "any" would have returned a result without the full page's blocks`,
  internal: "internal error while processing the job",
} as const;
