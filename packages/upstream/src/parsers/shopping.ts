// Placeholder until its parser lands (issue 3); replaced by the real module.
import type { ShoppingBlocks } from "@serp/shared";
export function parseShopping(_html: string): ShoppingBlocks {
  throw new Error("web-shopping-search parser not implemented");
}
