/**
 * Result shapes for the OpenAPI document: SPEC §2.5 for news and local, the reference API's block
 * names for the rest. packages/shared's TypeScript types stay the source; the checks at the end
 * fail the build when a schema drifts from them.
 */
import { z } from "zod";
import {
  ENDPOINTS,
  type BlocksByEndpoint,
  type Endpoint,
  type LocalPackPlace,
  type LocalPlace,
  type NewsItem,
  type SearchParameters,
} from "@serp/shared";
import { assert, named, pascal, type Same } from "./named.js";

export const searchParameters = named(
  z.object({
    engine: z.string().meta({ example: "web_news" }),
    query: z.string(),
    country: z.string(),
    language: z.string(),
    page: z.int(),
    device: z.string().optional(),
    location: z.string().optional(),
    uule: z.string().optional(),
    product_id: z.string().optional(),
  }),
  "SearchParameters",
);

const link = z.object({ title: z.string(), link: z.string() });

export const newsItem = named(
  z.object({
    position: z.int(),
    title: z.string(),
    link: z.string(),
    source: z.string(),
    date: z.string().meta({ description: "Relative age text" }),
    snippet: z.string().nullable(),
    thumbnail: z.string().optional().meta({ description: "Inline image data URI, may be shortened" }),
  }),
  "NewsItem",
);

export const localPlace = named(
  z.object({
    position: z.int(),
    title: z.string(),
    rating: z.number().optional(),
    reviews: z.int().optional(),
    type: z.string().optional(),
    address: z.string().optional(),
    phone: z.string().nullable().optional(),
    hours: z.string().optional(),
    website: z.string().optional(),
  }),
  "LocalPlace",
);

/** A place of a web results page's local or hotel pack: the local item and the price its card shows. */
export const localPackPlace = named(
  localPlace.extend({
    price: z.string().optional().meta({ description: "Price the card shows: a price level ($$) or a hotel's nightly price ($152)" }),
  }),
  "LocalPackPlace",
);

const organicResult = z.object({
  position: z.int(),
  title: z.string(),
  link: z.string(),
  displayed_link: z.string().optional(),
  source: z.string().optional(),
  snippet: z.string().optional(),
  date: z.string().optional(),
  sitelinks: z.object({ inline: z.array(link).optional(), expanded: z.array(link.extend({ snippet: z.string().optional() })).optional() }).optional(),
});

const adResult = z.object({
  position: z.int(),
  block_position: z.enum(["top", "bottom", "middle", "right"]),
  title: z.string(),
  link: z.string().optional().meta({ description: "Where the ad leads; absent when the page shows only the click redirect" }),
  displayed_link: z.string().optional(),
  tracking_link: z.string().optional().meta({ description: "The search engine's click redirect (/aclk?…), never the destination" }),
  description: z.string().optional(),
  source: z.string().optional(),
  sitelinks: z.array(link).optional(),
});

const aiOverview = z.object({
  text_blocks: z.array(
    z.object({
      type: z.enum(["paragraph", "list", "heading"]),
      snippet: z.string().optional(),
      snippet_highlighted_words: z.array(z.string()).optional(),
      list: z.array(z.object({ title: z.string().optional(), snippet: z.string() })).optional(),
    }),
  ),
  references: z
    .array(z.object({ title: z.string(), link: z.string(), snippet: z.string().optional(), source: z.string().optional(), index: z.int() }))
    .optional(),
});

const relatedQuestion = z.object({
  question: z.string(),
  snippet: z.string().optional().meta({ description: "The answer's text (a list answer: its heading), where the page shows one" }),
  list: z.array(z.string()).optional().meta({ description: "Items of an answer shown as a list" }),
  date: z.string().optional(),
  title: z.string().optional().meta({ description: "Title of the result the answer quotes" }),
  link: z.string().optional().meta({ description: "Link of the result the answer quotes" }),
  displayed_link: z.string().optional(),
});

const topStory = z.object({
  title: z.string(),
  link: z.string(),
  source: z.string().optional(),
  date: z.string().optional(),
  thumbnail: z.string().optional(),
});

const discussionAndForum = z.object({
  position: z.int(),
  title: z.string(),
  link: z.string(),
  source: z.string().optional(),
  date: z.string().optional(),
  extensions: z.array(z.string()).optional(),
});

const knowledgeGraph = z.object({
  title: z.string(),
  type: z.string().optional(),
  description: z.string().optional(),
  source: z.object({ name: z.string(), link: z.string().optional() }).optional(),
  website: z.string().optional(),
  attributes: z.record(z.string(), z.string()).optional(),
});

