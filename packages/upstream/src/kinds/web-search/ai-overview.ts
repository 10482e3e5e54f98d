/**
 * The AI overview at the top of the results → `ai_overview`. Two layouts, both inside `#eKIzJc`:
 *
 * - 2025: paragraphs `.rPeykc` and plain `ul` lists in `.WaaZC` blocks; the sources are a list of
 *   `li.LLtSOc` cards beside the text;
 * - 2026: paragraphs `.Y3BBE` (one holding only a bold line is a heading) and `ul`/`ol` lists whose
 *   items open with a bold lead-in; the sources are `li.CyMdWb` cards in the (closed) sources dialog.
 *
 * Citation buttons, images, hidden copies and the "AI Overview" label are not text. When the page
 * only holds the loading placeholder (the overview is fetched after load), there is nothing to read
 * and no overview is returned. Overviews inside "People also ask" answers are not this block.
 */
import type { AiOverview } from "@serp/shared";
import { isTag } from "domhandler";
import {
  all,
  attr,
  closest,
  first,
  hiddenByMarkup,
  landmarkIndex,
  text,
  textOf,
  textWithout,
  type AnyNode,
  type Document,
  type Element,
} from "../../html/index.js";
import { targetUrl } from "../../values.js";

const CONTAINER = {
  /** The overview's slot in the results column (2025–2026): `#eKIzJc`, or its `div[data-mcpr]`. */
  id: "eKIzJc",
  attribute: "data-mcpr",
  /** Overviews answering a "People also ask" question live inside its pair. */
  notInside: "related-question-pair",
} as const;

/** The overview's slot: found in the web page's one landmark sweep (web/index.ts includes this index). */
export const LANDMARKS = landmarkIndex({
  overviewSlot: {
    first: {
      attributes: { id: CONTAINER.id, [CONTAINER.attribute]: true },
      selector: `#${CONTAINER.id}, div[${CONTAINER.attribute}]:not(.${CONTAINER.notInside} *)`,
    },
  },
});

const TEXT = {
  paragraphClasses: new Set(["rPeykc", "Y3BBE"]),
  listTags: new Set(["ul", "ol"]),
  headingTags: new Set(["h2", "h3", "h4"]),
  highlight: "mark",
  leadIn: "strong",
};

/** Never text: the label, error notes, citation buttons, dialogs, media and the source lists. */
const SKIP = {
  tags: new Set(["h1", "button", "svg", "img", "g-dialog", "iframe"]),
  roles: new Set(["button", "dialog", "img"]),
  /** The "AI Overview" label, error notes and the source lists. */
  classes: new Set(["Fzsovc", "YWpX0d", "zVKf0d", "bTFeG"]),
  /** Media never hold source cards either, so the walk does not enter them at all. */
  opaqueTags: new Set(["svg", "img", "iframe", "button"]),
};

/** Source cards: `li.LLtSOc` (2025), `li.CyMdWb` in the closed sources dialog (2026). */
const REFERENCE = {
  itemClasses: new Set(["LLtSOc", "CyMdWb"]),
  link: "a[href]",
  title: ".mNme1d, .Nn35F",
  snippet: ".gxZfx, .vhJ6Pe",
  source: ".R8BTeb, .R0r5R",
} as const;

type TextBlock = AiOverview["text_blocks"][number];
type Reference = NonNullable<AiOverview["references"]>[number];

export function extractAiOverview(doc: Document): AiOverview | undefined {
  const container = LANDMARKS.of(doc).overviewSlot;
  if (!container) return undefined;
  const { blocks, cards } = readOverview(container);
  if (blocks.length === 0) return undefined;
  const references = readReferences(cards);
  return references.length ? { text_blocks: blocks, references } : { text_blocks: blocks };
}

