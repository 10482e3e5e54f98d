import { engineOf, type Endpoint } from "./endpoints.js";
import { KINDS } from "./kinds/index.js";
import type { ServedLayout } from "./fields.js";
import type { JobParams } from "./job.js";
import type { BlocksByEndpoint, JobResult, SearchParameters } from "./results.js";
import { safeResult } from "./safe-text.js";

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
  if (p.layout) sp.layout = p.layout;
  return sp;
}

/** The blocks with the kind's paged list's positions offset by the results of the pages before (see Kind.pagedList). */
function continuePositions(endpoint: Endpoint, params: JobParams, blocks: object): object {
  const paged = KINDS[endpoint].pagedList;
  const offset = paged ? ((params.page ?? 1) - 1) * paged.step : 0;
  const list = paged ? (blocks as Record<string, unknown>)[paged.list] : undefined;
  if (!paged || offset <= 0 || !Array.isArray(list)) return blocks;
  const shifted = list.map((item: unknown) => {
    const position = (item as { position?: unknown } | null)?.position;
    return typeof position === "number" ? { ...(item as object), position: position + offset } : item;
  });
  return { ...blocks, [paged.list]: shifted };
}

/**
 * The result object a completed job carries: its parameters, the layout of the page it came from,
 * then the parsed blocks. The one place parser output becomes a result, so the page's text is made
 * harmless here (safe-text.ts): no control or bidi characters in any string, only http(s) targets
 * in link fields.
 */
export function buildResult<E extends Endpoint>(endpoint: E, params: JobParams, blocks: BlocksByEndpoint[E], layout?: ServedLayout): JobResult {
  return safeResult({
    search_parameters: searchParameters(endpoint, params),
    ...(layout ? { layout } : {}),
    ...(continuePositions(endpoint, params, blocks as object) as object),
  });
}
