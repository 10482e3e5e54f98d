import { z } from "zod";
import { COUNTRY_CODES, normalizeCountry } from "./countries.js";
import { ENDPOINTS, QUEUES, type Endpoint } from "./endpoints.js";

/** An error message that says "is required" when the field is missing, else `text`. */
function msg(text: string) {
  return (issue: { input?: unknown }) => (issue.input === undefined ? "is required" : text);
}

/** Field rules of SPEC §2.2. Each one is the validator, the type and (later) the OpenAPI schema. */
export const querySchema = z
  .string({ error: msg("must be a string") })
  .trim()
  .min(1, { error: msg("must not be empty") })
  .max(500, { error: msg("must be at most 500 characters") });

export const countrySchema = z
  .enum(COUNTRY_CODES, { error: msg(`must be one of: ${COUNTRY_CODES.join(", ")}`) })
  .transform(normalizeCountry);

export const languageSchema = z
  .string({ error: msg("must be a string") })
  .regex(/^[A-Za-z]{2}$/, { error: msg("must be two ASCII letters") })
  .transform((v) => v.toLowerCase());

export const deviceSchema = z.enum(["desktop", "mobile"], { error: msg("must be desktop or mobile") });

export const locationSchema = z
  .string({ error: msg("must be a string") })
  .trim()
  .min(2, { error: msg("must be at least 2 characters") })
  .max(200, { error: msg("must be at most 200 characters") });

export const UULE_PATTERN = /^[aw][+ ][A-Za-z0-9+/_=-]{4,1000}$/;
export const uuleSchema = z.string({ error: msg("must be a string") }).regex(UULE_PATTERN, {
  error: "must match ^[aw][+ ][A-Za-z0-9+/_=-]{4,1000}$",
});

export const productIdSchema = z
  .string({ error: msg("must be a string") })
  .trim()
  .min(1, { error: msg("must not be empty") })
  .max(100, { error: msg("must be at most 100 characters") });

function pageSchema(max: number) {
  return z
    .int({ error: msg("must be an integer") })
    .min(1, { error: msg("must be at least 1") })
    .max(max, { error: msg(`must be at most ${max}`) });
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
  });
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
  .max(2048, { error: msg("must be at most 2048 characters") });

function variant<E extends Endpoint>(endpoint: E) {
  return z.strictObject({
    endpoint: z.literal(endpoint),
    params: PARAMS_SCHEMAS[endpoint],
    queue: z.enum(QUEUES, { error: msg("must be live, fast or regular") }).default("fast"),
    postbackUrl: postbackUrlSchema.optional(),
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
