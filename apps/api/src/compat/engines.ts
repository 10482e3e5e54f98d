/**
 * The engines of the compatibility endpoint (SPEC §4.3) and what each one means: the job it runs,
 * the block that holds its results, how it pages and how the reference API names it in messages.
 */
import { LOCAL_RESULTS_PER_PAGE, type Endpoint } from "@serp/shared";

export const ENGINES = ["web", "web_light", "web_shopping", "web_news", "web_images", "web_local", "web_autocomplete"] as const;
export type Engine = (typeof ENGINES)[number];

export function isEngine(value: string): value is Engine {
  return (ENGINES as readonly string[]).includes(value);
}

/**
 * The reference API's own names for the same engines. Its clients send them by default
 * (`GoogleSearch` always sends `engine=google`), so they are accepted as aliases and echoed as sent;
 * the spec writes `web` where the upstream's name stands.
 */
export const ENGINE_ALIASES: Readonly<Record<string, Engine>> = {
  google: "web",
  google_light: "web_light",
  google_news: "web_news",
  google_images: "web_images",
  google_shopping: "web_shopping",
  google_local: "web_local",
  google_autocomplete: "web_autocomplete",
};

/** The product engine (reference §8, the legacy `google_product`): a product's details, or its sellers with `offers=1`. */
export const PRODUCT_ENGINES = ["web_product", "google_product"] as const;

/** Every engine name the endpoint accepts, as the error for an unknown one lists them. */
export const ACCEPTED_ENGINES: readonly string[] = [...ENGINES, ...Object.keys(ENGINE_ALIASES), ...PRODUCT_ENGINES];

/** Whether an engine name (own or alias) is a web search, full or light: the ones that take `device`. */
export function isWebEngine(name: string): boolean {
  const engine = engineNamed(name);
  return engine === "web" || engine === "web_light";
}

/** The engine a name (own or alias) stands for; undefined for an unknown name or a product engine. */
export function engineNamed(name: string): Engine | undefined {
  if (isEngine(name)) return name;
  return Object.hasOwn(ENGINE_ALIASES, name) ? ENGINE_ALIASES[name] : undefined;
}

export function isProductEngine(name: string): boolean {
  return (PRODUCT_ENGINES as readonly string[]).includes(name);
}

/** `start` steps: the offset is a multiple of `step` up to `max`; page = start / step + 1. */
export interface Paging {
  step: number;
  max: number;
}

/** One kind of result the endpoint can return (an engine, or engine `web` switched by `tbm`). */
export interface Kind {
  endpoint: Endpoint;
  /** The block whose emptiness means "no results". */
  block: string;
  /** Key of the `search_information` state line. */
  stateKey: string;
  /** Absent: `start` does not apply to this kind and is ignored. */
  paging?: Paging;
  /** The page layout its job asks for (docs/LAYOUTS.md); absent: the job's default, the full page. */
  layout?: "light";
}

/** Pages 1 to 10 (the jobs' page bound): the offset goes up to nine steps. */
const TEN: Paging = { step: 10, max: 90 };
const LOCAL_LIST: Paging = { step: LOCAL_RESULTS_PER_PAGE, max: 9 * LOCAL_RESULTS_PER_PAGE };

export const KINDS: Readonly<Record<Engine, Kind>> = {
  web: { endpoint: "web-search", block: "organic_results", stateKey: "organic_results_state", paging: TEN },
  /** The reference's cheaper light search (`google_light`): the basic or feature-phone page, without the full page's rich blocks. */
  web_light: { endpoint: "web-search", block: "organic_results", stateKey: "organic_results_state", paging: TEN, layout: "light" },
  web_news: { endpoint: "web-news", block: "news_results", stateKey: "news_results_state", paging: TEN },
  web_images: { endpoint: "web-images", block: "images_results", stateKey: "images_results_state" },
  web_local: { endpoint: "web-local", block: "local_results", stateKey: "local_results_state", paging: LOCAL_LIST },
  web_shopping: { endpoint: "web-shopping-search", block: "shopping_results", stateKey: "shopping_results_state" },
  web_autocomplete: { endpoint: "web-autocomplete", block: "suggestions", stateKey: "autocomplete_results_state" },
};

/** `tbm` values engine `web` accepts, and the engine whose kind each one switches to. */
const TBM: Readonly<Record<string, Engine>> = { nws: "web_news", isch: "web_images", shop: "web_shopping", lcl: "web_local" };

export function engineOfTbm(tbm: string): Engine | undefined {
  return Object.hasOwn(TBM, tbm) ? TBM[tbm] : undefined;
}

/**
 * The product engine's two kinds: `offers=1` runs the sellers job (`sellers_results`), otherwise the
 * product-details job (`product_results`, with `specs_results` when `specs=1`). The blocks are the
 * ones the envelope writes (response.ts `productBlocks`), in the reference's legacy shape.
 */
export const PRODUCT_KINDS = {
  offers: { endpoint: "web-shopping-product", block: "sellers_results", stateKey: "sellers_results_state" },
  details: { endpoint: "web-shopping-product-info", block: "product_results", stateKey: "product_results_state" },
} as const satisfies Record<string, Kind>;

/** The engine and kind a job of `endpoint` answers as (product jobs: the product engine; a light web search: `web_light`). */
export function kindOfEndpoint(endpoint: Endpoint, layout?: string): { engine: string; kind: Kind } {
  const engine = ENGINES.find((e) => KINDS[e].endpoint === endpoint && (KINDS[e].layout === "light") === (layout === "light"))
    ?? ENGINES.find((e) => KINDS[e].endpoint === endpoint);
  if (engine) return { engine, kind: KINDS[engine] };
  const product = Object.values(PRODUCT_KINDS).find((k) => k.endpoint === endpoint);
  if (product) return { engine: "web_product", kind: product };
  return { engine: endpoint.replaceAll("-", "_"), kind: { endpoint, block: "results", stateKey: "results_state" } };
}

/** How the reference API names an engine in messages: `web_news` → "Web News". */
export function displayName(engine: string): string {
  return engine
    .split("_")
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join(" ");
}
