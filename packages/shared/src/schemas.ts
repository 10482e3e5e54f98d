import { z } from "zod";
import { ENDPOINTS, QUEUES, type Endpoint } from "./endpoints.js";
import { msg } from "./fields.js";
import { KINDS } from "./kinds/index.js";

export {
  CONTROL_CHARACTER, PAGE_LAYOUTS, UNBOUNDED_PAGE_MAX, UULE_PATTERN, countrySchema, deviceSchema, languageSchema, layoutSchema, locationSchema,
  productIdSchema, querySchema, toolDescriptions, uuleSchema,
} from "./fields.js";
export type { PageLayout, ServedLayout } from "./fields.js";

/** Each endpoint's params schema (SPEC §2.2), from its kind module. */
export const PARAMS_SCHEMAS = Object.fromEntries(ENDPOINTS.map((e) => [e, KINDS[e].params])) as {
  readonly [E in Endpoint]: (typeof KINDS)[E]["params"];
};

export type ParamsInput<E extends Endpoint> = z.output<(typeof PARAMS_SCHEMAS)[E]>;

const postbackUrlSchema = z
  .url({ protocol: /^https?$/, error: "must be an absolute http(s) URL" })
  .max(2048, { error: msg("must be at most 2048 characters") })
  .meta({
    description: "fast and regular only: where the final job is POSTed, signed per Standard Webhooks. http(s) on a public address.",
    example: "https://example.com/hooks/serp",
  });

/** The longest `cacheMaxAgeSeconds` a job may ask for; the cache keeps nothing longer than CACHE_TTL_SECONDS anyway. */
export const CACHE_MAX_AGE_LIMIT_SECONDS = 30 * 86_400;

/**
 * Opt-in to the result cache, per job: a completed result of the same search (endpoint and
 * normalised params) at most this many seconds old answers the job, billed CACHE_HIT_CREDITS.
 * 0 always fetches afresh and refreshes the cache. Absent: no cache, as before.
 */
export const cacheMaxAgeSchema = z
  .int({ error: msg(`must be an integer number of seconds from 0 to ${CACHE_MAX_AGE_LIMIT_SECONDS}`) })
  .min(0, { error: msg(`must be an integer number of seconds from 0 to ${CACHE_MAX_AGE_LIMIT_SECONDS}`) })
  .max(CACHE_MAX_AGE_LIMIT_SECONDS, { error: msg(`must be an integer number of seconds from 0 to ${CACHE_MAX_AGE_LIMIT_SECONDS}`) })
  .meta({
    description:
      "Answer from the result cache when the same search (endpoint and normalised params) completed at most this many seconds ago: " +
      "the job is completed at once, billed the cache-hit price (1 credit by default), and says `cacheHit: true`. " +
      "0 fetches afresh and refreshes the cache. Without it the job never reads the cache. Results are kept at most the " +
      "deployment's CACHE_TTL_SECONDS (default 3600), so a longer age finds nothing older than that.",
    example: 3600,
  });

function variant<E extends Endpoint>(endpoint: E) {
  return z.strictObject({
    endpoint: z.literal(endpoint).meta({ description: "Which search to run: it decides the params taken and the blocks of the result." }),
    params: PARAMS_SCHEMAS[endpoint],
    queue: z
      .enum(QUEUES, { error: msg("must be live, fast or regular") })
      .default("fast")
      .meta({
        description:
          "live: the answer waits for the result (200). fast (default) or regular: answered 202 at once; poll GET /v1/jobs/{jobId} " +
          "or give a postbackUrl. fast is served before regular.",
        example: "live",
      }),
    postbackUrl: postbackUrlSchema.optional(),
    cacheMaxAgeSeconds: cacheMaxAgeSchema.optional(),
  });
}
/** One variant per endpoint, each keeping its own endpoint and params types. */
type Variant = { [E in Endpoint]: ReturnType<typeof variant<E>> }[Endpoint];

/** The body of POST /v1/jobs (SPEC §2.1): one strict shape per endpoint. */
export const jobRequestSchema = z
  .discriminatedUnion("endpoint", ENDPOINTS.map((e) => variant(e)) as [Variant, ...Variant[]], {
    error: msg(`must be one of: ${ENDPOINTS.join(", ")}`),
  })
  .superRefine((req, ctx) => {
    if (req.postbackUrl && req.queue === "live") {
      ctx.addIssue({ code: "custom", path: ["postbackUrl"], message: "is only for the fast and regular queues" });
    }
    const params = req.params as { location?: string; uule?: string };
    if (params.location !== undefined && params.uule !== undefined) {
      ctx.addIssue({ code: "custom", path: ["params", "uule"], message: "cannot be combined with location" });
    }
  });
export type JobRequestInput = z.output<typeof jobRequestSchema>;
