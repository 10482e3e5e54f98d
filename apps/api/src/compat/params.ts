/**
 * Query parameters of GET /search.json (SPEC §4.3) → one validated search, and that search → the
 * live job it runs. One schema, `compatSearchQuery`, validates the query and is what the OpenAPI
 * document shows of it, so the two cannot drift; every refusal answers 400 with the reference
 * API's wording. Parameters that do not apply (`num`, the domain selector, `safe`, `source`,
 * `device` and `tbm` off engine `web`, `start` on kinds that do not page…) are ignored; `output`
 * is read by formats.ts and the key by the authentication.
 */
import { z } from "zod";
import {
  ApiError,
  CONTROL_CHARACTER,
  COUNTRY_CODES,
  COUNTRY_NAMES,
  UULE_PATTERN,
  countryOfLocationName,
  isSupportedCountry,
  normalizeCountry,
  type Country,
  type Endpoint,
  type Job,
} from "@serp/shared";
import { normalizeLocationName } from "@serp/upstream";
import type { LocationCheck } from "../jobs/service.js";
import { ACCEPTED_ENGINES, KINDS, PRODUCT_KINDS, engineNamed, engineOfTbm, isProductEngine, isWebEngine, kindOfEndpoint, type Kind } from "./engines.js";

export interface CompatSearch {
  /** The engine as asked (`web` also when `tbm` switched the kind). */
  engine: string;
  kind: Kind;
  tbm?: string;
  q: string;
  /** Echoed as sent (lower case), else the country used. */
  gl: string;
  country: Country;
  /** Echoed as sent (`en-GB`); `language` is what the job uses (`en`). */
  hl: string;
  language: string;
  /** Engine `web` only. */
  device?: "desktop" | "mobile";
  location?: { requested: string; used: string };
  uule?: string;
  /** The offset as sent, where the kind pages. */
  start?: number;
  page: number;
  /** The product engine's product, and which of its views was asked for. */
  product_id?: string;
  product?: ProductView;
  /** `async=true`: answered at once with status Processing; the result is read at /searches/<id>.json. */
  async?: true;
  /** `no_cache=true`: fetched afresh instead of answered from the result cache (./cache.ts). */
  noCache?: true;
}

/** `offers=1` (sellers) or the details, with `specs=1` adding the specs; `sent` is what to echo. */
export interface ProductView {
  offers: boolean;
  specs: boolean;
  sent: { offers?: string; specs?: string };
}

type Query = Record<string, unknown>;

const bad = (message: string) => new ApiError("invalid_request", message);
/** A value quoted back in an error, cut short so a huge parameter does not make a huge answer. */
const shown = (value: unknown) => {
  const text = String(value);
  return text.length > 100 ? `${text.slice(0, 100)}…` : text;
};

const Q_MAX = 500;
const PRODUCT_ID_MAX = 100;
const HL = /^([A-Za-z]{2})(?:[-_][A-Za-z0-9]{1,8})*$/;
const FLAG = ["true", "false", "1", "0"] as const;
const TBM = ["nws", "isch", "shop", "lcl"] as const;
const START_RANGE = "`start` parameter must be an integer from 0 to 180.";

// ---- The schema --------------------------------------------------------------------------------

/** A parameter's one value as sent: undefined when absent, empty or repeated (an array, `a[b]=`). */
const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined);

/**
 * Reads one parameter before its schema checks it: absent or empty is absent, a repeated one is
 * refused (the issue marked `once`, which ranks before the value's own rules), and `tidy` gives the
 * value the schema checks (trimmed, lower case…).
 */
function single(name: string, tidy: (value: string) => unknown = (value) => value) {
  return (value: unknown, ctx: z.RefinementCtx) => {
    if (value === undefined || value === "") return undefined;
    if (typeof value === "string") return tidy(value);
    ctx.addIssue({ code: "custom", message: `\`${name}\` parameter must be given once.`, params: { once: true } });
    return undefined;
  };
}

