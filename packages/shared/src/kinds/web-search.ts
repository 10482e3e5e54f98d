/**
 * web-search: a web results page, in the reference API's block and field names (DECISIONS.md,
 * Results). A field the page does not show is left out.
 */
import { z } from "zod";
import { deviceSchema, layoutSchema, located, pageSchema, paramsObject, querySchema, regional } from "../fields.js";
import { defineKind } from "./kind.js";
import { localPlaceSchema } from "./web-local.js";

export const linkSchema = z.object({ title: z.string(), link: z.string() });
export type Link = z.infer<typeof linkSchema>;

/** One side of a rich snippet: the line's parts as shown, and the figures they state. */
const richSnippetPartSchema = z.object({
  extensions: z.array(z.string()).meta({ description: "The rich line's parts as the page shows them (`Rating: 4.1`, `In stock`, `Introduced: 15th century`)" }),
  detected_extensions: z
    .record(z.string(), z.union([z.number(), z.string()]))
    .optional()
    .meta({ description: "Figures read off the parts: rating, reviews, votes, price or price_from/price_to with currency" }),
});

export const richSnippetSchema = z.object({
  top: richSnippetPartSchema.optional().meta({ description: "Rating, price or facts lines shown above the snippet" }),
  bottom: richSnippetPartSchema.optional().meta({ description: "Rating, price or facts lines shown below the snippet" }),
});
export type RichSnippet = z.infer<typeof richSnippetSchema>;

export const organicResultSchema = z.object({
  position: z.int(),
  title: z.string(),
  link: z.string(),
  redirect_link: z
    .string()
    .optional()
    .meta({ description: "The search engine's click redirect for the result, as an absolute URL: the /url?q=… its link goes through (basic page), or the /url?…&url=… its click is reported to (full page); `link` is its target" }),
  displayed_link: z.string().optional(),
  source: z.string().optional(),
  thumbnail: z.string().optional().meta({ description: "The result's picture (a URL or data URI), where the page shows one" }),
  favicon: z.string().optional().meta({ description: "The site's icon shown beside its name (a URL or data URI)" }),
  snippet: z.string().optional(),
  snippet_highlighted_words: z
    .array(z.string())
    .optional()
    .meta({ description: "The words the snippet shows in bold, in page order, repeats kept" }),
  date: z.string().optional().meta({ description: "The date shown in front of the snippet (`Mar 3, 2024`, `7 days ago`), taken off the snippet" }),
  sitelinks: z
    .object({ inline: z.array(linkSchema).optional(), expanded: z.array(linkSchema.extend({ snippet: z.string().optional() })).optional() })
    .optional(),
  rich_snippet: richSnippetSchema
    .optional()
    .meta({ description: "Ratings, prices and facts shown under the title or below the snippet: `top` above the snippet, `bottom` below it" }),
});
export type OrganicResult = z.infer<typeof organicResultSchema>;

export const adResultSchema = z.object({
  position: z.int(),
  block_position: z.enum(["top", "bottom", "middle", "right"]),
  title: z.string(),
  /** When absent, the click redirect is in `tracking_link`. */
  link: z.string().optional().meta({ description: "Where the ad leads; absent when the page shows only the click redirect" }),
  displayed_link: z.string().optional(),
  tracking_link: z.string().optional().meta({ description: "The search engine's click redirect (/aclk?…), never the destination" }),
  description: z.string().optional(),
  source: z.string().optional(),
  sitelinks: z.array(linkSchema).optional(),
});
export type AdResult = z.infer<typeof adResultSchema>;

/** Which of the overview's `references` a text block or list item cites (their `index`es), where the page says. */
const referenceIndexes = z
  .array(z.int())
  .optional()
  .meta({ description: "Indexes (in `references`) of the sources the text cites, from the citation the page shows after it" });