/** A test for "has one of these classes", run on every element of the overview. */
function classTest(classes: Iterable<string>): (el: Element) => boolean {
  const re = new RegExp(`(?:^|\\s)(?:${[...classes].join("|")})(?:\\s|$)`);
  return (el) => el.attribs.class !== undefined && re.test(el.attribs.class);
}
const isCard = classTest(REFERENCE.itemClasses);
const isSkippedClass = classTest([...SKIP.classes, ...REFERENCE.itemClasses]);
const isParagraph = classTest(TEXT.paragraphClasses);

/** Called for every element of the overview text: one look at its name, role, classes and style. */
function skipped(el: Element): boolean {
  return SKIP.tags.has(el.name) || SKIP.roles.has(el.attribs.role ?? "") || hiddenByMarkup(el) || isSkippedClass(el);
}

/**
 * One walk of the overview: text blocks in reading order (the walk stops at each block it
 * recognises) and the source cards, which sit in lists and dialogs that are not text.
 */
function readOverview(container: Element): { blocks: TextBlock[]; cards: Element[] } {
  const blocks: TextBlock[] = [];
  const cards: Element[] = [];
  const walk = (node: AnyNode, inText: boolean): void => {
    if (!isTag(node) || SKIP.opaqueTags.has(node.name)) return;
    if (isCard(node)) {
      cards.push(node);
      return;
    }
    let text = inText && !skipped(node);
    if (text) {
      const block = readBlock(node);
      if (block) return void blocks.push(block);
      // A block without text (a list of source cards) is still searched for cards.
      if (block === null) text = false;
    }
    for (const child of node.children) walk(child, text);
  };
  for (const child of container.children) walk(child, true);
  return { blocks, cards };
}

/** The block an element is (null when it is one but holds no text), or undefined to look inside. */
function readBlock(el: Element): TextBlock | null | undefined {
  if (TEXT.listTags.has(el.name)) {
    const list = listItems(el);
    return list.length ? { type: "list", list } : null;
  }
  const heading = TEXT.headingTags.has(el.name) || el.attribs.role === "heading";
  if (!heading && !isParagraph(el)) return undefined;
  const snippet = textWithout(el, skipped);
  if (!snippet) return null;
  const strongs = all(TEXT.leadIn, el);
  if (heading || (strongs.length === 1 && text(strongs[0]) === snippet)) return { type: "heading", snippet };
  const marks = all(TEXT.highlight, el).map((m) => text(m)).filter(Boolean);
  return marks.length ? { type: "paragraph", snippet, snippet_highlighted_words: marks } : { type: "paragraph", snippet };
}

/** The list's own items (not a nested list's), each split into its bold lead-in and the rest. */
function listItems(list: Element): NonNullable<TextBlock["list"]> {
  const items: NonNullable<TextBlock["list"]> = [];
  for (const li of all("li", list)) {
    if (skipped(li) || closest(li, (e) => e === list || TEXT.listTags.has(e.name) || skipped(e)) !== list) continue;
    const full = textWithout(li, skipped);
    if (!full) continue;
    const lead = first(TEXT.leadIn, li);
    const title = lead ? text(lead) : "";
    const rest = title && full.startsWith(title) ? full.slice(title.length).trim() : "";
    items.push(rest ? { title, snippet: rest } : { snippet: full });
  }
  return items;
}

/** The sources the overview cites, each once, in the order shown. */
function readReferences(cards: Element[]): Reference[] {
  const references: Reference[] = [];
  const seen = new Set<string>();
  for (const item of cards) {
    const anchor = first(REFERENCE.link, item);
    const link = targetUrl(attr(anchor, "href"));
    const title = textOf(REFERENCE.title, item) ?? attr(anchor, "aria-label")?.replace(/\.\s*Opens in new tab\.?$/i, "");
    // Sanitized pages give every link the same placeholder URL: a source is its link and title.
    const key = `${link}\n${title}`;
    if (!link || !title || seen.has(key)) continue;
    seen.add(key);
    const ref: Reference = { title, link, index: references.length };
    const snippet = textOf(REFERENCE.snippet, item);
    if (snippet) ref.snippet = snippet;
    const source = textOf(REFERENCE.source, item);
    if (source) ref.source = source;
    references.push(ref);
  }
  return references;
}
