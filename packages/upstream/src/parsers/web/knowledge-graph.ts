// Placeholder until its extractor lands (issue 3); replaced by the real module.
import type { KnowledgeGraph } from "@serp/shared";
import type { Document } from "../../dom.js";
export function extractKnowledgeGraph(_doc: Document): KnowledgeGraph | undefined {
  return undefined;
}
