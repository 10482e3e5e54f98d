/**
 * Result shapes. Each kind's blocks are a Zod schema in its module (./kinds), which also exports
 * the types inferred from it (NewsItem, WebSearchBlocks, …). News and local items are exactly
 * SPEC §2.5; the other kinds use the reference API's block and field names (DECISIONS.md,
 * Results). A field the page does not show is left out.
 */
import { z } from "zod";
import type { Endpoint } from "./endpoints.js";
import { PAGE_LAYOUTS, type ServedLayout } from "./fields.js";
import type { KINDS } from "./kinds/index.js";

/** `search_parameters` of SPEC §2.5, at the head of every result (see ./build-result.ts). */
export const searchParametersSchema = z.object({
  engine: z.string().meta({ example: "web_news" }),
  query: z.string(),
  country: z.string(),
  language: z.string(),
  page: z.int(),
  device: z.string().optional(),
  location: z.string().optional(),
  uule: z.string().optional(),
  product_id: z.string().optional(),
  layout: z.enum(PAGE_LAYOUTS).optional().meta({ description: "The layout asked for (web search, news, images): full, light or any" }),
});
export type SearchParameters = z.infer<typeof searchParametersSchema>;

/** The blocks each endpoint's parser returns. */
export type BlocksByEndpoint = { [E in Endpoint]: z.infer<(typeof KINDS)[E]["blocks"]> };

/** The page a result came from (docs/LAYOUTS.md): `full`, or `light` (the basic or feature-phone page, without AI overview, top stories or knowledge panel). */
export const servedLayoutSchema = z
  .enum(["full", "light"] as const satisfies readonly ServedLayout[])
  .meta({ description: "The results page this result came from: full (the page a browser shows) or light (the basic or feature-phone page; see docs/LAYOUTS.md)" });

export type JobResult = { search_parameters: SearchParameters; layout?: ServedLayout } & Record<string, unknown>;