const trimmed = (value: string) => value.trim() || undefined;
const lower = (value: string) => value.toLowerCase();
/** Up to three digits is a number the schema checks; anything else stays text and fails as not an integer. */
const offset = (value: string) => (/^\d{1,3}$/.test(value) ? Number(value) : value);
const noControl = (value: string) => !CONTROL_CHARACTER.test(value);

/** A boolean parameter: `true`/`1` or `false`/`0`, any case (Python's requests sends `True`). */
const flag = (name: string, description: string) =>
  z
    .preprocess(single(name, lower), z.enum(FLAG, { error: `\`${name}\` parameter must be true or false.` }).optional())
    .meta({ description });
const on = (value: unknown) => value === "true" || value === "1";

/** `tbm` values the reference knows but this service has no results kind for get their own words. */
function unsupportedTbm(tbm: unknown): string {
  const supported = "use nws (news), isch (images), shop (shopping) or lcl (local)";
  if (tbm === "vid") return `Video results (\`tbm=vid\`) are not supported - tbm parameter (${supported}).`;
  return `Unsupported \`${shown(tbm)}\` value - tbm parameter (${supported}).`;
}

/** The kind an engine name, switched by `tbm` on engine `web`, stands for; undefined for an unknown one. */
function kindOf(engine: unknown, tbm: unknown): Kind | undefined {
  const asked = typeof engine === "string" ? engineNamed(engine) : undefined;
  const switched = asked === "web" && typeof tbm === "string" ? engineOfTbm(tbm) : asked;
  return switched && KINDS[switched];
}

const ALWAYS = ["engine", "gl", "hl", "async", "no_cache"];
const PRODUCT_PARAMETERS = [...ALWAYS, "product_id", "offers", "specs"];

/**
 * The parameters the asked engine reads; the rest are left out before the fields are checked, so
 * what does not apply is ignored however it is spelled. The key and `output` are never read here.
 */
function applicable(query: unknown): unknown {
  if (typeof query !== "object" || query === null) return query;
  const raw = query as Query;
  const engine = text(raw.engine) ?? "web";
  const read = new Set(isProductEngine(engine) ? PRODUCT_PARAMETERS : [...ALWAYS, "q"]);
  if (engineNamed(engine) === "web") read.add("tbm");
  if (isWebEngine(engine)) read.add("device");
  const kind = kindOf(engine, text(raw.tbm));
  if (kind && kind.endpoint !== "web-autocomplete") ["location", "uule"].forEach((name) => read.add(name));
  if (kind?.paging) read.add("start");
  return Object.fromEntries(Object.entries(raw).filter(([name]) => read.has(name)));
}

