/** web-local: the local results page, a list of business cards (SPEC §2.5 local items). */
import { z } from "zod";
import { located, pageSchema, paramsObject, querySchema, regional } from "../fields.js";
import { defineKind } from "./kind.js";

/** One business card: SPEC §2.5 local item (shared by local packs and the local results page). */
export const localPlaceSchema = z.object({
  position: z.int(),
  title: z.string(),
  rating: z.number().optional(),
  reviews: z.int().optional(),
  type: z.string().optional(),
  address: z.string().optional(),
  phone: z.string().nullable().optional(),
  hours: z.string().optional(),
  website: z.string().optional(),
});
export type LocalPlace = z.infer<typeof localPlaceSchema>;

export const localBlocksSchema = z.object({ local_results: z.array(localPlaceSchema) });
export type LocalBlocks = z.infer<typeof localBlocksSchema>;

/** Places per page of the local list: the upstream's `start` step, and where page 2's positions begin (21). */
export const LOCAL_RESULTS_PER_PAGE = 20;

export const webLocal = defineKind({
  params: paramsObject({ query: querySchema, ...regional, page: pageSchema(10).optional(), ...located }),
  blocks: localBlocksSchema,
  defaults: { page: 1 },
  pagedList: { list: "local_results", step: LOCAL_RESULTS_PER_PAGE },
  tool: {
    title: "Local business search",
    returns:
      "Local businesses for a query (add a location to search from a place): local_results, each with title, rating, reviews, type, address, phone, hours and website.",
  },
});
