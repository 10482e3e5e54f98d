// Placeholder until its parser lands (issue 3); replaced by the real module.
import type { ProductInfoBlocks } from "@serp/shared";
export function parseProductInfo(_html: string): ProductInfoBlocks {
  throw new Error("web-shopping-product-info parser not implemented");
}
