// Placeholder until its parser lands (issue 3); replaced by the real module.
import type { SellersBlocks } from "@serp/shared";
export function parseSellers(_html: string): SellersBlocks {
  throw new Error("web-shopping-product parser not implemented");
}