export const aiOverviewSchema = z.object({
  text_blocks: z
    .array(
      z.object({
        type: z.enum(["paragraph", "list", "heading"]),
        snippet: z.string().optional(),
        /** Words the overview highlights in the snippet. */
        snippet_highlighted_words: z.array(z.string()).optional(),
        /** List items; `title` is the bold lead-in some items start with (`Sunlight is White Light:`). */
        list: z.array(z.object({ title: z.string().optional(), snippet: z.string(), reference_indexes: referenceIndexes })).optional(),
        reference_indexes: referenceIndexes,
      }),
    )
    .optional()
    .meta({ description: "The overview's text; absent when the page holds only the loading placeholder (see `page_token`)" }),
  references: z
    .array(z.object({ title: z.string(), link: z.string(), snippet: z.string().optional(), source: z.string().optional(), index: z.int() }))
    .optional(),
  page_token: z.string().optional().meta({
    description:
      "Set instead of the text when the page holds only the overview's loading placeholder (the browser fetches the text after load): the page's continuation token for that later request, short-lived",
  }),
});
export type AiOverview = z.infer<typeof aiOverviewSchema>;

export const relatedQuestionSchema = z.object({
  question: z.string(),
  snippet: z.string().optional().meta({ description: "The answer's text (a list answer: its heading), where the page shows one" }),
  list: z.array(z.string()).optional().meta({ description: "Items of an answer shown as a list" }),
  /** Date printed under the answer (`Oct 13, 2025`). */
  date: z.string().optional(),
  title: z.string().optional().meta({ description: "Title of the result the answer quotes" }),
  link: z.string().optional().meta({ description: "Link of the result the answer quotes" }),
  displayed_link: z.string().optional(),
});
export type RelatedQuestion = z.infer<typeof relatedQuestionSchema>;

/** A place of a local or hotel pack: the local item, with the price its card shows, as the reference API's local pack has it. */
export const localPackPlaceSchema = localPlaceSchema.extend({
  price: z.string().optional().meta({ description: "Price the card shows: a price level ($$) or a hotel's nightly price ($152)" }),
});
export type LocalPackPlace = z.infer<typeof localPackPlaceSchema>;

export const topStorySchema = z.object({
  title: z.string(),
  link: z.string(),
  source: z.string().optional(),
  date: z.string().optional(),
  thumbnail: z.string().optional(),
});
export type TopStory = z.infer<typeof topStorySchema>;

/** A post of a "Discussions and forums" card: only what the card shows. */
export const discussionAndForumSchema = z.object({
  position: z.int(),
  title: z.string(),
  link: z.string(),
  /** The site as the card prints it (`www.quora.com`). */
  source: z.string().optional(),
  date: z.string().optional(),
  /** Other facts on the card's line (`51 posts`). */
  extensions: z.array(z.string()).optional(),
});
export type DiscussionAndForum = z.infer<typeof discussionAndForumSchema>;

export const knowledgeGraphSchema = z.object({
  title: z.string(),
  type: z.string().optional(),
  description: z.string().optional(),
  source: z.object({ name: z.string(), link: z.string().optional() }).optional(),
  website: z.string().optional(),
  /** Attribute rows (`Born: …`) in snake_case keys. */
  attributes: z.record(z.string(), z.string()).optional(),
  kgmid: z.string().optional().meta({ description: "The entity's Knowledge Graph id as the page names it (`/m/0cqt90`, `/g/120zzxxj`)" }),
  header_images: z
    .array(z.object({ image: z.string(), source: z.string().optional() }))
    .optional()
    .meta({ description: "The panel's pictures: the image (URL or data URI) and the page it comes from, where that is another site" }),
  people_also_search_for: z
    .array(z.object({ name: z.string(), link: z.string(), image: z.string().optional(), extensions: z.array(z.string()).optional() }))
    .optional()
    .meta({ description: "The panel's \"People also search for\" entities: name, the search the card links to, its picture and any line under the name" }),
});
export type KnowledgeGraph = z.infer<typeof knowledgeGraphSchema>;

