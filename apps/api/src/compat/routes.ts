/**
 * The compatibility surface (SPEC §4.3, reference §12.5): the search itself at /search.json and
 * /search (what the official clients call), the archive of the caller's searches, the location
 * look-up and the account. Mounted before the /v1 authentication: each route authenticates itself,
 * accepting the key as `api_key` too, and answers errors as `{"error": "..."}`.
 */
import { Router, type Request, type Response } from "express";
import { ApiError } from "@serp/shared";
import type { JobRecord } from "@serp/store";
import { authenticate, queryKey } from "../auth.js";
import type { AppContext } from "../context.js";
import { submitter } from "../limits/index.js";
import { cacheOption } from "./cache.js";
import { compat, passes } from "./errors.js";
import { answer, checkFormat, formatOf } from "./formats.js";
import { publicBaseUrl } from "./links.js";
import { jobRequest, parseSearch, searchOfJob, type CompatSearch } from "./params.js";
import { SearchQueries, keptQuery } from "./queries.js";
import { envelope } from "./response.js";

const JOB_ID = /^job_[0-9A-Z]{26}$/;
const LOCATIONS_DEFAULT_LIMIT = 10;
const LOCATIONS_MAX_LIMIT = 100;

export function compatRoutes(ctx: AppContext): Router {
  const router = Router();
  const base = publicBaseUrl(ctx.env);
  const auth = authenticate(ctx.accounts, { allowQueryKey: true });
  const queries = new SearchQueries(ctx.redis, ctx.keys, ctx.jobs.retentionSeconds);

  /** The search a stored job stands for: as it was asked here when its query is kept, else rebuilt from the job. */
  async function searchOf(record: JobRecord): Promise<CompatSearch> {
    const kept = await queries.load(record.job.id);
    if (kept) {
      try {
        const search = parseSearch(kept, ctx.locations);
        if (search.kind.endpoint === record.job.endpoint) return search;
      } catch {
        // The location list changed since: fall back to the job's own params.
      }
    }
    return searchOfJob(record.job);
  }

  /** Sets req.accountId or throws 401; a request with no key at all is told both ways to send one. */
  async function authenticated(req: Request, res: Response): Promise<string> {
    if (req.get("authorization") === undefined && queryKey(req) === undefined) {
      throw new ApiError("unauthorized", "Missing API key: send the `api_key` parameter or an 'Authorization: Bearer sk_…' header.");
    }
    await passes(auth, req, res);
    return req.accountId!;
  }

  // Express answers HEAD with the GET handler; a search must never run (and bill) for a HEAD.
  router.head(["/search", "/search.json", "/search.html", "/search.md"], (_req, res) => {
    res.status(405).set("Allow", "GET").end();
  });

  router.get(
    ["/search", "/search.json", "/search.html", "/search.md"],
    compat(async (req, res) => {
      const accountId = await authenticated(req, res);
      if (!(await passes(ctx.rateLimit, req, res))) return;
      const search = parseSearch(req.query, ctx.locations);
      const format = formatOf(req);
      checkFormat(format, ctx.rawPages);
      const outcome = await ctx.jobService.submit(submitter(req, res), { ...jobRequest(search), ...cacheOption(search, ctx.env.CACHE_TTL_SECONDS) });
      // A live search's outcome holds the final record, the upstream URL included; an async one's the queued job.
      const record: JobRecord = outcome.status === 200 ? outcome.record : { job: outcome.body.job, accountId, result: null, upstreamUrl: null };
      await queries.save(record.job.id, keptQuery(req.query)).catch((err: unknown) => req.log?.warn({ err }, "compat query not kept"));
      if (record.job.status === "failed") throw new ApiError("upstream_error", record.job.error ?? "The search failed upstream.");
      await answer(req, res, { format, body: envelope(search, record, base), record, pages: ctx.rawPages, base });
    }),
  );

  // The archive: GET /searches/<id>.json (or without .json; .html the page, .md markdown), for the caller's own searches only.
  router.get(
    "/searches/:id",
    compat(async (req, res) => {
      const accountId = await authenticated(req, res);
      const id = String(req.params.id).replace(/\.(json|html|md)$/, "");
      const format = formatOf(req);
      const record = JOB_ID.test(id) ? await ctx.jobs.get(id) : null;
      // Another account's search is as unknown as an expired one.
      if (!record || record.accountId !== accountId) throw new ApiError("not_found", `No search ${id}.`);
      await answer(req, res, { format, body: envelope(await searchOf(record), record, base), record, pages: ctx.rawPages, base });
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

  // Keep last: it covers the paths of every route registered above.
  refuseOtherMethods(router);
  return router;
}

/**
 * Any other method on a path this router serves (`POST /search.json`, `DELETE /account`…) is a
 * 405 in this endpoint's `{"error": "..."}` shape, with `Allow` naming the methods the path does
 * serve, instead of falling through to the job API's 404 shape. Derived from the routes already
 * registered, so a route added later gets its 405 without more code. HEAD is left out of Allow:
 * the search paths refuse it, and elsewhere Express serves it from GET.
 */
function refuseOtherMethods(router: Router): void {
  const allowed = new Map<string, Set<string>>();
  for (const layer of router.stack) {
    if (!layer.route) continue;
    const paths = [layer.route.path as string | string[]].flat();
    for (const path of paths) {
      const methods = allowed.get(path) ?? allowed.set(path, new Set()).get(path)!;
      for (const handler of layer.route.stack) if (handler.method && handler.method !== "head") methods.add(handler.method.toUpperCase());
    }
  }
  for (const [path, methods] of allowed) {
    if (methods.size === 0) continue;
    const allow = [...methods].join(", ");
    router.all(
      path,
      compat((req, res) => {
        res.setHeader("Allow", allow);
        throw new ApiError("method_not_allowed", `Method ${req.method} is not allowed on ${req.path}: use ${allow}.`);
      }),
    );
  }
}
