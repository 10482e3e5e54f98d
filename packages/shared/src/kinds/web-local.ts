/** web-local: the local results page, a list of business cards (SPEC §2.5 local items). */
import { z } from "zod";
import { located, pageSchema, paramsObject, querySchema, regional } from "../fields.js";
import { defineKind } from "./kind.js";

/** One business card: SPEC §2.5 local item (shared by local packs and the local results page). */
export const localPlaceSchema = z.object({
  position: z.int(),
  title: z.string(),
  place_id: z.string().optional().meta({ description: "The place's id on the upstream (its CID, a decimal string), where the card carries it" }),
  data_id: z.string().optional().meta({ description: "The place's feature id (`0x…:0x…`), where the card carries it" }),
  rating: z.number().optional(),
  reviews: z.int().optional(),
  reviews_original: z.string().optional().meta({ description: "The review count as the card shows it (`(1.4K)`, `(1,5 mil)`)" }),
  type: z.string().optional(),
  address: z.string().optional(),
  phone: z.string().nullable().optional(),
  hours: z.string().optional(),
  years_in_business: z.string().optional().meta({ description: "How long the business has run, as the card says it (`10+ years in business`)" }),
  description: z.string().optional().meta({ description: "The card's description, service line or review quote" }),
  service_options: z
    .record(z.string(), z.boolean())
    .optional()
    .meta({ description: "Service options the card lists (`dine_in`, `takeout`, `delivery`…): true when offered, false when the card says no" }),
  thumbnail: z.string().optional().meta({ description: "The card's photo (a URL or a data URI), where the page carries it" }),
  gps_coordinates: z
    .object({ latitude: z.number(), longitude: z.number() })
    .optional()
    .meta({ description: "Where the page's map puts the place (its map data keyed by the card's place id, or a pin on the card), in degrees" }),
  website: z.string().optional(),
});
export type LocalPlace = z.infer<typeof localPlaceSchema>;

/** A sponsored card of the local results: the same card, marked as an ad by the page; never a place. */
export const localAdSchema = localPlaceSchema.omit({ position: true }).extend({
  block_position: z.int().meta({ description: "Position of the ad among the page's sponsored cards" }),
});

export const localBlocksSchema = z.object({
  local_results: z.array(localPlaceSchema),
  local_ads: z.array(localAdSchema).optional().meta({ description: "Sponsored business cards shown above or among the places (not counted as places)" }),
});
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