/** A video of the page's "Videos" carousel (or its short videos): only what the card shows. */
export const inlineVideoSchema = z.object({
  position: z.int(),
  title: z.string(),
  link: z.string(),
  thumbnail: z.string().optional(),
  channel: z.string().optional().meta({ description: "The channel or account the card names" }),
  duration: z.string().optional().meta({ description: "The length the card prints (`4:28`)" }),
  platform: z.string().optional().meta({ description: "The video site (`YouTube`), as the card prints it or told by the link" }),
  date: z.string().optional(),
});
export type InlineVideo = z.infer<typeof inlineVideoSchema>;

/** A shopping ad (product tile) of the web page, as the reference API's inline `shopping_results`. */
export const inlineShoppingResultSchema = z.object({
  position: z.int(),
  block_position: z.enum(["top", "right"]).meta({ description: "Where the tiles are: above the results, or in the right column" }),
  title: z.string(),
  link: z.string().optional().meta({ description: "The merchant's page; absent when the tile links only through the ad redirect without naming it" }),
  price: z.string().optional().meta({ description: "The price as shown (`$130.00`); a sale's former price is left out" }),
  extracted_price: z.number().optional(),
  source: z.string().optional().meta({ description: "The merchant as the tile names it" }),
  thumbnail: z.string().optional(),
  rating: z.number().optional(),
  reviews: z.int().optional().meta({ description: "The review count the tile shows (`(9k+)` → 9000)" }),
});
export type InlineShoppingResult = z.infer<typeof inlineShoppingResultSchema>;

/** A post of the "What people are saying" section. */
export const perspectiveSchema = z.object({
  title: z.string(),
  link: z.string(),
  author: z.string().optional().meta({ description: "Who posted it (an account, a channel), as the card prints it" }),
  source: z.string().optional().meta({ description: "The site it was posted on (`Reddit`, `YouTube`)" }),
  date: z.string().optional(),
  thumbnail: z.string().optional(),
});
export type Perspective = z.infer<typeof perspectiveSchema>;

export const relatedSearchSchema = z.object({ query: z.string(), link: z.string() });
export type RelatedSearch = z.infer<typeof relatedSearchSchema>;

export const webSearchBlocksSchema = z.object({
  organic_results: z.array(organicResultSchema),
  ads: z.array(adResultSchema).optional(),
  ai_overview: aiOverviewSchema.optional(),
  related_questions: z.array(relatedQuestionSchema).optional(),
  local_results: z.object({ places: z.array(localPackPlaceSchema), more_locations_link: z.string().optional() }).optional(),
  top_stories: z.array(topStorySchema).optional(),
  discussions_and_forums: z.array(discussionAndForumSchema).optional(),
  knowledge_graph: knowledgeGraphSchema.optional(),
  shopping_results: z.array(inlineShoppingResultSchema).optional(),
  inline_videos: z.array(inlineVideoSchema).optional(),
  perspectives: z.array(perspectiveSchema).optional(),
  related_searches: z.array(relatedSearchSchema).optional(),
  search_information: z
    .object({ total_results: z.number().optional(), time_taken_displayed: z.number().optional(), query_displayed: z.string().optional() })
    .optional(),
});
export type WebSearchBlocks = z.infer<typeof webSearchBlocksSchema>;

export const webSearch = defineKind({
  params: paramsObject({
    query: querySchema, ...regional, device: deviceSchema.optional(), page: pageSchema(10).optional(), ...located, layout: layoutSchema.optional(),
  }),
  blocks: webSearchBlocksSchema,
  defaults: { page: 1, device: "desktop", layout: "full" },
  pagedList: { list: "organic_results", step: 10 },
  tool: {
    title: "Web search",
    returns:
      "Web search results for a query: organic_results (title, link, snippet), ads, ai_overview, related_questions (question, " +
      "and the answer's snippet, title and link where the page shows them), local_results (a local or hotel pack: places with " +
      "rating, reviews, type, address and the price a card shows), top_stories, discussions_and_forums (forum posts: title, " +
      "link, source), knowledge_graph, shopping_results (shopping ads: title, price, merchant), inline_videos, perspectives (\"What people are saying\" posts) and related_searches. layout says which page answered: full (default) or light (the basic page, asked with layout light or any).",
  },
});
