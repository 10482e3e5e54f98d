/**
 * The reference API's response envelope (reference §2–§9), built only from the job record:
 * `search_metadata`, `search_parameters`, `search_information`, the result blocks as the job
 * result carries them, and the pagination blocks.
 */
import type { JobResult, JobStatus } from "@serp/shared";
import type { JobRecord } from "@serp/store";
import { displayName } from "./engines.js";
import type { CompatEnvelope, CompatMetadata } from "./envelope.js";
import { jsonEndpoint, paginationBlocks } from "./links.js";
import { searchParameters, type CompatSearch } from "./params.js";

const STATUS: Record<JobStatus, string> = { pending: "Queued", processing: "Processing", completed: "Success", failed: "Error" };

/** ISO time → `2024-07-28 02:45:18 UTC`. */
export function referenceTime(iso: string): string {
  return `${new Date(iso).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

function searchMetadata(s: CompatSearch, record: JobRecord, base: string): CompatMetadata {
  const { job } = record;
  // The reference's async mode reads `Processing` until the result is ready, queued or not.
  const waiting = job.status === "pending" || job.status === "processing";
  const meta: CompatMetadata = {
    id: job.id,
    status: s.async && waiting ? "Processing" : STATUS[job.status],
    json_endpoint: jsonEndpoint(base, job.id),
    created_at: referenceTime(job.createdAt),
    processed_at: job.completedAt ? referenceTime(job.completedAt) : null,
  };
  // Whether the result cache answered it (only for searches that used the cache).
  if (job.cacheHit !== undefined) meta.cached = job.cacheHit;
  if (record.upstreamUrl) {
    meta.web_url = record.upstreamUrl;
    // The reference names the key after the engine (`google_news_url`); `web_url` is always there.
    if (s.engine !== "web") meta[`${s.engine}_url`] = record.upstreamUrl;
  }
  const took = job.completedAt ? (Date.parse(job.completedAt) - Date.parse(job.createdAt)) / 1000 : 0;
  meta.total_time_taken = Math.round(Math.max(took, 0) * 100) / 100;
  return meta;
}

function isEmpty(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === "object") return Object.values(value).every(isEmpty);
  return false;
}

type PageInfo = { total_results?: number; time_taken_displayed?: number; query_displayed?: string };

function searchInformation(s: CompatSearch, info: PageInfo | undefined, empty: boolean): Record<string, unknown> {
  const state = empty ? "Fully empty" : "Results for exact spelling";
  const out: Record<string, unknown> = { [s.kind.stateKey]: state };
  if (s.kind.endpoint === "web-search") {
    out.query_displayed = info?.query_displayed ?? s.q;
    if (info?.total_results !== undefined) out.total_results = info.total_results;
    if (info?.time_taken_displayed !== undefined) out.time_taken_displayed = info.time_taken_displayed;
  }
  if (s.page > 1) out.page_number = s.page;
  return out;
}

/**
 * A product job's blocks in the reference's legacy product shape (reference §8): the sellers job's
 * list as `sellers_results.online_sellers` (with the product's id and title in `product_results`);
 * the details job's `product_results`, its specs moved to `specs_results.details` when `specs=1`
 * asked for them (the reference leaves them out otherwise).
 */
function productBlocks(s: CompatSearch, blocks: Record<string, unknown>): Record<string, unknown> {
  if (s.product?.offers) {
    const { product_title, sellers } = blocks as { product_title?: string; sellers?: unknown[] };
    return {
      product_results: { product_id: s.product_id, ...(product_title ? { title: product_title } : {}) },
      sellers_results: { online_sellers: sellers ?? [] },
    };
  }
  const { specs, ...product } = (blocks.product_results ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = { product_results: { product_id: s.product_id, ...product } };
  if (s.product?.specs && specs) out.specs_results = { details: specs };
  return out;
}

/**
 * The reference API prints a knowledge panel's attribute rows as keys of `knowledge_graph` itself
 * (`"born": "June 14, 1946"`): each is copied there beside `attributes` (kept for clients that read
 * it), unless the panel already has a field of that name (`type`, `description`…).
 */
function withTopLevelAttributes(blocks: Record<string, unknown>): Record<string, unknown> {
  const graph = blocks.knowledge_graph as { attributes?: Record<string, string> } | undefined;
  if (!graph?.attributes) return blocks;
  const top = Object.fromEntries(Object.entries(graph.attributes).filter(([key]) => !(key in graph)));
  return { ...blocks, knowledge_graph: { ...graph, ...top } };
}

/** The whole response for a search and the job that ran it (any status). */
export function envelope(s: CompatSearch, record: JobRecord, base: string): CompatEnvelope {
  const out: CompatEnvelope = {
    search_metadata: searchMetadata(s, record, base),
    search_parameters: searchParameters(s),
  };
  const { job } = record;
  if (job.status === "failed") return { ...out, error: job.error ?? "The search failed." };
  if (job.status !== "completed") return out;

  const { search_parameters: _params, search_information: info, layout, ...blocks } = (record.result ?? {}) as Partial<JobResult>;
  // The page the result came from (docs/LAYOUTS.md): `full`, or `light` for the basic or feature-phone page.
  if (layout !== undefined) out.search_metadata.layout = layout;
  const empty = isEmpty(s.product ? blocks[s.product.offers ? "sellers" : "product_results"] : blocks[s.kind.block]);
  out.search_information = searchInformation(s, info as PageInfo | undefined, empty);
  if (empty) out.error = `${displayName(s.engine)} hasn't returned any results for this query.`;
  Object.assign(out, s.product ? productBlocks(s, blocks) : withTopLevelAttributes(blocks));
  const pages = empty ? undefined : paginationBlocks(s, base);
  if (pages) Object.assign(out, pages);
  return out;
}
