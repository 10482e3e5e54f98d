/**
 * The job as customers see it (SPEC §2.3, plus `attempts`), once: `jobSchema` is its TypeScript
 * type, the OpenAPI document's `Job` and the MCP tools' output, and its params are every kind's
 * params (./kinds), so a new param is written in its kind's module alone. `pendingJob` builds the
 * job a submission answers (202) and stores.
 */
import { z } from "zod";
import { ENDPOINTS, JOB_STATUSES, QUEUES, type Endpoint } from "./endpoints.js";
import { storedCountrySchema } from "./fields.js";
import { KINDS } from "./kinds/index.js";
import type { JobResult } from "./results.js";

/** The params of each kind, as its schema outputs them. */
type KindParams = { [E in Endpoint]: z.output<(typeof KINDS)[E]["params"]> }[Endpoint];
type AnyKey<U> = U extends unknown ? keyof U : never;
type ValueOf<U, K extends PropertyKey> = U extends unknown ? (K extends keyof U ? Exclude<U[K], undefined> : never) : never;

/**
 * A job's params with every default filled (SPEC §2.2): what the worker uses and the job shows.
 * Every field some kind takes; those every kind takes (country, language) are always filled.
 */
export type JobParams = { [K in keyof KindParams]-?: ValueOf<KindParams, K> } & { [K in Exclude<AnyKey<KindParams>, keyof KindParams>]?: ValueOf<KindParams, K> };

/**
 * JobParams as a schema: each kind's fields (a field kinds bound apart, such as page, takes any
 * of their schemas), optional unless every kind takes it; the country as stored (`uk` is `gb`).
 */
function jobParamsShape(): Record<string, z.ZodType> {
  const kinds = ENDPOINTS.map((e) => KINDS[e].params.shape as Record<string, z.ZodType>);
  const names = [...new Set(kinds.flatMap((shape) => Object.keys(shape)))];
  return Object.fromEntries(
    names.map((name) => {
      const schemas = [...new Set(kinds.filter((shape) => name in shape).map((shape) => unwrap(shape[name]!)))];
      const field = name === "country" ? storedCountry : schemas.length === 1 ? schemas[0]! : anyOf(schemas);
      return [name, kinds.every((shape) => name in shape) ? field : field.optional()];
    }),
  );
}
/** A field the kinds bound apart (page): any of their schemas, described by endpoint. */
function anyOf(schemas: z.ZodType[]): z.ZodType {
  const descriptions = schemas.map((schema) => z.globalRegistry.get(schema)?.description).filter(Boolean);
  return z.union(schemas).meta({ description: `By endpoint: ${descriptions.join(" / ")}` });
}
const storedCountry = storedCountrySchema.meta({ description: "The country used (uk shown as gb; the location's when none was given)" });
const unwrap = (schema: z.ZodType): z.ZodType => (schema instanceof z.ZodOptional ? (schema.unwrap() as z.ZodType) : schema);

/** Built from the kinds at run time, which TypeScript cannot follow: JobParams is the same derivation at the type level. */
export const jobParamsSchema = z.object(jobParamsShape()).meta({ description: "The submitted params with every default filled in" }) as unknown as z.ZodType<JobParams>;

/** An ISO 8601 instant, as every time the API shows. */
export const isoDateSchema = z.string().meta({ format: "date-time" });

export const jobSchema = z.object({
  id: z.string().meta({ example: "job_01JZ8K3Q4V7X9YB2C5D6E7F8G9", description: "`job_` + a ULID" }),
  endpoint: z.enum(ENDPOINTS).meta({ description: "The search the job runs" }),
  queue: z.enum(QUEUES).meta({ description: "The queue it was submitted to" }),
  status: z.enum(JOB_STATUSES).meta({ description: "pending → processing → completed or failed" }),
  params: jobParamsSchema,
  credits: z.int().meta({ description: "Credits charged; 0 while not final and when failed" }),
  latencyMs: z.int().nullable().meta({ description: "Milliseconds from the worker taking the job to its end; null until then" }),
  error: z.string().nullable().meta({ description: "Why the job failed (failed jobs only)" }),
  attempts: z.int().meta({ description: "Upstream attempts made so far" }),
  createdAt: isoDateSchema.meta({ description: "When the job was submitted" }),
  completedAt: isoDateSchema.nullable().meta({ description: "When it became completed or failed; null until then" }),
  postbackUrl: z.string().optional().meta({ description: "Where the final job is POSTed (fast and regular jobs that gave one)" }),
  cacheMaxAgeSeconds: z.int().optional().meta({ description: "The cache opt-in the job was submitted with; absent when it never reads the cache" }),
  cacheHit: z.boolean().optional().meta({
    description: "With cacheMaxAgeSeconds: true when the result was answered from the result cache (billed the cache-hit price), false when fetched",
  }),
});
export type Job = z.output<typeof jobSchema>;

/** What a submission decides about its job; the rest of a new job is the same for every job. */
export type JobSubmission = Pick<Job, "id" | "endpoint" | "queue" | "params" | "createdAt" | "postbackUrl" | "cacheMaxAgeSeconds">;

/** The job a submission answers (202) and stores: pending, nothing charged or tried yet. */
export function pendingJob({ id, endpoint, queue, params, createdAt, postbackUrl, cacheMaxAgeSeconds }: JobSubmission): Job {
  return {
    id, endpoint, queue, status: "pending", params, credits: 0, latencyMs: null, error: null, attempts: 0, createdAt, completedAt: null,
    ...(postbackUrl ? { postbackUrl } : {}),
    ...(cacheMaxAgeSeconds !== undefined ? { cacheMaxAgeSeconds, cacheHit: false } : {}),
  };
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
