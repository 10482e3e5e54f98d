import type { Endpoint, JobStatus, QueueName } from "./endpoints.js";
import type { JobParams } from "./params.js";
import type { JobResult } from "./results.js";

/** The job as customers see it (SPEC §2.3, plus `attempts`). */
export interface Job {
  id: string;
  endpoint: Endpoint;
  queue: QueueName;
  status: JobStatus;
  params: JobParams;
  credits: number;
  latencyMs: number | null;
  error: string | null;
  attempts: number;
  createdAt: string;
  completedAt: string | null;
  postbackUrl?: string;
  /** The cache opt-in the job was submitted with (absent: the job never reads the cache). */
  cacheMaxAgeSeconds?: number;
  /** Present with cacheMaxAgeSeconds: true when the result was answered from the cache, not fetched. */
  cacheHit?: boolean;
}

/**
 * How much of its results page a parse understood: of the result links in the page's results region,
 * how many ended up in some block (see packages/upstream/src/coverage.ts). Kept on the stored job
 * record for operators (the CLI's `job show`), in logs and in metrics; never in the customer's job
 * JSON, whose fields SPEC §2.3 fixes.
 */
export interface ParseCoverage {
  /** accounted / links; 0 when the page ended inside its results region (`cut`). */
  ratio: number;
  links: number;
  accounted: number;
  /** Of `accounted`, the links counted because they lie inside a block the parser knows (coverage.ts), not because their targets reached the blocks. */
  known?: number;
  /** The page's layout as the figure read it: full, mobile, basic, json (progressive chunks) or unknown. */
  layout: CoverageLayout;
  /** The page ended inside its results region: part of it never arrived. */
  cut?: true;
}

/** A fixed, small set: it labels a metric. */
export const COVERAGE_LAYOUTS = ["full", "mobile", "basic", "json", "unknown", "none"] as const;
/** `none`: the kind's page is not a list of outbound results (product pages, local, autocomplete), so it is not measured. */
export type CoverageLayout = (typeof COVERAGE_LAYOUTS)[number];

export interface JobResponse {
  job: Job;
  result: JobResult | null;
}
