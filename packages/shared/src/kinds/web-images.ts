/** web-images: image results for a query. */
import { z } from "zod";
import { UNBOUNDED_PAGE_MAX, layoutSchema, located, pageSchema, paramsObject, querySchema, regional } from "../fields.js";
import { defineKind } from "./kind.js";

export const imageResultSchema = z.object({
  position: z.int(),
  title: z.string().optional(),
  link: z.string().optional(),
  source: z.string().optional(),
  original: z.string().optional(),
  original_width: z.int().optional(),
  original_height: z.int().optional(),
  thumbnail: z.string().optional(),
  is_product: z
    .boolean()
    .optional()
    .meta({ description: "Whether the tile shows a product listing (its site line adds the product's availability, `· In stock`); absent where the layout cannot show it" }),
  in_stock: z
    .boolean()
    .optional()
    .meta({ description: "A product tile's availability as its site line shows it (`· In stock`: true; `· Out of stock`: false); absent on other tiles" }),
});
export type ImageResult = z.infer<typeof imageResultSchema>;

export const imagesBlocksSchema = z.object({ images_results: z.array(imageResultSchema) });
export type ImagesBlocks = z.infer<typeof imagesBlocksSchema>;

export const webImages = defineKind({
  params: paramsObject({ query: querySchema, ...regional, page: pageSchema(UNBOUNDED_PAGE_MAX).optional(), ...located, layout: layoutSchema.optional() }),
  blocks: imagesBlocksSchema,
  defaults: { page: 1, layout: "full" },
  tool: {
    title: "Image search",
    returns:
      "Image results for a query: images_results, each with the source page, original image URL and size, and thumbnail. layout says which page answered: full (default) or light (the basic page, asked with layout light or any).",
  },
});
