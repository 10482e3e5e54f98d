import { engineOf, type Endpoint } from "./endpoints.js";
import type { JobParams } from "./params.js";
import type { BlocksByEndpoint, JobResult, SearchParameters } from "./results.js";

/** `search_parameters` of SPEC §2.5: engine, query, country, language, page (plus what was used). */
export function searchParameters(endpoint: Endpoint, p: JobParams): SearchParameters {
  const sp: SearchParameters = {
    engine: engineOf(endpoint),
    query: p.query ?? p.product_id ?? "",
    country: p.country,
    language: p.language,
    page: p.page ?? 1,
  };
  if (p.device) sp.device = p.device;
  if (p.location) sp.location = p.location;
  if (p.uule) sp.uule = p.uule;
  if (p.product_id) sp.product_id = p.product_id;
  return sp;
}

/**
 * The kinds whose main list pages by a fixed step, that list, and the step (the upstream's `start`
 * per page). Positions continue across pages, as in the reference API: page 2 of a web search
 * begins at 11, page 2 of the local list at 21.
 */
const PAGED_LISTS: Partial<Record<Endpoint, { list: string; step: number }>> = {
  "web-search": { list: "organic_results", step: 10 },
  "web-news": { list: "news_results", step: 10 },
  "web-local": { list: "local_results", step: 20 },
};

/** The blocks with the paged list's positions offset by the results of the pages before. */
function continuePositions(endpoint: Endpoint, params: JobParams, blocks: object): object {
  const paged = PAGED_LISTS[endpoint];
  const offset = paged ? ((params.page ?? 1) - 1) * paged.step : 0;
  const list = paged ? (blocks as Record<string, unknown>)[paged.list] : undefined;
  if (!paged || offset <= 0 || !Array.isArray(list)) return blocks;
  const shifted = list.map((item: unknown) => {
    const position = (item as { position?: unknown } | null)?.position;
    return typeof position === "number" ? { ...(item as object), position: position + offset } : item;
  });
  return { ...blocks, [paged.list]: shifted };
}

/** The result object a completed job carries: its parameters, then the parsed blocks. */
export function buildResult<E extends Endpoint>(endpoint: E, params: JobParams, blocks: BlocksByEndpoint[E]): JobResult {
  return { search_parameters: searchParameters(endpoint, params), ...(continuePositions(endpoint, params, blocks as object) as object) };
}