/** Query of GET /search.json (SPEC §4.3). Unknown parameters such as num and safe are ignored. */
const searchQuery = z
  .preprocess(
    applicable,
    z.object({
      engine: z
        .preprocess(
          single("engine"),
          z
            .enum(ACCEPTED_ENGINES as [string, ...string[]], {
              error: (issue) => `Unsupported \`${shown(issue.input)}\` search engine. Supported engines: ${ACCEPTED_ENGINES.join(", ")}.`,
            })
            .default("web"),
        )
        .meta({
          description:
            "The results kind. The reference API's names (google, google_news, google_images, google_shopping, google_local, " +
            "google_autocomplete) are the same engines and are echoed as sent; web_light (or google_light) is the light web search, answered " +
            "from the basic or feature-phone page (no AI overview, top stories or knowledge panel; search_metadata.layout says light); " +
            "web_product (or google_product) takes product_id",
        }),
      q: z
        .preprocess(
          single("q", trimmed),
          z
            .string()
            .max(Q_MAX, { error: `\`q\` parameter must be at most ${Q_MAX} characters.` })
            .refine(noControl, { error: "`q` parameter must not contain control characters." })
            .optional(),
        )
        .meta({ description: "The search query; required except on the product engine", example: "coffee" }),
      product_id: z
        .preprocess(
          single("product_id", trimmed),
          z
            .string()
            .max(PRODUCT_ID_MAX, { error: `\`product_id\` parameter must be at most ${PRODUCT_ID_MAX} characters.` })
            .refine(noControl, { error: "`product_id` parameter must not contain control characters." })
            .optional(),
        )
        .meta({ description: "Product engine only (required there): the product's id" }),
      offers: flag("offers", "Product engine: 1 returns the product's sellers (sellers_results; 1 credit per 10 sellers)"),
      specs: flag("specs", "Product engine: 1 adds the product's specs (specs_results); not with offers"),
      async: flag("async", "true answers at once with search_metadata.status Processing; read the result at /searches/{id}.json"),
      no_cache: flag(
        "no_cache",
        "true fetches afresh instead of answering from the result cache (identical searches within CACHE_TTL_SECONDS, default 1 hour, " +
          "are answered from it and billed the cache-hit price); the fresh result refreshes the cache. Not with async=true (400)",
      ),
      gl: z
        .preprocess(
          single("gl", lower),
          z.enum(COUNTRY_CODES, { error: (issue) => `Unsupported \`${shown(issue.input)}\` country - gl parameter.` }).optional(),
        )
        .meta({ description: "Country; default us" }),
      hl: z
        .preprocess(
          single("hl"),
          z
            .string()
            .refine((hl) => HL.test(hl), { error: (issue) => `Unsupported \`${shown(issue.input)}\` interface language - hl parameter.` })
            .optional(),
        )
        .meta({ description: "Language; a regional code such as en-GB uses its language part. Default en" }),
      device: z
        .preprocess(single("device"), z.enum(["desktop", "mobile"], { error: (issue) => `Unsupported \`${shown(issue.input)}\` device.` }).optional())
        .meta({ description: "Engine web only. Default desktop" }),
      location: z
        .preprocess(
          // Trimmed but kept when blank: a blank location is too short, not absent.
          single("location", (value) => value.trim()),
          z
            .string()
            .refine((location) => location.length >= 2 && location.length <= 200, { error: "`location` parameter must be 2 to 200 characters long." })
            .refine(noControl, { error: "`location` parameter must not contain control characters." })
            .optional(),
        )
        .meta({ description: "Canonical location name, e.g. Austin,Texas,United States" }),
      uule: z
        .preprocess(
          single("uule"),
          z
            .string()
            .refine((uule) => UULE_PATTERN.test(uule), { error: (issue) => `Unsupported \`${shown(issue.input)}\` value - uule parameter.` })
            .optional(),
        )
        .meta({ description: "Raw location value, instead of location" }),
      start: z
        .preprocess(single("start", offset), z.int({ error: START_RANGE }).min(0, { error: START_RANGE }).max(180, { error: START_RANGE }).optional())
        .meta({ description: "Result offset: a multiple of 10 up to 90 for web and web_news, of 20 up to 180 for web_local" }),
      tbm: z
        .preprocess(single("tbm"), z.enum(TBM, { error: (issue) => unsupportedTbm(issue.input) }).optional())
        .meta({ description: "Engine web (or google) only: news, images, shopping, local" }),
      // Documented here, checked elsewhere: the key by the authentication, output by formats.ts.
      api_key: z.string().optional().meta({ description: "The API key, when not sent as a Bearer token" }),
      output: z.enum(["json", "html", "md"]).optional().meta({
        description:
          "json (default); html: the upstream page the result was parsed from (kept RAW_HTML_RETENTION_SECONDS); md: compact markdown " +
          "(also with Accept: text/markdown). A path ending .html or .md decides instead",
      }),
      serp_api_key: z
        .string()
        .optional()
        .meta({ description: "The API key under the name the reference's older Python client sends it; api_key wins when both are sent" }),
    }),
  )
  .superRefine(crossRules, {
    // The rules between parameters rank among the fields' own (RULE_ORDER), so they run even when a field failed.
    when: () => true,
  });

