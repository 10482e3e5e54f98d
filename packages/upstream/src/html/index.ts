/**
 * The one way parsers read HTML: parse5 builds a domhandler tree (`tree.ts`), css-select runs
 * precompiled selectors over it (`select.ts`), found by what each selector requires (`sieve.ts`),
 * parsers locate their blocks by a landmark index of their own (`landmarks.ts`) and read text and
 * attributes off elements (`text.ts`). This layer knows HTML, not the upstream: what the upstream's
 * pages mean (redirect links, counts, prices) is read in `../values.ts`.
 */
export { type AnyNode, type Document, type Element, parseFragment, parseHtml, pageSource, withDocument } from "./tree.js";
export { all, first, matches, scan, scansOf, textOf, type Root, type Scan } from "./select.js";
export { ancestors, attr, closest, hasClass, hiddenByMarkup, text, textLines, textWithout } from "./text.js";
export { everyMatch, landmarkIndex, pageScripts, type LandmarkIndex, type LandmarkSpec, type Landmarks, type Lookup } from "./landmarks.js";
