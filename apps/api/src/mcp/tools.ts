/**
 * The MCP tool catalog: one tool per job endpoint (named by its engine value, `web_search`) plus
 * `get_job`. Inputs are the endpoint's params schema from @serp/shared; outputs are the job response.
 */
import { z } from "zod";
import { ENDPOINTS, KINDS, PARAMS_SCHEMAS, QUEUES, engineOf, jobSchema, toolDescriptions, type Endpoint } from "@serp/shared";

export const GET_JOB_TOOL = "get_job";

/** `web-shopping-product` → `web_shopping_product`. */
export const toolNameOf = (endpoint: Endpoint): string => engineOf(endpoint);

export const TOOL_NAMES: ReadonlySet<string> = new Set([...ENDPOINTS.map(toolNameOf), GET_JOB_TOOL]);

const RUNS =
  "Runs one job: on the live queue (the default) waits for it and returns {job, result}, its text a compact markdown rendering; " +
  "queue fast or regular returns the pending job at once (read it later with get_job).";

/** Each job tool's title and description: what its kind returns (from the kind's module), how it runs, what it costs. */
export const JOB_TOOLS = Object.fromEntries(
  ENDPOINTS.map((e) => {
    const { tool, credits } = KINDS[e];
    const costs = credits?.words ?? "1 credit";
    return [e, { title: tool.title, description: `${tool.returns} ${RUNS} Costs ${costs}; a failed job costs nothing.` }];
  }),
) as Record<Endpoint, { title: string; description: string }>;

export const GET_JOB_DESCRIPTION =
  "Reads a job made with this account's key, by id (job_…): its status, credits charged, error if it failed and, once completed, its result, as {job, result}. Jobs are kept for a limited time, then unknown. Free.";

/** The queue argument every job tool takes besides its params. */
const queueArgument = z
  .enum(QUEUES)
  .default("live")
  .describe("live (default): wait for the result; fast or regular: queue the job and return it pending, to read later with get_job.");

/**
 * The endpoint's params schema as a tool input: the same field validators, described in the
 * words the field gives the tools (`toolDescriptions`, beside its schema in @serp/shared), in
 * a strict object of its own. The shared object's error map says "must be an object" for unknown
 * keys (POST /v1/jobs names them through fieldIssues); the SDK shows this message to the caller.
 */
function toolInputSchema(endpoint: Endpoint): z.ZodObject {
  const fields = PARAMS_SCHEMAS[endpoint].shape as Record<string, z.ZodType>;
  const shape = {
    ...Object.fromEntries(
      Object.entries(fields).map(([name, schema]) => {
        const doc = toolDescriptions.get(schema instanceof z.ZodOptional ? schema.unwrap() : schema)?.description;
        return [name, doc ? schema.describe(doc) : schema];
      }),
    ),
    queue: queueArgument,
  };
  const accepted = Object.keys(shape).join(", ");
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === "unrecognized_keys" ? `unknown argument ${issue.keys.join(", ")} (accepted: ${accepted})` : undefined,
  });
}

/** Built once: a server is built per request. */
export const TOOL_INPUT_SCHEMAS = Object.fromEntries(ENDPOINTS.map((e) => [e, toolInputSchema(e)])) as Record<Endpoint, z.ZodObject>;

export const getJobInputSchema = z.strictObject({
  jobId: z.string().min(1).max(100).describe("The job id, job_ followed by 26 characters, as returned in job.id."),
});

/** structuredContent of every tool: the same object GET /v1/jobs/{jobId} returns (the job as @serp/shared declares it). */
export const jobResponseSchema = z.object({
  job: jobSchema,
  result: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe("The structured result, with search_parameters and the result blocks; null unless completed."),
});
