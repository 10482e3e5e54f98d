// Placeholder until its parser lands (issue 3); replaced by the real module.
import type { AutocompleteBlocks } from "@serp/shared";
export function parseAutocomplete(_body: string): AutocompleteBlocks {
  throw new Error("web-autocomplete parser not implemented");
}