/**
 * The schema as a route declares it. zod-to-openapi types a request's query as an object or a plain
 * pipe, and a preprocessed object's pipe carries its input type, which that plain pipe's does not.
 */
export const compatSearchQuery = searchQuery as typeof searchQuery & z.ZodPipe;
export type CompatQuery = z.output<typeof searchQuery>;

/**
 * The rules between parameters. They also run beside failed fields, whose values are then as
 * sent: each rule looks only at values of the types it expects.
 */
function crossRules(v: CompatQuery, ctx: z.RefinementCtx): void {
  const refuse = (message: string, ...path: string[]) => ctx.addIssue({ code: "custom", message, path });
  if (isProductEngine(v.engine)) {
    if (v.product_id === undefined) refuse("Missing `product_id` parameter.", "product_id");
    // Sellers and details are separate jobs here: the pair is refused rather than billed as two searches unasked.
    if (on(v.offers) && on(v.specs)) {
      refuse(
        "`offers` and `specs` parameters can't be used together: ask for the sellers (offers=1) and the details (specs=1) in two searches.",
        "offers",
        "specs",
      );
    }
  } else {
    if (v.q === undefined) refuse("Missing query `q` parameter.", "q");
    if (v.location !== undefined && v.uule !== undefined) refuse("`location` and `uule` parameters can't be used together.", "location", "uule");
    const paging = kindOf(v.engine, v.tbm)?.paging;
    if (paging && typeof v.start === "number" && (v.start % paging.step !== 0 || v.start > paging.max)) {
      const at = v.tbm ? `engine \`${v.engine}\` with tbm=${v.tbm}` : `engine \`${v.engine}\``;
      refuse(`\`start\` parameter must be a multiple of ${paging.step} from 0 to ${paging.max} for ${at}.`, "start");
    }
  }
  // The model API refuses the pair (its parameter docs: no_cache must not be combined with async).
  if (on(v.async) && on(v.no_cache)) refuse("`async` and `no_cache` parameters can't be used together.", "async", "no_cache");
}

/**
 * The order the rules are checked in: a request breaking several is answered with the first, as the
 * reference answers. An issue is named by its path (`+` between the parameters of a rule between
 * them), with `.once` where the parameter's repetition ranks apart from its value. The location's
 * look-up in the list comes right after `location`.
 */
const RULE_ORDER = [
  "engine", "q", "product_id", "tbm", "offers", "specs", "offers+specs", "gl", "hl", "device",
  "location.once", "uule.once", "location+uule", "uule", "location", "start", "async", "no_cache", "async+no_cache",
];
const LOCATION_RANK = RULE_ORDER.indexOf("location");

function rank(issue: z.core.$ZodIssue): number {
  const name = issue.path.join("+");
  const once = issue.code === "custom" && issue.params?.once === true ? RULE_ORDER.indexOf(`${name}.once`) : -1;
  const at = once >= 0 ? once : RULE_ORDER.indexOf(name);
  return at >= 0 ? at : RULE_ORDER.length;
}

/** The issue answered: the first by RULE_ORDER (a stable sort keeps a field's own order within a rank). */
function firstIssue(error: z.ZodError): z.core.$ZodIssue {
  return [...error.issues].sort((a, b) => rank(a) - rank(b))[0]!;
}

// ---- Query → search ----------------------------------------------------------------------------

/** A query → its search, or the refusal (what the search routes do, their query parsed by the route's declaration). */
export function parseSearch(query: Query, locations: LocationCheck): CompatSearch {
  const parsed = compatSearchQuery.safeParse(query);
  if (!parsed.success) throw refusedSearch(parsed.error, query, locations);
  return searchOfQuery(parsed.data, query, locations);
}

