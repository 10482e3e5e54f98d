import { z } from "zod";
import { COUNTRY_CODES, normalizeCountry } from "./countries.js";
import { ENDPOINTS, QUEUES, type Endpoint } from "./endpoints.js";

/** An error message that says "is required" when the field is missing, else `text`. */
function msg(text: string) {
  return (issue: { input?: unknown }) => (issue.input === undefined ? "is required" : text);
}

/**
 * C0 and C1 control characters, except tab, line feed and carriage return (whitespace: trimmed at
 * the ends, kept inside). A NUL or an escape in a text field only comes from a broken or hostile
 * client, and a query of nothing else would search for nothing: such a value is refused (400),
 * never stripped into something the caller did not send. The compatibility endpoint uses it too.
 */
export const CONTROL_CHARACTER = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;
const WITHOUT_CONTROL_CHARACTERS = /^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$/;
const noControl = { error: msg("must not contain control characters") };

/** Field rules of SPEC §2.2. Each one is the validator, the type and (later) the OpenAPI schema. */
export const querySchema = z
  .string({ error: msg("must be a string") })
  .trim()
  .min(1, { error: msg("must not be empty") })
  .max(500, { error: msg("must be at most 500 characters") })
  .regex(WITHOUT_CONTROL_CHARACTERS, noControl)
  .meta({ description: "The search text (for web-autocomplete, the text typed so far): 1 to 500 characters, trimmed.", example: "coffee" });

export const countrySchema = z
  .enum(COUNTRY_CODES, { error: msg(`must be one of: ${COUNTRY_CODES.join(", ")}`) })
  .transform(normalizeCountry)
  .meta({ description: "Two-letter country code the results are for (uk and gb are the same). Default us, or the country of location when it is given.", example: "us" });

export const languageSchema = z
  .string({ error: msg("must be a string") })
  .regex(/^[A-Za-z]{2}$/, { error: msg("must be two ASCII letters") })
  .transform((v) => v.toLowerCase())
  .meta({ description: "Two-letter language code of the results page. Default en.", example: "en" });

export const deviceSchema = z
  .enum(["desktop", "mobile"], { error: msg("must be desktop or mobile") })
  .meta({ description: "The results page of a desktop (default) or a mobile browser.", example: "desktop" });

export const locationSchema = z
  .string({ error: msg("must be a string") })
  .trim()
  .min(2, { error: msg("must be at least 2 characters") })
  .max(200, { error: msg("must be at most 200 characters") })
  .regex(WITHOUT_CONTROL_CHARACTERS, noControl)
  .meta({
    description: "Where to search from: a canonical location name, City,Region,Country as GET /locations.json lists them. Not together with uule.",
    example: "Austin,Texas,United States",
  });

export const UULE_PATTERN = /^[aw][+ ][A-Za-z0-9+/_=-]{4,1000}$/;
export const uuleSchema = z
  .string({ error: msg("must be a string") })
  .regex(UULE_PATTERN, { error: "must match ^[aw][+ ][A-Za-z0-9+/_=-]{4,1000}$" })
  .meta({ description: "A raw encoded location, sent to the upstream as it is: use location unless you already hold one. Not together with location." });

export const productIdSchema = z
  .string({ error: msg("must be a string") })
  .trim()
  .min(1, { error: msg("must not be empty") })
  .max(100, { error: msg("must be at most 100 characters") })
  .regex(WITHOUT_CONTROL_CHARACTERS, noControl)
  .meta({ description: "A shopping product's id, as web-shopping-search results give it (product_id).", example: "13239497633151178800" });

function pageSchema(max: number) {
  return z
    .int({ error: msg("must be an integer") })
    .min(1, { error: msg("must be at least 1") })
    .max(max, { error: msg(`must be at most ${max}`) })
    .meta({ description: `The results page, from 1 to ${max}. Default 1.`, example: 1 });
}

/** Pages of the endpoints the spec gives no bound: the upstream serves no more than 100. */
export const UNBOUNDED_PAGE_MAX = 100;

function paramsObject<T extends z.core.$ZodLooseShape>(shape: T) {
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `has unknown field${issue.keys.length > 1 ? "s" : ""}: ${issue.keys.join(", ")}`
        : issue.input === undefined
          ? "is required"
          : "must be an object",
  }).meta({ description: "What to search for, and where and how: the fields this endpoint takes (no others)." });
}

const located = { location: locationSchema.optional(), uule: uuleSchema.optional() };
const regional = { country: countrySchema.optional(), language: languageSchema.optional() };

export const PARAMS_SCHEMAS = {
  "web-shopping-search": paramsObject({
    query: querySchema, ...regional, page: pageSchema(UNBOUNDED_PAGE_MAX).optional(), ...located,
  }),
  "web-shopping-product": paramsObject({ product_id: productIdSchema, ...regional }),
  "web-shopping-product-info": paramsObject({ product_id: productIdSchema, ...regional }),
  "web-search": paramsObject({
    query: querySchema, ...regional, device: deviceSchema.optional(), page: pageSchema(10).optional(), ...located,
  }),
  "web-images": paramsObject({
    query: querySchema, ...regional, page: pageSchema(UNBOUNDED_PAGE_MAX).optional(), ...located,
  }),
  "web-news": paramsObject({ query: querySchema, ...regional, page: pageSchema(10).optional(), ...located }),
  "web-local": paramsObject({ query: querySchema, ...regional, page: pageSchema(10).optional(), ...located }),
  "web-autocomplete": paramsObject({ query: querySchema, ...regional }),
} as const satisfies Record<Endpoint, z.ZodType>;

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

/** The body of POST /v1/jobs (SPEC §2.1): one strict shape per endpoint. */
export const jobRequestSchema = z
  .discriminatedUnion(
    "endpoint",
    [
      variant("web-shopping-search"),
      variant("web-shopping-product"),
      variant("web-shopping-product-info"),
      variant("web-search"),
      variant("web-images"),
      variant("web-news"),
      variant("web-local"),
      variant("web-autocomplete"),
    ],
    { error: msg(`must be one of: ${ENDPOINTS.join(", ")}`) },
  )
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
