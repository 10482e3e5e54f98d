/** web-autocomplete: search suggestions for the text typed so far. */
import { z } from "zod";
import { paramsObject, querySchema, regional } from "../fields.js";
import { defineKind } from "./kind.js";

export const suggestionSchema = z.object({ value: z.string(), relevance: z.number().optional(), type: z.string().optional() });
export type Suggestion = z.infer<typeof suggestionSchema>;

export const autocompleteBlocksSchema = z.object({
  suggestions: z.array(suggestionSchema),
  /** How the upstream scores the typed text itself (client=chrome `google:verbatimrelevance`). */
  verbatim_relevance: z.number().optional(),
});
export type AutocompleteBlocks = z.infer<typeof autocompleteBlocksSchema>;

export const webAutocomplete = defineKind({
  params: paramsObject({ query: querySchema, ...regional }),
  blocks: autocompleteBlocksSchema,
  tool: { title: "Autocomplete suggestions", returns: "Search suggestions for text typed so far: suggestions." },
});
