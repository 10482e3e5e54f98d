import type { Request, RequestHandler } from "express";
import { ApiError } from "@serp/shared";
import type { AccountStore } from "@serp/store";

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** The account whose key authenticated the request. */
      accountId?: string;
    }
  }
}

/** The key from `Authorization: Bearer …`, or (where allowed) the `api_key` query parameter. */
function presentedKey(req: Request, allowQuery: boolean): string | undefined {
  const header = req.get("authorization");
  if (header !== undefined) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) throw new ApiError("unauthorized", "Malformed Authorization header: use 'Bearer sk_…'");
    return m[1];
  }
  return allowQuery ? queryKey(req) : undefined;
}

/**
 * The key sent in the query: `api_key`, else `serp_api_key` (what the reference's older Python client
 * sends once `GoogleSearch.SERP_API_KEY` is set). Repeated values are no key.
 */
export function queryKey(req: Request): string | undefined {
  for (const name of ["api_key", "serp_api_key"]) {
    const value = req.query[name];
    if (typeof value === "string" && value !== "") return value;
  }
  return undefined;
}

export function authenticate(accounts: AccountStore, opts: { allowQueryKey?: boolean } = {}): RequestHandler {
  return async (req, _res, next) => {
    const key = presentedKey(req, opts.allowQueryKey ?? false);
    if (!key) throw new ApiError("unauthorized", "Missing API key: send 'Authorization: Bearer sk_…'");
    const accountId = await accounts.authenticate(key);
    if (!accountId) throw new ApiError("unauthorized", "Invalid or revoked API key");
    req.accountId = accountId;
    next();
  };
}
