/**
 * The engines of the compatibility endpoint (SPEC §4.3) and what each one means: the job it runs,
 * the block that holds its results, how it pages and how the reference API names it in messages.
 */
import type { Endpoint } from "@serp/shared";

export const ENGINES = ["web", "web_shopping", "web_news", "web_images", "web_local", "web_autocomplete"] as const;
export type Engine = (typeof ENGINES)[number];

export function isEngine(value: string): value is Engine {
  return (ENGINES as readonly string[]).includes(value);
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
}

const TEN: Paging = { step: 10, max: 90 };
const TWENTY: Paging = { step: 20, max: 180 };

export const KINDS: Readonly<Record<Engine, Kind>> = {
  web: { endpoint: "web-search", block: "organic_results", stateKey: "organic_results_state", paging: TEN },
  web_news: { endpoint: "web-news", block: "news_results", stateKey: "news_results_state", paging: TEN },
  web_images: { endpoint: "web-images", block: "images_results", stateKey: "images_results_state" },
  web_local: { endpoint: "web-local", block: "local_results", stateKey: "local_results_state", paging: TWENTY },
  web_shopping: { endpoint: "web-shopping-search", block: "shopping_results", stateKey: "shopping_results_state" },
  web_autocomplete: { endpoint: "web-autocomplete", block: "suggestions", stateKey: "autocomplete_results_state" },
};

/** `tbm` values engine `web` accepts, and the engine whose kind each one switches to. */
const TBM: Readonly<Record<string, Engine>> = { nws: "web_news", isch: "web_images", shop: "web_shopping", lcl: "web_local" };

export function engineOfTbm(tbm: string): Engine | undefined {
  return Object.hasOwn(TBM, tbm) ? TBM[tbm] : undefined;
}

/** Job kinds no engine runs, shown through GET /searches/:id under their own engine name. */
const OTHER_KINDS: Partial<Record<Endpoint, Kind>> = {
  "web-shopping-product": { endpoint: "web-shopping-product", block: "sellers", stateKey: "sellers_results_state" },
  "web-shopping-product-info": { endpoint: "web-shopping-product-info", block: "product_results", stateKey: "product_results_state" },
};

/** The engine and kind a job of `endpoint` answers as. */
export function kindOfEndpoint(endpoint: Endpoint): { engine: string; kind: Kind } {
  const engine = ENGINES.find((e) => KINDS[e].endpoint === endpoint);
  if (engine) return { engine, kind: KINDS[engine] };
  const kind = OTHER_KINDS[endpoint] ?? { endpoint, block: "results", stateKey: "results_state" };
  return { engine: endpoint.replaceAll("-", "_"), kind };
}

/** How the reference API names an engine in messages: `web_news` → "Web News". */
export function displayName(engine: string): string {
  return engine
    .split("_")
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join(" ");
}
