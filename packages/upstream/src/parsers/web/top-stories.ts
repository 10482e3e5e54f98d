// Placeholder until its extractor lands (issue 3); replaced by the real module.
import type { TopStory } from "@serp/shared";
import type { Document } from "../../dom.js";
export function extractTopStories(_doc: Document): TopStory[] {
  return [];
}
