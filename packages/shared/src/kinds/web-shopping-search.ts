/** web-shopping-search: shopping products for a query. */
import { z } from "zod";
import { UNBOUNDED_PAGE_MAX, located, pageSchema, paramsObject, querySchema, regional } from "../fields.js";
import { defineKind } from "./kind.js";

export const shoppingResultSchema = z.object({
  position: z.int(),
  title: z.string(),
  product_id: z.string().optional(),
  product_link: z.string().optional(),
  link: z.string().optional().meta({ description: "The merchant's page (the redirect's adurl when the card links through one)" }),
  tracking_link: z.string().optional().meta({ description: "The search engine's click redirect (/aclk?…), when the card links through one" }),
  source: z.string().optional(),
  price: z.string().optional(),
  extracted_price: z.number().optional(),
  old_price: z.string().optional(),
  extracted_old_price: z.number().optional(),
  rating: z.number().optional(),
  reviews: z.int().optional(),
  delivery: z.string().optional(),
  extensions: z.array(z.string()).optional(),
  thumbnail: z.string().optional().meta({ description: "The product's picture: a URL, or the data URI the page inlines or its script sets" }),
  /** Description text some layouts show under the product. */
  snippet: z.string().optional(),
  /** Stores the product is compared across, as shown (`"25+"`), and the link to that comparison. */
  number_of_comparisons: z.string().optional(),
  comparison_link: z.string().optional(),
});
export type ShoppingResult = z.infer<typeof shoppingResultSchema>;

export const shoppingBlocksSchema = z.object({ shopping_results: z.array(shoppingResultSchema) });
export type ShoppingBlocks = z.infer<typeof shoppingBlocksSchema>;

export const webShoppingSearch = defineKind({
  params: paramsObject({ query: querySchema, ...regional, page: pageSchema(UNBOUNDED_PAGE_MAX).optional(), ...located }),
  blocks: shoppingBlocksSchema,
  defaults: { page: 1 },
  tool: {
    title: "Shopping search",
    returns:
      "Shopping products for a query: shopping_results with title, price, merchant, rating and product_id (pass product_id to web_shopping_product or web_shopping_product_info).",
  },
});
