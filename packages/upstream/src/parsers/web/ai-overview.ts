// Placeholder until its extractor lands (issue 3); replaced by the real module.
import type { AiOverview } from "@serp/shared";
import type { Document } from "../../dom.js";
export function extractAiOverview(_doc: Document): AiOverview | undefined {
  return undefined;
}
