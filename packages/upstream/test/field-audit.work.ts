/**
 * The page reading behind field-audit.test.ts, run in a Node process of its own (./in-node.ts): what
 * the field audit's detectors (bench/field-audit.ts) say of hand-checked cards on captured pages,
 * and the pictures of an image page. The assertions stay in the test file.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadPage } from "../../../bench/field-audit-page.js";
import { organicShown, placeShown, webBlocksShown } from "../../../bench/field-audit.js";

type Items = Parameters<typeof organicShown>[1];

export function fieldAuditWork(fixturesDir: string, calls: { organic: Items; clinics: Items; hotels: Items }) {
  const load = (file: string) => loadPage(readFileSync(join(fixturesDir, file), "utf8"));
  const coffee = load("web/coffee-desktop-2023.html");
  return {
    /** Each organic item's fields shown on the coffee page, null where its card was not found. */
    organic: organicShown(coffee, calls.organic).map((shown) => shown ?? null),
    blocks: webBlocksShown(coffee),
    clinics: placeShown(load("web/abortion-near-me-desktop-2023.html"), calls.clinics).map((shown) => shown ?? null),
    hotels: placeShown(load("web/hotels-nyc-desktop-2023.html"), calls.hotels).map((shown) => shown ?? null),
    /** The image page's `<img>` elements, as tag name and attributes (all the detectors read of them). */
    images: load("images/hatsune-miku-images-ja-2025.html")
      .all.filter((e) => e.tagName === "img")
      .map(({ tagName, attrs }) => ({ tagName, attrs })),
  };
}

export type FieldAuditWork = ReturnType<typeof fieldAuditWork>;
