// Placeholder until its parser lands (issue 3); replaced by the real module.
import type { LocalBlocks } from "@serp/shared";
export function parseLocal(_html: string): LocalBlocks {
  throw new Error("web-local parser not implemented");
}
