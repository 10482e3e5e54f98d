/**
 * The results count and time the desktop page prints above the results: `About 1,340,000,000
 * results (0.52 seconds)`, `Environ 21 100 000 résultats (0,50 secondes)`, `約 42,600,000 件 （0.20 秒）`.
 * Mobile and basic pages do not show it.
 */
import type { WebSearchBlocks } from "@serp/shared";
import { type Element, text } from "../../html/index.js";

type SearchInformation = NonNullable<WebSearchBlocks["search_information"]>;

/** A number with any thousands separators: `1,340,000`, `21 100 000`, `6’750’000`, `153 000`. */
const COUNT = /\d{1,3}(?:[,.\s\u00a0\u202f'’]\d{3})+|\d+/u;
/** The time in brackets: `(0.52 seconds)`, `(0,50 secondes)`, `（0.20 秒）`, `(0.53s)`. */
const TIME = /[(（]\s*(\d+(?:[.,]\d+)?)/u;

export function extractSearchInformation(stats: Element | undefined): SearchInformation | undefined {
  const line = text(stats);
  if (!line) return undefined;
  const bracket = line.search(/[(（]/u);
  const countPart = bracket >= 0 ? line.slice(0, bracket) : line;
  const info: SearchInformation = {};
  const count = countPart.match(COUNT)?.[0];
  if (count !== undefined) info.total_results = Number(count.replace(/\D/g, ""));
  const time = line.match(TIME)?.[1];
  if (time !== undefined) info.time_taken_displayed = Number(time.replace(",", "."));
  return Object.keys(info).length ? info : undefined;
}
