/** web-shopping-product-info: the details of a shopping product. */
import { z } from "zod";
import { paramsObject, productIdSchema, regional } from "../fields.js";
import { defineKind } from "./kind.js";

export const productInfoSchema = z.object({
  product_id: z.string().optional(),
  title: z.string(),
  description: z.string().optional(),
  specs: z.record(z.string(), z.string()).optional(),
  images: z.array(z.string()).optional(),
  rating: z.number().optional(),
  reviews: z.int().optional(),
  prices: z.array(z.string()).optional(),
  /** Short attributes under "product details" (brand · burners · width …). */
  extensions: z.array(z.string()).optional(),
  /** Bullet points the page lists beside the images. */
  highlights: z.array(z.string()).optional(),
});
export type ProductInfo = z.infer<typeof productInfoSchema>;

export const productInfoBlocksSchema = z.object({ product_results: productInfoSchema });
export type ProductInfoBlocks = z.infer<typeof productInfoBlocksSchema>;

export const webShoppingProductInfo = defineKind({
  params: paramsObject({ product_id: productIdSchema, ...regional }),
  blocks: productInfoBlocksSchema,
  tool: {
    title: "Shopping product details",
    returns:
      "Details of a shopping product_id: product_results with title, description, specs, images, rating and reviews.",
  },
});
