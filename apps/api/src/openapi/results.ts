/**
 * The result shapes in the OpenAPI document: the shared kinds' block schemas (packages/shared/src/kinds),
 * named as components. No second copy: the schemas the types are inferred from are the ones documented.
 */
import { z } from "zod";
import {
  ENDPOINTS, KINDS, localPackPlaceSchema, localPlaceSchema, newsItemSchema, organicResultSchema, richSnippetSchema, searchParametersSchema, servedLayoutSchema,
  type Endpoint,
} from "@serp/shared";
import { named, pascal } from "./named.js";

export const searchParameters = named(searchParametersSchema, "SearchParameters");
named(newsItemSchema, "NewsItem");
named(localPlaceSchema, "LocalPlace");
named(localPackPlaceSchema, "LocalPackPlace");
named(organicResultSchema, "OrganicResult");
named(richSnippetSchema, "RichSnippet");

function resultSchema(e: Endpoint): z.ZodObject {
  return named(
    z.object({ search_parameters: searchParameters, layout: servedLayoutSchema.optional(), ...KINDS[e].blocks.shape }).meta({ description: `Result of a ${e} job` }),
    `${pascal(e)}Result`,
  );
}
export const RESULT_SCHEMAS = Object.fromEntries(ENDPOINTS.map((e) => [e, resultSchema(e)])) as unknown as Record<Endpoint, z.ZodObject>;

export const jobResult = named(
  z.union(ENDPOINTS.map((e) => RESULT_SCHEMAS[e])).meta({ description: "The result; its blocks depend on the job's endpoint" }),
  "JobResult",
);