/** The refusal of a query `compatSearchQuery` failed: the first rule it breaks, the location's look-up ranked among them. */
export function refusedSearch(error: z.ZodError, query: Query, locations: LocationCheck): ApiError {
  const issue = firstIssue(error);
  if (rank(issue) > LOCATION_RANK) {
    // Every rule up to `location` held: its look-up, checked before the rules after it, may refuse first.
    const upToLocation = compatSearchQuery.safeParse({ ...query, start: undefined, async: undefined, no_cache: undefined });
    if (upToLocation.success) located(upToLocation.data, locations);
  }
  return bad(issue.message);
}

/** The search a query `compatSearchQuery` parsed stands for (`query`, as sent, for what the schema does not keep). */
export function searchOfQuery(v: CompatQuery, query: Query, locations: LocationCheck): CompatSearch {
  const search = isProductEngine(v.engine) ? productSearch(v, query) : engineSearch(v, locations);
  if (on(v.async)) search.async = true;
  if (on(v.no_cache)) search.noCache = true;
  return search;
}

/** The language the job uses: `hl`'s language part (`en-GB` → `en`), default en. */
const languageOf = (hl: string | undefined) => HL.exec(hl ?? "")?.[1]?.toLowerCase() ?? "en";

function engineSearch(v: CompatQuery, locations: LocationCheck): CompatSearch {
  const kind = kindOf(v.engine, v.tbm)!;
  const language = languageOf(v.hl);
  const place = located(v, locations);
  const fromLocation = place.location ? locations.countryOf(place.location.used) : undefined;
  const country: Country = v.gl !== undefined ? normalizeCountry(v.gl) : (fromLocation ?? "us");
  const search: CompatSearch = { engine: v.engine, kind, q: v.q!, gl: v.gl ?? country, country, hl: v.hl ?? language, language, page: 1, ...place };
  if (v.tbm) search.tbm = v.tbm;
  if (isWebEngine(v.engine)) search.device = v.device ?? "desktop";
  if (kind.paging && v.start !== undefined) {
    search.start = v.start;
    search.page = v.start / kind.paging.step + 1;
  }
  return search;
}

/**
 * The product engine (`web_product`, or the reference's `google_product`): `offers=1` asks for its
 * sellers (the sellers job, billed per 10 sellers), otherwise its details (the product-info job),
 * `specs=1` adding the specs. `offers` and `specs` are echoed as sent (`True`), so read from the query.
 */
function productSearch(v: CompatQuery, query: Query): CompatSearch {
  const offers = on(v.offers);
  const language = languageOf(v.hl);
  const country: Country = v.gl !== undefined ? normalizeCountry(v.gl) : "us";
  const sent: ProductView["sent"] = {};
  for (const name of ["offers", "specs"] as const) {
    const value = text(query[name]);
    if (value !== undefined) sent[name] = value;
  }
  return {
    engine: v.engine,
    kind: offers ? PRODUCT_KINDS.offers : PRODUCT_KINDS.details,
    q: "",
    gl: v.gl ?? country,
    country,
    hl: v.hl ?? language,
    language,
    page: 1,
    product_id: v.product_id!,
    product: { offers, specs: on(v.specs), sent },
  };
}

/** Where the search is made from: `uule` as sent, or the location looked up in the list. */
function located(v: CompatQuery, locations: LocationCheck): Pick<CompatSearch, "location" | "uule"> {
  if (v.uule !== undefined) return { uule: v.uule };
  if (v.location === undefined) return {};
  return { location: { requested: v.location, used: resolveLocation(v.location, v.gl, locations) } };
}

/**
 * The canonical name a location is searched from: a name the list holds as it is; else the name
 * with the `gl` country (default us) appended when its last part names no country. With a list
 * configured, a name it does not hold is refused.
 */
function resolveLocation(requested: string, gl: string | undefined, locations: LocationCheck): string {
  const tidy = normalizeLocationName(requested);
  if (locations.isKnown(tidy) === true) return locations.canonical?.(tidy) ?? tidy;
  const last = tidy.split(",").at(-1) ?? "";
  const country = gl !== undefined && isSupportedCountry(gl) ? normalizeCountry(gl) : "us";
  const named = namesCountry(last, locations) ? tidy : `${tidy},${COUNTRY_NAMES[country]}`;
  if (locations.isKnown(named) === false) throw bad(`Unsupported \`${shown(requested)}\` location - location parameter.`);
  return locations.canonical?.(named) ?? named;
}

