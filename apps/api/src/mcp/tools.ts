/**
 * The MCP tool catalog: one tool per job endpoint (named by its engine value, `web_search`) plus
 * `get_job`. Inputs are the endpoint's params schema from @serp/shared; outputs are the job response.
 */
import { z } from "zod";
import { ENDPOINTS, JOB_STATUSES, PARAMS_SCHEMAS, QUEUES, engineOf, type Endpoint } from "@serp/shared";

export const GET_JOB_TOOL = "get_job";

/** `web-shopping-product` → `web_shopping_product`. */
export const toolNameOf = (endpoint: Endpoint): string => engineOf(endpoint);

export const TOOL_NAMES: ReadonlySet<string> = new Set([...ENDPOINTS.map(toolNameOf), GET_JOB_TOOL]);

const RUNS =
  "Runs one job: on the live queue (the default) waits for it and returns {job, result}, its text a compact markdown rendering; " +
  "queue fast or regular returns the pending job at once (read it later with get_job).";
const BILLING = `${RUNS} Costs 1 credit; a failed job costs nothing.`;

export const JOB_TOOLS: Record<Endpoint, { title: string; description: string }> = {
  "web-search": {
    title: "Web search",
    description: `Web search results for a query: organic_results (title, link, snippet), ads, ai_overview, related_questions (question, and the answer's snippet, title and link where the page shows them), local_results (a local or hotel pack: places with rating, reviews, type, address and the price a card shows), top_stories, discussions_and_forums (forum posts: title, link, source), knowledge_graph and related_searches. ${BILLING}`,
  },
  "web-news": {
    title: "News search",
    description: `News articles for a query: news_results, each with position, title, link, source, date, snippet and thumbnail. ${BILLING}`,
  },
  "web-images": {
    title: "Image search",
    description: `Image results for a query: images_results, each with the source page, original image URL and size, and thumbnail. ${BILLING}`,
  },
  "web-local": {
    title: "Local business search",
    description: `Local businesses for a query (add a location to search from a place): local_results, each with title, rating, reviews, type, address, phone, hours and website. ${BILLING}`,
  },
  "web-shopping-search": {
    title: "Shopping search",
    description: `Shopping products for a query: shopping_results with title, price, merchant, rating and product_id (pass product_id to web_shopping_product or web_shopping_product_info). ${BILLING}`,
  },
  "web-shopping-product": {
    title: "Shopping product sellers",
    description:
      `Every seller's offer for a shopping product_id: sellers, each with name, link, base and total price. ${RUNS} Costs 1 credit per 10 sellers returned (minimum 1); a failed job costs nothing.`,
  },
  "web-shopping-product-info": {
    title: "Shopping product details",
    description: `Details of a shopping product_id: product_results with title, description, specs, images, rating and reviews. ${BILLING}`,
  },
  "web-autocomplete": {
    title: "Autocomplete suggestions",
    description: `Search suggestions for text typed so far: suggestions. ${BILLING}`,
  },
};

export const GET_JOB_DESCRIPTION =
  "Reads a job made with this account's key, by id (job_…): its status, credits charged, error if it failed and, once completed, its result, as {job, result}. Jobs are kept for a limited time, then unknown. Free.";

/** What each params field means, shown to the model choosing arguments. */
const FIELD_DOCS: Record<string, string> = {
  query: "Search text, 1 to 500 characters.",
  country: "Two-letter country code of the results (uk equals gb). Default us, or the country of location when it is given.",
  language: "Two-letter language code. Default en.",
  page: "Results page, from 1.",
  device: "desktop (default) or mobile.",
  location: "Where to search from: a canonical location name City,Region,Country, e.g. Austin,Texas,United States. Not together with uule.",
  uule: "Raw encoded location value, sent as is. Prefer location.",
  product_id: "Shopping product id, as found in web_shopping_search results (product_id).",
};

/** The queue argument every job tool takes besides its params. */
const queueArgument = z
  .enum(QUEUES)
  .default("live")
  .describe("live (default): wait for the result; fast or regular: queue the job and return it pending, to read later with get_job.");

/**
 * The endpoint's params schema as a tool input: the same field validators, with descriptions, in
 * a strict object of its own. The shared object's error map says "must be an object" for unknown
 * keys (POST /v1/jobs names them through fieldIssues); the SDK shows this message to the caller.
 */
function toolInputSchema(endpoint: Endpoint): z.ZodObject {
  const fields = PARAMS_SCHEMAS[endpoint].shape as Record<string, z.ZodType>;
  const shape = {
    ...Object.fromEntries(
      Object.entries(fields).map(([name, schema]) => {
        const doc = FIELD_DOCS[name];
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

const jobSchema = z
  .looseObject({
    id: z.string(),
    endpoint: z.enum(ENDPOINTS),
    queue: z.enum(QUEUES),
    status: z.enum(JOB_STATUSES),
    params: z.record(z.string(), z.unknown()),
    credits: z.number().int().min(0).describe("Credits charged; 0 when failed or not final yet."),
    latencyMs: z.number().nullable(),
    error: z.string().nullable().describe("Why the job failed, else null."),
    attempts: z.number().int().min(0),
    createdAt: z.string(),
    completedAt: z.string().nullable(),
  })
  .describe("The job.");

/** structuredContent of every tool: the same object GET /v1/jobs/{jobId} returns. */
export const jobResponseSchema = z.object({
  job: jobSchema,
  result: z
    .record(z.string(), z.unknown())
    .nullable()
    .describe("The structured result, with search_parameters and the result blocks; null unless completed."),
});
