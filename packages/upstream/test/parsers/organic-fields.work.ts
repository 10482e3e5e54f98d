/**
 * The parsing behind organic-fields.test.ts, run in a Node process of its own (../in-node.ts): every
 * organic result of the shared pages, whether its card was found and the fields the card shows
 * (../organic-cards.ts). The assertions stay in the test file.
 */
import type { OrganicResult } from "@serp/shared";
import { auditPage, auditPages, type Field } from "../organic-cards.js";

/** An audited result as plain data: the card found or not, and what it shows as a list. */
export interface AuditedResultData {
  page: string;
  result: OrganicResult;
  card: boolean;
  shows: Field[];
}

export function organicFieldsWork(): AuditedResultData[] {
  return auditPages()
    .flatMap(auditPage)
    .map(({ page, result, card, shows }) => ({ page, result, card: card !== undefined, shows: [...shows] }));
}
