/**
 * The compatibility surface (SPEC §4.3, reference §12.5): the search itself at /search.json and
 * /search (what the official clients call), the archive of the caller's searches, the location
 * look-up and the account. Mounted before the /v1 authentication: each route authenticates itself,
 * accepting the key as `api_key` too, and answers errors as `{"error": "..."}`.
 */
import { Router, type Request, type Response } from "express";
import { ApiError } from "@serp/shared";
import type { JobRecord } from "@serp/store";
import { authenticate } from "../auth.js";
import type { AppContext } from "../context.js";
import { submitter } from "../limits/index.js";
import { compat, passes } from "./errors.js";
import { publicBaseUrl } from "./links.js";
import { jobRequest, parseSearch, searchOfJob } from "./params.js";
import { envelope } from "./response.js";

const JOB_ID = /^job_[0-9A-Z]{26}$/;
const LOCATIONS_DEFAULT_LIMIT = 10;
const LOCATIONS_MAX_LIMIT = 100;

export function compatRoutes(ctx: AppContext): Router {
  const router = Router();
  const base = publicBaseUrl(ctx.env);
  const auth = authenticate(ctx.accounts, { allowQueryKey: true });

  /** Sets req.accountId or throws 401; a request with no key at all is told both ways to send one. */
  async function authenticated(req: Request, res: Response): Promise<string> {
    if (req.get("authorization") === undefined && typeof req.query.api_key !== "string") {
      throw new ApiError("unauthorized", "Missing API key: send the `api_key` parameter or an 'Authorization: Bearer sk_…' header.");
    }
    await passes(auth, req, res);
    return req.accountId!;
  }

  // Express answers HEAD with the GET handler; a search must never run (and bill) for a HEAD.
  router.head(["/search", "/search.json"], (_req, res) => {
    res.status(405).set("Allow", "GET").end();
  });

  router.get(
    ["/search", "/search.json"],
    compat(async (req, res) => {
      const accountId = await authenticated(req, res);
      if (!(await passes(ctx.rateLimit, req, res))) return;
      const search = parseSearch(req.query, ctx.locations);
      const outcome = await ctx.jobService.submit(submitter(req, res), jobRequest(search));
      // A search here runs live: the outcome holds the final record, the upstream URL included.
      const record: JobRecord = outcome.status === 200 ? outcome.record : { job: outcome.body.job, accountId, result: null, upstreamUrl: null };
      if (record.job.status === "failed") throw new ApiError("upstream_error", record.job.error ?? "The search failed upstream.");
      res.json(envelope(search, record, base));
    }),
  );

  // Raw page HTML is not kept, so the reference API's HTML form has nothing to show.
  router.get(
    "/search.html",
    compat(() => {
      throw new ApiError("invalid_request", "HTML output is not available: the service keeps no page HTML. Use /search.json.");
    }),
  );

  // The archive: GET /searches/<id>.json (or without .json), for the caller's own searches only.
  router.get(
    "/searches/:id",
    compat(async (req, res) => {
      const accountId = await authenticated(req, res);
      const id = String(req.params.id).replace(/\.json$/, "");
      const record = JOB_ID.test(id) ? await ctx.jobs.get(id) : null;
      // Another account's search is as unknown as an expired one.
      if (!record || record.accountId !== accountId) throw new ApiError("not_found", `No search ${id}.`);
      res.json(envelope(searchOfJob(record.job), record, base));
    }),
  );

  // Location look-up (reference §11.1): no key needed, a bare array, empty without a location list.
  router.get(
    "/locations.json",
    compat((req, res) => {
      const q = typeof req.query.q === "string" ? req.query.q.trim() : "";
      const rawLimit = req.query.limit;
      const limit = rawLimit === undefined || rawLimit === "" ? LOCATIONS_DEFAULT_LIMIT : Number(rawLimit);
      if (!Number.isInteger(limit) || limit < 1 || limit > LOCATIONS_MAX_LIMIT) {
        throw new ApiError("invalid_request", `\`limit\` parameter must be an integer from 1 to ${LOCATIONS_MAX_LIMIT}.`);
      }
      res.json(q ? (ctx.locations.search?.(q, limit) ?? []) : []);
    }),
  );

  // The caller's account: searches left is the credits available now (a search costs 1).
  router.get(
    ["/account", "/account.json"],
    compat(async (req, res) => {
      const accountId = await authenticated(req, res);
      const account = await ctx.accounts.get(accountId);
      if (!account) throw new ApiError("unauthorized", "The account of this key no longer exists.");
      const left = Math.max(account.balance - account.reserved, 0);
      res.json({
        account_id: account.id,
        account_name: account.name,
        plan_name: "Credits",
        total_searches_left: left,
        plan_searches_left: left,
        extra_credits: 0,
        credits_balance: account.balance,
        credits_reserved: account.reserved,
      });
    }),
  );

  return router;
}
