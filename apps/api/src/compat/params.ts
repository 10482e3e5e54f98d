/**
 * Query parameters of GET /search.json (SPEC §4.3) → one validated search, and that search → the
 * live job it runs. Every rule answers 400 with the reference API's wording where it has one.
 * Parameters that do not apply (`num`, the domain selector, `safe`, `source`, `async`, `device`
 * off engine `web`, `start` on kinds that do not page…) are ignored; `output` is read by formats.ts.
 */
import {
  ApiError,
  CONTROL_CHARACTER,
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
import { ACCEPTED_ENGINES, KINDS, PRODUCT_KINDS, engineNamed, engineOfTbm, isProductEngine, kindOfEndpoint, type Kind } from "./engines.js";

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
const shown = (value: string) => (value.length > 100 ? `${value.slice(0, 100)}…` : value);

/** One value of a parameter: undefined when absent or empty; repeated parameters are refused. */
function one(query: Query, name: string): string | undefined {
  const value = query[name];
  if (value === undefined || value === "") return undefined;
  if (typeof value !== "string") throw bad(`\`${name}\` parameter must be given once.`);
  return value;
}

const Q_MAX = 500;
const HL = /^([A-Za-z]{2})(?:[-_][A-Za-z0-9]{1,8})*$/;

export function parseSearch(query: Query, locations: LocationCheck): CompatSearch {
  const search = parseEngineSearch(query, locations);
  if (flag(query, "async")) search.async = true;
  if (flag(query, "no_cache")) {
    // The model API refuses the pair (its parameter docs: no_cache must not be combined with async).
    if (search.async) throw bad("`async` and `no_cache` parameters can't be used together.");
    search.noCache = true;
  }
  return search;
}

function parseEngineSearch(query: Query, locations: LocationCheck): CompatSearch {
  const engine = one(query, "engine") ?? "web";
  // `google`, `google_news`…: the reference's names of the same engines, echoed as sent.
  const asked = engineNamed(engine);
  if (!asked) {
    if (isProductEngine(engine)) return parseProduct(query, engine);
    throw bad(`Unsupported \`${shown(engine)}\` search engine. Supported engines: ${ACCEPTED_ENGINES.join(", ")}.`);
  }
  const q = one(query, "q")?.trim();
  if (!q) throw bad("Missing query `q` parameter.");
  if (q.length > Q_MAX) throw bad(`\`q\` parameter must be at most ${Q_MAX} characters.`);
  if (CONTROL_CHARACTER.test(q)) throw bad("`q` parameter must not contain control characters.");

  const tbm = asked === "web" ? one(query, "tbm") : undefined;
  const switched = tbm === undefined ? asked : engineOfTbm(tbm);
  if (!switched) throw bad(unsupportedTbm(tbm ?? ""));
  const kind = KINDS[switched];

  const { gl, hl, language } = countryAndLanguage(query);

  let device: CompatSearch["device"];
  if (asked === "web") {
    const d = one(query, "device") ?? "desktop";
    if (d !== "desktop" && d !== "mobile") throw bad(`Unsupported \`${shown(d)}\` device.`);
    device = d;
  }

  const located = kind.endpoint !== "web-autocomplete" ? parseLocated(query, gl, locations) : {};
  const fromLocation = located.location ? locations.countryOf(located.location.used) : undefined;
  const country: Country = gl !== undefined && isSupportedCountry(gl) ? normalizeCountry(gl) : (fromLocation ?? "us");

  const search: CompatSearch = { engine, kind, q, gl: gl ?? country, country, hl: hl ?? language, language, page: 1, ...located };
  if (tbm) search.tbm = tbm;
  if (device) search.device = device;
  if (kind.paging) {
    const start = parseStart(one(query, "start"), kind, engine, tbm);
    if (start !== undefined) {
      search.start = start;
      search.page = start / kind.paging.step + 1;
    }
  }
  return search;
}

/** `tbm` values the reference knows but this service has no results kind for get their own words. */
function unsupportedTbm(tbm: string): string {
  const supported = "use nws (news), isch (images), shop (shopping) or lcl (local)";
  if (tbm === "vid") return `Video results (\`tbm=vid\`) are not supported - tbm parameter (${supported}).`;
  return `Unsupported \`${shown(tbm)}\` value - tbm parameter (${supported}).`;
}

/** A boolean parameter: `true`/`1` or `false`/`0` (any case: Python's requests sends `True`); absent is false. */
function flag(query: Query, name: string): boolean {
  const raw = one(query, name);
  if (raw === undefined) return false;
  const v = raw.toLowerCase();
  if (v === "true" || v === "1") return true;
  if (v === "false" || v === "0") return false;
  throw bad(`\`${name}\` parameter must be true or false.`);
}

const PRODUCT_ID_MAX = 100;

/**
 * The product engine (`web_product`, or the reference's `google_product`): `product_id` required;
 * `offers=1` asks for its sellers (the sellers job, billed per 10 sellers), otherwise its details
 * (the product-info job), `specs=1` adding the specs. Sellers and details are separate jobs here,
 * so `offers` and `specs` together are refused rather than billed as two searches unasked.
 * `q`, `location`, `uule`, `device` and `start` do not apply and are ignored.
 */
function parseProduct(query: Query, engine: string): CompatSearch {
  const productId = one(query, "product_id")?.trim();
  if (!productId) throw bad("Missing `product_id` parameter.");
  if (productId.length > PRODUCT_ID_MAX) throw bad(`\`product_id\` parameter must be at most ${PRODUCT_ID_MAX} characters.`);
  if (CONTROL_CHARACTER.test(productId)) throw bad("`product_id` parameter must not contain control characters.");
  const offers = flag(query, "offers");
  const specs = flag(query, "specs");
  if (offers && specs) {
    throw bad("`offers` and `specs` parameters can't be used together: ask for the sellers (offers=1) and the details (specs=1) in two searches.");
  }
  const { gl, hl, language } = countryAndLanguage(query);
  const country: Country = gl !== undefined && isSupportedCountry(gl) ? normalizeCountry(gl) : "us";
  const sent: ProductView["sent"] = {};
  for (const name of ["offers", "specs"] as const) {
    const v = one(query, name);
    if (v !== undefined) sent[name] = v;
  }
  return {
    engine,
    kind: offers ? PRODUCT_KINDS.offers : PRODUCT_KINDS.details,
    q: "",
    gl: gl ?? country,
    country,
    hl: hl ?? language,
    language,
    page: 1,
    product_id: productId,
    product: { offers, specs, sent },
  };
}

function parseStart(raw: string | undefined, kind: Kind, engine: string, tbm: string | undefined): number | undefined {
  if (raw === undefined || !kind.paging) return undefined;
  const n = /^\d{1,3}$/.test(raw) ? Number(raw) : NaN;
  if (!(n <= 180)) throw bad("`start` parameter must be an integer from 0 to 180.");
  const { step, max } = kind.paging;
  if (n % step !== 0 || n > max) {
    const on = tbm ? `engine \`${engine}\` with tbm=${tbm}` : `engine \`${engine}\``;
    throw bad(`\`start\` parameter must be a multiple of ${step} from 0 to ${max} for ${on}.`);
  }
  return n;
}

/** `gl` (lower-cased, refused unless supported) and `hl` as sent, with the language the job uses (`en-GB` → `en`). */
function countryAndLanguage(query: Query): { gl: string | undefined; hl: string | undefined; language: string } {
  const gl = one(query, "gl")?.toLowerCase();
  if (gl !== undefined && !isSupportedCountry(gl)) throw bad(`Unsupported \`${shown(gl)}\` country - gl parameter.`);
  const hl = one(query, "hl");
  const hlMatch = hl === undefined ? undefined : HL.exec(hl);
  if (hl !== undefined && !hlMatch) throw bad(`Unsupported \`${shown(hl)}\` interface language - hl parameter.`);
  return { gl, hl, language: hlMatch?.[1]?.toLowerCase() ?? "en" };
}

function parseLocated(query: Query, gl: string | undefined, locations: LocationCheck): Pick<CompatSearch, "location" | "uule"> {
  const location = one(query, "location")?.trim();
  const uule = one(query, "uule");
  if (location !== undefined && uule !== undefined) throw bad("`location` and `uule` parameters can't be used together.");
  if (uule !== undefined) {
    if (!UULE_PATTERN.test(uule)) throw bad(`Unsupported \`${shown(uule)}\` value - uule parameter.`);
    return { uule };
  }
  if (location === undefined) return {};
  if (location.length < 2 || location.length > 200) throw bad("`location` parameter must be 2 to 200 characters long.");
  if (CONTROL_CHARACTER.test(location)) throw bad("`location` parameter must not contain control characters.");
  return { location: { requested: location, used: resolveLocation(location, gl, locations) } };
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
  if (s.kind.paging) params.page = s.page;
  if (s.location) params.location = s.location.used;
  if (s.uule) params.uule = s.uule;
  return { endpoint: s.kind.endpoint, queue, params };
}

/** The search a stored job stands for (GET /searches/:id), so any of the account's jobs can be shown. */
export function searchOfJob(job: Job): CompatSearch {
  const { engine, kind } = kindOfEndpoint(job.endpoint);
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
