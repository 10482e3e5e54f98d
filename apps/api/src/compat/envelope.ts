/**
 * The compatibility search's answer (JSON), as a schema: the top level of the envelope response.ts
 * builds (`search_metadata`, `search_parameters`, `search_information`, then the result blocks, open
 * to whatever an engine's blocks hold). The search routes and the archive answer through their typed
 * reply, which takes a body this schema accepts, and the OpenAPI document shows it (CompatSearch):
 * what the envelope is and what the document says are one declaration.
 */
import { z } from "zod";
import { servedLayoutSchema } from "@serp/shared";

const resultList = z.array(z.object({}).catchall(z.unknown()));

export const compatEnvelopeSchema = z
  .object({
    search_metadata: z
      .object({
        id: z.string(),
        status: z.string().meta({ example: "Success" }),
        json_endpoint: z.string().optional(),
        raw_html_file: z.string().optional().meta({
          description: "Where the upstream page of a completed search is served (/searches/{id}.html), while it is kept (RAW_HTML_RETENTION_SECONDS)",
        }),
        created_at: z.string().optional(),
        // null until the search is final (response.ts).
        processed_at: z.string().nullable().optional(),
        cached: z.boolean().optional().meta({ description: "true when the result cache answered the search (no upstream request; billed the cache-hit price)" }),
        total_time_taken: z.number().optional(),
        layout: servedLayoutSchema.optional().meta({
          description: "The results page the result came from: full (engine web/google), or light (engine web_light/google_light, or the basic page; docs/LAYOUTS.md)",
        }),
      })
      .catchall(z.unknown()),
    search_parameters: z.object({}).catchall(z.unknown()),
    search_information: z.object({}).catchall(z.unknown()).optional(),
    organic_results: resultList.optional(),
    ads: resultList.optional(),
    related_questions: resultList.optional(),
    related_searches: resultList.optional(),
    top_stories: resultList.optional(),
    knowledge_graph: z.object({}).catchall(z.unknown()).optional().meta({
      description:
        "The knowledge panel (web search): title, type, kgmid, description, source, website, header_images, people_also_search_for, attributes, and each attribute row again as a key of its own (`born`)",
    }),
    ai_overview: z.object({}).catchall(z.unknown()).optional().meta({
      description: "text_blocks (with reference_indexes where the page cites sources) and references; only page_token while the page holds the loading placeholder",
    }),
    inline_videos: resultList.optional().meta({ description: "Web search: the page's video carousel (title, link, thumbnail, channel, duration, platform, date)" }),
    perspectives: resultList.optional().meta({ description: "Web search: \"What people are saying\" posts (title, link, author, source, date, thumbnail)" }),
    local_results: z.unknown().optional(),
    discussions_and_forums: resultList.optional(),
    news_results: resultList.optional(),
    images_results: resultList.optional(),
    shopping_results: resultList.optional().meta({
      description: "Shopping results; on web search, the page's shopping ads (position, block_position, title, link, price, extracted_price, source, thumbnail, rating, reviews)",
    }),
    sellers: resultList.optional(),
    product_results: z.object({}).catchall(z.unknown()).optional(),
    suggestions: resultList.optional(),
    pagination: z.object({}).catchall(z.unknown()).optional(),
    error: z.string().optional().meta({ description: "Set (with status 200) when the search returned no results" }),
  })
  .catchall(z.unknown())
  .meta({ description: "Shaped like the reference search-results API; result blocks depend on the engine" });

/** A compatibility search's JSON answer. */
export type CompatEnvelope = z.input<typeof compatEnvelopeSchema>;
/** Its `search_metadata`. */
export type CompatMetadata = CompatEnvelope["search_metadata"];
