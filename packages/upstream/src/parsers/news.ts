// Placeholder until its parser lands (issue 3); replaced by the real module.
import type { NewsBlocks } from "@serp/shared";
export function parseNews(_html: string): NewsBlocks {
  throw new Error("web-news parser not implemented");
}
