/**
 * The compatibility surface (SPEC §4.3, reference §12.5): the search itself at /search.json and
 * /search (what the official clients call), the archive of the caller's searches, the location
 * look-up and the account. Mounted before the /v1 authentication: each route authenticates itself,
 * accepting the key as `api_key` too, and answers errors as `{"error": "..."}` (its own error
 * middleware, compat/errors.ts).
 */
import { Router, type Request, type RequestHandler, type Response } from "express";
import { z } from "zod";
import { ApiError, isJobId } from "@serp/shared";
import type { JobRecord } from "@serp/store";
import { authenticate, queryKey } from "../auth.js";
import { cacheOption } from "../compat/cache.js";
import { compatErrorSurface } from "../compat/errors.js";
import { answer, answerMarkdown, checkFormat, formatOf, type SearchAnswer } from "../compat/formats.js";
import { publicBaseUrl } from "../compat/links.js";
import { compatSearchQuery, jobRequest, parseSearch, refusedSearch, searchOfQuery, searchOfJob, type CompatQuery, type CompatSearch } from "../compat/params.js";
import { SearchQueries, keptQuery } from "../compat/queries.js";
import { envelope } from "../compat/response.js";
import type { AppContext } from "../context.js";
import { errorMiddleware } from "../errors.js";
import { jobRequestOf } from "../jobs/service.js";
import { submitter } from "../limits/index.js";
import { compatErrors, compatSecurity as security, json, rateHeaders } from "../openapi/responses.js";
import * as s from "../openapi/schemas.js";
import { RouteTable } from "./define.js";

const LOCATIONS_DEFAULT_LIMIT = 10;
const LOCATIONS_MAX_LIMIT = 100;

export const compatRouteTable = new RouteTable();

/*
 * The compatibility routes refuse in the reference API's wording. The searches' query is parsed by
 * their declaration (compatSearchQuery), refused as compat/params.ts ranks the rules (with the
 * location look-up, which needs the app's location list: given to `handle`); so are the location
 * look-up's and the account's. The archive is mounted as it is: its `output` is read by
 * compat/formats.ts, in the wording every route of this surface shares, and its key by the
 * authentication, so its schemas document them.
 */

/** The key as a query parameter: read (and refused) by the authentication, so never refused here. */
const keyParameter = z
  .preprocess((v) => (typeof v === "string" ? v : undefined), z.string().optional())
  .meta({ type: "string", description: "The API key, when not sent as a Bearer token" });

const searchDescription =
  "Runs one live job (1 credit; failed searches are free) and answers in the reference search-results API's shape; " +
  "with async=true it answers at once (status Processing) and the result is read at /searches/{id}.json. " +
  "Parameters that cannot be applied (num, the domain selector, safe, source) are ignored. output=html answers the " +
  "upstream page itself (search_metadata.raw_html_file links to it), output=md (or Accept: text/markdown) compact markdown. " +
  "Rate-limited per account.";

const searchJson = ["/search.json", "/search"].map((path) =>
  compatRouteTable.define({
    method: "get",
    path,
    operationId: path === "/search" ? "compatSearchAlias" : "compatSearch",
    tags: ["Compatibility"],
    summary: path === "/search" ? "Alias of /search.json" : "Search in the reference API's style",
    description: searchDescription,
    security,
    request: { query: compatSearchQuery },
    responses: {
      200: {
        description: "The results (JSON; the upstream page with output=html; markdown with output=md or Accept: text/markdown)",
        headers: rateHeaders,
        content: { "application/json": { schema: s.compatSearchResponse }, "text/html": { schema: z.string() }, "text/markdown": { schema: z.string() } },
      },
      ...compatErrors(400, 401, 402, 429, 502),
    },
  }),
);

const headRefused = (path: string, operationId: string) =>
  compatRouteTable.define({
    method: "head",
    path,
    operationId,
    tags: ["Compatibility"],
    summary: "Not allowed: a HEAD would run a billed search",
    responses: { 405: { description: "Use GET (Allow: GET)" } },
  });

const searchJsonHead = (["/search.json", "/search"] as const).map((path) => headRefused(path, path === "/search" ? "compatSearchAliasHead" : "compatSearchHead"));

/**
 * `/search.html` and `/search.md`. The page is served once the search completed, so an async
 * `/search.html` answers the JSON envelope until then, as every form does (compat/formats.ts);
 * `/search.md` answers markdown only.
 */