/** A country the service serves by name, or any country the location list holds. */
function namesCountry(segment: string, locations: LocationCheck): boolean {
  if (countryOfLocationName(segment) !== undefined) return true;
  const lower = segment.toLowerCase();
  return (locations.search?.(segment, 5) ?? []).some((row) => {
    const r = row as { target_type?: unknown; canonical_name?: unknown };
    return r.target_type === "Country" && typeof r.canonical_name === "string" && r.canonical_name.toLowerCase() === lower;
  });
}

/** The POST /v1/jobs body the search runs as: the live queue, or `fast` for an `async=true` search. */
export function jobRequest(s: CompatSearch): { endpoint: Endpoint; queue: "live" | "fast"; params: Record<string, unknown> } {
  const queue = s.async ? "fast" : "live";
  if (s.product_id !== undefined) {
    return { endpoint: s.kind.endpoint, queue, params: { product_id: s.product_id, country: s.country, language: s.language } };
  }
  const params: Record<string, unknown> = { query: s.q, country: s.country, language: s.language };
  if (s.kind.endpoint === "web-search" && s.device) params.device = s.device;
  if (s.kind.layout) params.layout = s.kind.layout;
  if (s.kind.paging) params.page = s.page;
  if (s.location) params.location = s.location.used;
  if (s.uule) params.uule = s.uule;
  return { endpoint: s.kind.endpoint, queue, params };
}

/** The search a stored job stands for (GET /searches/:id), so any of the account's jobs can be shown. */
export function searchOfJob(job: Job): CompatSearch {
  const { engine, kind } = kindOfEndpoint(job.endpoint, job.params.layout);
  const p = job.params;
  const page = p.page ?? 1;
  const search: CompatSearch = {
    engine, kind, q: p.query ?? "", gl: p.country, country: p.country, hl: p.language, language: p.language, page,
  };
  if (p.device) search.device = p.device;
  if (p.location) search.location = { requested: p.location, used: p.location };
  if (p.uule) search.uule = p.uule;
  if (p.product_id) {
    search.product_id = p.product_id;
    search.product = { offers: job.endpoint === PRODUCT_KINDS.offers.endpoint, specs: false, sent: {} };
  }
  if (kind.paging && page > 1) search.start = (page - 1) * kind.paging.step;
  return search;
}

/** `search_parameters`: the request echoed with defaults filled; never the key, `output` or `source`. */
export function searchParameters(s: CompatSearch): Record<string, unknown> {
  const out: Record<string, unknown> = { engine: s.engine };
  if (s.product_id) out.product_id = s.product_id;
  else out.q = s.q;
  if (s.location) {
    out.location_requested = s.location.requested;
    out.location_used = s.location.used;
  }
  if (s.uule) out.uule = s.uule;
  out.hl = s.hl;
  out.gl = s.gl;
  if (s.device) out.device = s.device;
  if (s.tbm) out.tbm = s.tbm;
  if (s.start !== undefined) out.start = s.start;
  if (s.product?.sent.offers !== undefined) out.offers = s.product.sent.offers;
  if (s.product?.sent.specs !== undefined) out.specs = s.product.sent.specs;
  return out;
}

/** The query of a link to `page` of the same search (pagination). */
export function linkParams(s: CompatSearch, page: number): Record<string, string> {
  const out: Record<string, string> = { engine: s.engine, q: s.q, hl: s.hl, gl: s.gl };
  if (s.location) out.location = s.location.requested;
  if (s.uule) out.uule = s.uule;
  if (s.device) out.device = s.device;
  if (s.tbm) out.tbm = s.tbm;
  if (page > 1 && s.kind.paging) out.start = String((page - 1) * s.kind.paging.step);
  return out;
}
