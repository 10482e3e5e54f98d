/**
 * The organic audit's data (organic.ts), apart from its detectors so that a reader of its figures
 * (organic-fields.test.ts, under Jest) loads no parser: the field families, an audited result as
 * plain data, and whether a result's JSON has a field.
 */
import type { OrganicResult } from "@serp/shared";

/** The field families of the audit, in the order the table prints them. */
export const FIELDS = ["date", "rich_snippet", "sitelinks", "favicon", "thumbnail", "snippet_highlighted_words", "redirect_link"] as const;
export type Field = (typeof FIELDS)[number];

/** An organic result and what its card shows, as plain data (it crosses processes as JSON). */
export interface AuditedResult {
  page: string;
  result: OrganicResult;
  /** Whether its card was found: the largest element around its title link holding no other titled link. */
  card: boolean;
  /** The fields the card shows. */
  shows: Field[];
}

/** Whether a result's JSON has the field. */
export function hasField(r: OrganicResult, field: Field): boolean {
  const v = (r as Record<string, unknown>)[field];
  return v !== undefined && !(Array.isArray(v) && v.length === 0);
}