const imageResult = z.object({
  position: z.int(),
  title: z.string().optional(),
  link: z.string().optional(),
  source: z.string().optional(),
  original: z.string().optional(),
  original_width: z.int().optional(),
  original_height: z.int().optional(),
  thumbnail: z.string().optional(),
});

const shoppingResult = z.object({
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
  thumbnail: z.string().optional(),
  snippet: z.string().optional(),
  number_of_comparisons: z.string().optional(),
  comparison_link: z.string().optional(),
});

const seller = z.object({
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
  positive_reviews_percent: z.number().optional(),
  reviews: z.int().optional(),
});

const productInfo = z.object({
  product_id: z.string().optional(),
  title: z.string(),
  description: z.string().optional(),
  specs: z.record(z.string(), z.string()).optional(),
  images: z.array(z.string()).optional(),
  rating: z.number().optional(),
  reviews: z.int().optional(),
  prices: z.array(z.string()).optional(),
  extensions: z.array(z.string()).optional(),
  highlights: z.array(z.string()).optional(),
});

const suggestion = z.object({ value: z.string(), relevance: z.number().optional(), type: z.string().optional() });

/** The result blocks of each endpoint; every result also carries `search_parameters`. */
export const RESULT_BLOCKS = {
  "web-search": {
    organic_results: z.array(organicResult),
    ads: z.array(adResult).optional(),
    ai_overview: aiOverview.optional(),
    related_questions: z.array(relatedQuestion).optional(),
    local_results: z.object({ places: z.array(localPackPlace), more_locations_link: z.string().optional() }).optional(),
    top_stories: z.array(topStory).optional(),
    discussions_and_forums: z.array(discussionAndForum).optional(),
    knowledge_graph: knowledgeGraph.optional(),
    related_searches: z.array(z.object({ query: z.string(), link: z.string() })).optional(),
    search_information: z
      .object({ total_results: z.number().optional(), time_taken_displayed: z.number().optional(), query_displayed: z.string().optional() })
      .optional(),
  },
  "web-news": { news_results: z.array(newsItem) },
  "web-local": { local_results: z.array(localPlace) },
  "web-images": { images_results: z.array(imageResult) },
  "web-shopping-search": { shopping_results: z.array(shoppingResult) },
  "web-shopping-product": { product_title: z.string().optional(), sellers: z.array(seller) },
  "web-shopping-product-info": { product_results: productInfo },
  "web-autocomplete": { suggestions: z.array(suggestion), verbatim_relevance: z.number().optional() },
} as const satisfies Record<Endpoint, z.ZodRawShape>;

function resultSchema(e: Endpoint): z.ZodObject {
  return named(
    z.object({ search_parameters: searchParameters, ...RESULT_BLOCKS[e] }).meta({ description: `Result of a ${e} job` }),
    `${pascal(e)}Result`,
  );
}
export const RESULT_SCHEMAS = Object.fromEntries(ENDPOINTS.map((e) => [e, resultSchema(e)])) as unknown as Record<Endpoint, z.ZodObject>;

export const jobResult = named(
  z.union(ENDPOINTS.map((e) => RESULT_SCHEMAS[e])).meta({ description: "The result; its blocks depend on the job's endpoint" }),
  "JobResult",
);

assert<Same<z.output<typeof searchParameters>, SearchParameters>>();
assert<Same<z.output<typeof newsItem>, NewsItem>>();
assert<Same<z.output<typeof localPlace>, LocalPlace>>();
assert<Same<z.output<typeof localPackPlace>, LocalPackPlace>>();
type BlocksOf<E extends Endpoint> = z.output<z.ZodObject<(typeof RESULT_BLOCKS)[E]>>;
assert<Same<BlocksOf<"web-search">, BlocksByEndpoint["web-search"]>>();
assert<Same<BlocksOf<"web-news">, BlocksByEndpoint["web-news"]>>();
assert<Same<BlocksOf<"web-local">, BlocksByEndpoint["web-local"]>>();
assert<Same<BlocksOf<"web-images">, BlocksByEndpoint["web-images"]>>();
assert<Same<BlocksOf<"web-shopping-search">, BlocksByEndpoint["web-shopping-search"]>>();
assert<Same<BlocksOf<"web-shopping-product">, BlocksByEndpoint["web-shopping-product"]>>();
assert<Same<BlocksOf<"web-shopping-product-info">, BlocksByEndpoint["web-shopping-product-info"]>>();
assert<Same<BlocksOf<"web-autocomplete">, BlocksByEndpoint["web-autocomplete"]>>();
