/** web-news: news articles for a query (SPEC §2.5 news items). */
import { z } from "zod";
import { layoutSchema, located, pageSchema, paramsObject, querySchema, regional } from "../fields.js";
import { defineKind } from "./kind.js";

export const newsItemSchema = z.object({
  position: z.int(),
  title: z.string(),
  link: z.string(),
  source: z.string(),
  date: z.string().meta({ description: "Relative age text" }),
  snippet: z.string().nullable(),
  thumbnail: z.string().optional().meta({ description: "The article's picture: an inline image data URI (may be shortened), or the URL the page loads it from (light pages, and pictures a script loads below the first screen)" }),
  favicon: z.string().optional().meta({ description: "The publisher's icon the card shows (a data URI or URL)" }),
  iso_date: z.string().optional().meta({ description: "The date as ISO 8601, where the card shows an absolute date" }),
});
export type NewsItem = z.infer<typeof newsItemSchema>;

export const newsBlocksSchema = z.object({ news_results: z.array(newsItemSchema) });
export type NewsBlocks = z.infer<typeof newsBlocksSchema>;

export const webNews = defineKind({
  params: paramsObject({ query: querySchema, ...regional, page: pageSchema(10).optional(), ...located, layout: layoutSchema.optional() }),
  blocks: newsBlocksSchema,
  defaults: { page: 1, layout: "full" },
  pagedList: { list: "news_results", step: 10 },
  tool: {
    title: "News search",
    returns:
      "News articles for a query: news_results, each with position, title, link, source, date, snippet and thumbnail. layout says which page answered: full (default) or light (the basic page, asked with layout light or any).",
  },
});
