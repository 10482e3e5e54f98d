// Placeholder until its parser lands (issue 3); replaced by the real module.
import type { WebSearchBlocks } from "@serp/shared";
export function parseWebSearch(_html: string): WebSearchBlocks {
  throw new Error("web-search parser not implemented");
}
