// Placeholder until its parser lands (issue 3); replaced by the real module.
import type { LocalBlocks, LocalPlace } from "@serp/shared";
import type { Document } from "../dom.js";
export function extractLocalPack(_doc: Document): { places: LocalPlace[]; more_locations_link?: string } | undefined {
  return undefined;
}
export function parseLocal(_html: string): LocalBlocks {
  throw new Error("web-local parser not implemented");
}
