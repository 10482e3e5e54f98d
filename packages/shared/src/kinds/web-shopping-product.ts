/** web-shopping-product: every seller's offer for a shopping product. */
import { z } from "zod";
import { paramsObject, productIdSchema, regional } from "../fields.js";
import { defineKind } from "./kind.js";

export const sellerSchema = z.object({
  position: z.int(),
  name: z.string(),
  link: z.string().optional().meta({ description: "The merchant's offer page (the redirect's adurl when the row links through one)" }),
  tracking_link: z.string().optional().meta({ description: "The search engine's click redirect (/aclk?…), when the row links through one" }),
  base_price: z.string().optional(),
  extracted_base_price: z.number().optional(),
  shipping: z.string().optional(),
  total_price: z.string().optional(),
  extracted_total_price: z.number().optional(),
  details: z.string().optional(),
  /** The merchant's own rating line, e.g. "90% positivos" → 90. */
  positive_reviews_percent: z.number().optional(),
  /** How many reviews the merchant (not the product) has. */
  reviews: z.int().optional(),
});
export type Seller = z.infer<typeof sellerSchema>;

export const sellersBlocksSchema = z.object({ product_title: z.string().optional(), sellers: z.array(sellerSchema) });
export type SellersBlocks = z.infer<typeof sellersBlocksSchema>;

export const webShoppingProduct = defineKind({
  params: paramsObject({ product_id: productIdSchema, ...regional }),
  blocks: sellersBlocksSchema,
  credits: {
    of: (result) => {
      const sellers = (result as { sellers?: unknown } | undefined)?.sellers;
      return Math.max(1, Math.ceil((Array.isArray(sellers) ? sellers.length : 0) / 10));
    },
    words: "1 credit per 10 sellers returned (minimum 1)",
  },
  tool: {
    title: "Shopping product sellers",
    returns:
      "Every seller's offer for a shopping product_id: sellers, each with name, link, base and total price.",
  },
});
