// Placeholder until its parser lands (issue 3); replaced by the real module.
import type { ImagesBlocks } from "@serp/shared";
export function parseImages(_html: string): ImagesBlocks {
  throw new Error("web-images parser not implemented");
}