const searchForm = <const C extends Record<string, { schema: z.ZodType }>>(form: "html" | "md", content: C) => {
  const path = `/search.${form}`;
  const search = compatRouteTable.define({
    method: "get",
    path,
    operationId: form === "html" ? "compatSearchHtml" : "compatSearchMarkdown",
    tags: ["Compatibility"],
    summary: form === "html" ? "A search, answered with the upstream page itself" : "A search, answered in markdown",
    description:
      form === "html"
        ? "As /search.json with output=html: runs the search (billed alike) and answers the upstream page it was parsed from, " +
          "sandboxed (Content-Security-Policy: sandbox). 400 when the service keeps no pages (RAW_HTML_RETENTION_SECONDS=0)."
        : "As /search.json with output=md: the same result as compact markdown (a heading per block, numbered results with " +
          "title, link and snippet), for agents.",
    security,
    request: { query: compatSearchQuery },
    responses: {
      200: {
        description: form === "html" ? "The upstream page (JSON, as /search.json, while an async search is not completed)" : "The result in markdown",
        headers: rateHeaders,
        content,
      },
      ...compatErrors(400, 401, 402, 429, 502),
    },
  });
  return { search, head: headRefused(path, form === "html" ? "compatSearchHtmlHead" : "compatSearchMarkdownHead") };
};
const searchHtml = searchForm("html", { "text/html": { schema: z.string() }, "application/json": { schema: s.compatSearchResponse } });
const searchMarkdown = searchForm("md", { "text/markdown": { schema: z.string() } });
const searchForms = [searchHtml, searchMarkdown];

const archivedSearch = compatRouteTable.define({
  method: "get",
  path: "/searches/{id}",
  operationId: "compatArchivedSearch",
  tags: ["Compatibility"],
  summary: "A past search of the caller by its search_metadata.id (a trailing .json is accepted; .html the page, .md markdown)",
  description:
    "The search as /search.json answered it. `{id}.html` (or output=html) is its upstream page while it is kept " +
    "(search_metadata.raw_html_file links there); `{id}.md` (or output=md) the markdown rendering.",
  security,
  request: {
    params: z.object({ id: z.string().meta({ description: "search_metadata.id, optionally followed by .json, .html or .md", example: "job_01JZ8K3Q4V7X9YB2C5D6E7F8G9.json" }) }),
    query: z.object({
      api_key: keyParameter,
      output: z.enum(["json", "html", "md"]).optional().meta({ description: "The form of the answer when the id has no extension. Default json" }),
    }),
  },
  responses: {
    200: {
      description: "The search as /search.json answered it (or its page, or its markdown)",
      content: { "application/json": { schema: s.compatSearchResponse }, "text/html": { schema: z.string() }, "text/markdown": { schema: z.string() } },
    },
    ...compatErrors(401, 404),
  },
});

const account = (["/account", "/account.json"] as const).map((path) =>
  compatRouteTable.define({
    method: "get",
    path,
    operationId: path === "/account" ? "compatAccount" : "compatAccountJson",
    tags: ["Compatibility"],
    summary: "Account information in the reference API's style",
    description: "Searches left is the credits available now (a search costs 1).",
    security,
    request: { query: z.object({ api_key: keyParameter }) },
    responses: { 200: json(s.compatAccount, "The account"), ...compatErrors(401) },
  }),
);

