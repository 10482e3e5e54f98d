// Placeholder until its extractor lands (issue 3); replaced by the real module.
import type { RelatedQuestion } from "@serp/shared";
import type { Document } from "../../dom.js";
export function extractRelatedQuestions(_doc: Document): RelatedQuestion[] {
  return [];
}
