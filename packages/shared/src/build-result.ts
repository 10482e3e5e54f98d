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

/** The result object a completed job carries: its parameters, then the parsed blocks. */
export function buildResult<E extends Endpoint>(endpoint: E, params: JobParams, blocks: BlocksByEndpoint[E]): JobResult {
  return { search_parameters: searchParameters(endpoint, params), ...(blocks as object) };
}