const locations = compatRouteTable.define({
  method: "get",
  path: "/locations.json",
  operationId: "locations",
  tags: ["Compatibility"],
  summary: "Look up canonical location names",
  description: "Locations whose name starts with q (empty unless a location list is configured).",
  request: {
    query: z.object({
      // Anything but one string (absent, repeated) looks nothing up.
      q: z.preprocess((v) => (typeof v === "string" ? v : undefined), z.string().optional()).meta({ type: "string", example: "Austin" }),
      // A query string's text: an empty one is the default.
      limit: z
        .preprocess((v) => (v === "" ? undefined : v), z.coerce.number().int().min(1).max(LOCATIONS_MAX_LIMIT).default(LOCATIONS_DEFAULT_LIMIT))
        .meta({ description: "Most locations to return" }),
    }),
  },
  responses: { 200: json(z.array(s.compatLocation), "Matching locations"), ...compatErrors(400) },
  invalid: { query: () => new ApiError("invalid_request", `\`limit\` parameter must be an integer from 1 to ${LOCATIONS_MAX_LIMIT}.`) },
});

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

  /** A request with no key at all is told both ways to send one; then the key is checked (req.accountId, or 401). */
  const keyPresented: RequestHandler = (req, _res, next) => {
    if (req.get("authorization") === undefined && queryKey(req) === undefined) {
      throw new ApiError("unauthorized", "Missing API key: send the `api_key` parameter or an 'Authorization: Bearer sk_…' header.");
    }
    next();
  };
  const authenticated = [keyPresented, auth];

  // Express answers HEAD with a GET route mounted before it; a search must never run (and bill) for a HEAD.
  const refuseHead: RequestHandler = (_req, res) => {
    res.status(405).set("Allow", "GET").end();
  };
  for (const head of [...searchJsonHead, ...searchForms.map((f) => f.head)]) head.mount(router, refuseHead);

  const refuseSearch = { query: (error: z.ZodError, req: Request) => refusedSearch(error, req.query, ctx.locations) };
  /** Runs the search a route's parsed query asks for (billed, kept for the archive): the answer to give, in the form asked for. */
  async function runSearch(query: CompatQuery, req: Request, res: Response): Promise<SearchAnswer> {
    const accountId = req.accountId!;
    const search = searchOfQuery(query, req.query, ctx.locations);
    const format = formatOf(req);
    checkFormat(format, ctx.rawPages);
    const outcome = await ctx.jobService.submit(submitter(req, res), jobRequestOf({ ...jobRequest(search), ...cacheOption(search, ctx.env.CACHE_TTL_SECONDS) }));
    // A live search's outcome holds the final record, the upstream URL included; an async one's the queued job.
    const record: JobRecord = outcome.status === 200 ? outcome.record : { job: outcome.body.job, accountId, result: null, upstreamUrl: null };
    await queries.save(record.job.id, keptQuery(req.query)).catch((err: unknown) => req.log?.warn({ err }, "compat query not kept"));
    if (record.job.status === "failed") throw new ApiError("upstream_error", record.job.error ?? "The search failed upstream.");
    return { format, body: envelope(search, record, base), record, pages: ctx.rawPages, base };
  }
  // The JSON forms answer through the route's typed reply; /search.md has only markdown to answer.
  for (const route of [...searchJson, searchHtml.search]) {
    const search = route.handle(async ({ query }, reply, req, res) => answer(req, res, await runSearch(query, req, res), reply), refuseSearch);
    route.mount(router, ...authenticated, ctx.rateLimit, search);
  }
  const searchMd = searchMarkdown.search.handle(async ({ query }, _reply, req, res) => answerMarkdown(res, await runSearch(query, req, res)), refuseSearch);
  searchMarkdown.search.mount(router, ...authenticated, ctx.rateLimit, searchMd);

  // The archive: GET /searches/<id>.json (or without .json; .html the page, .md markdown), for the caller's own searches only.
  // Its `output` is read by formatOf (this surface's wording), so it is mounted without `handle`: its reply is still typed.
  archivedSearch.mount(router, ...authenticated, async (req, res) => {
    const accountId = req.accountId!;
    const id = String(req.params.id).replace(/\.(json|html|md)$/, "");
    const format = formatOf(req);
    const record = isJobId(id) ? await ctx.jobs.get(id) : null;
    // Another account's search is as unknown as an expired one.
    if (!record || record.accountId !== accountId) throw new ApiError("not_found", `No search ${id}.`);
    const found = { format, body: envelope(await searchOf(record), record, base), record, pages: ctx.rawPages, base };
    await answer(req, res, found, archivedSearch.replyOn(res));
  });

  // Location look-up (reference §11.1): no key needed, a bare array, empty without a location list.
  locations.mount(
    router,
    locations.handle(({ query }, reply) => {
      const q = query.q?.trim();
      const rows = q ? (ctx.locations.search?.(q, query.limit) ?? []) : [];
      reply(200, rows.map((row) => ({ ...row })));
    }),
  );

  // The caller's account: searches left is the credits available now (a search costs 1).
  for (const route of account) {
    route.mount(
      router,
      ...authenticated,
      route.handle(async (_input, reply, req) => {
        const account = await ctx.accounts.get(req.accountId!);
        if (!account) throw new ApiError("unauthorized", "The account of this key no longer exists.");
        const left = Math.max(account.balance - account.reserved, 0);
        reply(200, {
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
  }

  // Keep last: it covers the paths of every route registered above.
  refuseOtherMethods(router);
  // Only failures of the routes above reach it: errors of the app's other routers skip this router.
  router.use(errorMiddleware(compatErrorSurface));
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
    router.all(path, (req, res) => {
      res.setHeader("Allow", allow);
      throw new ApiError("method_not_allowed", `Method ${req.method} is not allowed on ${req.path}: use ${allow}.`);
    });
  }
}
