/**
 * The params fields of SPEC §2.2, shared by the result kinds (./kinds): each one is the validator,
 * the type and, through `.meta`, the OpenAPI schema. The MCP tools show a model a shorter wording
 * of each field, kept in `toolDescriptions` so that neither document takes the other's text.
 */
import { z } from "zod";
import { COUNTRY_CODES, normalizeCountry, type Country } from "./countries.js";

/** An error message that says "is required" when the field is missing, else `text`. */
export function msg(text: string) {
  return (issue: { input?: unknown }) => (issue.input === undefined ? "is required" : text);
}

/**
 * The MCP tools' description of a field (read by apps/api's tool catalog). A registry of its own,
 * not a `.meta` key: Zod copies every `.meta` key into both JSON Schemas.
 */
export const toolDescriptions = z.registry<{ description: string }>();

/**
 * C0 and C1 control characters, except tab, line feed and carriage return (whitespace: trimmed at
 * the ends, kept inside). A NUL or an escape in a text field only comes from a broken or hostile
 * client, and a query of nothing else would search for nothing: such a value is refused (400),
 * never stripped into something the caller did not send. The compatibility endpoint uses it too.
 */
export const CONTROL_CHARACTER = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;
const WITHOUT_CONTROL_CHARACTERS = /^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]*$/;
const noControl = { error: msg("must not contain control characters") };

export const querySchema = z
  .string({ error: msg("must be a string") })
  .trim()
  .min(1, { error: msg("must not be empty") })
  .max(500, { error: msg("must be at most 500 characters") })
  .regex(WITHOUT_CONTROL_CHARACTERS, noControl)
  .meta({ description: "The search text (for web-autocomplete, the text typed so far): 1 to 500 characters, trimmed.", example: "coffee" })
  .register(toolDescriptions, { description: "Search text, 1 to 500 characters." });

/** A country as a job stores and shows it: `uk` is `gb`. */
export const storedCountrySchema = z.enum(COUNTRY_CODES.filter((c): c is Country => c !== "uk") as [Country, ...Country[]]);

/** Piped into the stored form, so the field also describes its output (the job's params, the MCP tools' output schema). */
export const countrySchema = z
  .enum(COUNTRY_CODES, { error: msg(`must be one of: ${COUNTRY_CODES.join(", ")}`) })
  .transform(normalizeCountry)
  .pipe(storedCountrySchema)
  .meta({ description: "Two-letter country code the results are for (uk and gb are the same). Default us, or the country of location when it is given.", example: "us" })
  .register(toolDescriptions, {
    description: "Two-letter country code of the results (uk equals gb). Default us, or the country of location when it is given.",
  });

export const languageSchema = z
  .string({ error: msg("must be a string") })
  .regex(/^[A-Za-z]{2}$/, { error: msg("must be two ASCII letters") })
  .toLowerCase()
  .meta({ description: "Two-letter language code of the results page. Default en.", example: "en" })
  .register(toolDescriptions, { description: "Two-letter language code. Default en." });

export const deviceSchema = z
  .enum(["desktop", "mobile"], { error: msg("must be desktop or mobile") })
  .meta({ description: "The results page of a desktop (default) or a mobile browser.", example: "desktop" })
  .register(toolDescriptions, { description: "desktop (default) or mobile." });

/** Which results page may answer (docs/LAYOUTS.md): the full page a browser shows, or the light (basic, feature-phone) one. */
export const PAGE_LAYOUTS = ["full", "light", "any"] as const;
export type PageLayout = (typeof PAGE_LAYOUTS)[number];
/** The page a result came from. */
export type ServedLayout = Exclude<PageLayout, "any">;

export const layoutSchema = z
  .enum(PAGE_LAYOUTS, { error: msg("must be full, light or any") })
  .meta({
    description:
      "Which results page answers: full (default) the page a browser shows, with every block (AI overview, top stories, knowledge panel…); " +
      "light the basic or feature-phone page, which lacks them (docs/LAYOUTS.md); any the full page, else the light one when no full page can be had. " +
      "The result's layout says which page it came from.",
    example: "full",
  })
  .register(toolDescriptions, {
    description: "full (default): the full results page; light: the basic page without AI overview, top stories or knowledge panel; any: full, else light.",
  });

export const locationSchema = z
  .string({ error: msg("must be a string") })
  .trim()
  .min(2, { error: msg("must be at least 2 characters") })
  .max(200, { error: msg("must be at most 200 characters") })
  .regex(WITHOUT_CONTROL_CHARACTERS, noControl)
  .meta({
    description: "Where to search from: a canonical location name, City,Region,Country as GET /locations.json lists them. Not together with uule.",
    example: "Austin,Texas,United States",
  })
  .register(toolDescriptions, {
    description: "Where to search from: a canonical location name City,Region,Country, e.g. Austin,Texas,United States. Not together with uule.",
  });

export const UULE_PATTERN = /^[aw][+ ][A-Za-z0-9+/_=-]{4,1000}$/;
export const uuleSchema = z
  .string({ error: msg("must be a string") })
  .regex(UULE_PATTERN, { error: "must match ^[aw][+ ][A-Za-z0-9+/_=-]{4,1000}$" })
  .meta({ description: "A raw encoded location, sent to the upstream as it is: use location unless you already hold one. Not together with location." })
  .register(toolDescriptions, { description: "Raw encoded location value, sent as is. Prefer location." });

export const productIdSchema = z
  .string({ error: msg("must be a string") })
  .trim()
  .min(1, { error: msg("must not be empty") })
  .max(100, { error: msg("must be at most 100 characters") })
  .regex(WITHOUT_CONTROL_CHARACTERS, noControl)
  .meta({ description: "A shopping product's id, as web-shopping-search results give it (product_id).", example: "13239497633151178800" })
  .register(toolDescriptions, { description: "Shopping product id, as found in web_shopping_search results (product_id)." });

/** Pages of the endpoints the spec gives no bound: the upstream serves no more than 100. */
export const UNBOUNDED_PAGE_MAX = 100;

/** One schema per bound, so the kinds that page alike share it (the job's params list each bound once). */
const pageSchemas = new Map<number, ReturnType<typeof newPageSchema>>();
export function pageSchema(max: number) {
  return pageSchemas.get(max) ?? pageSchemas.set(max, newPageSchema(max)).get(max)!;
}

function newPageSchema(max: number) {
  return z
    .int({ error: msg("must be an integer") })
    .min(1, { error: msg("must be at least 1") })
    .max(max, { error: msg(`must be at most ${max}`) })
    .meta({ description: `The results page, from 1 to ${max}. Default 1.`, example: 1 })
    .register(toolDescriptions, { description: "Results page, from 1." });
}

/** A kind's params: a strict object of its fields, whose errors name unknown fields. */
export function paramsObject<T extends z.core.$ZodLooseShape>(shape: T) {
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? `has unknown field${issue.keys.length > 1 ? "s" : ""}: ${issue.keys.join(", ")}`
        : issue.input === undefined
          ? "is required"
          : "must be an object",
  }).meta({ description: "What to search for, and where and how: the fields this endpoint takes (no others)." });
}

/** Where to search from: a location name or a raw uule, never both (checked by jobRequestSchema). */
export const located = { location: locationSchema.optional(), uule: uuleSchema.optional() };
export const regional = { country: countrySchema.optional(), language: languageSchema.optional() };
