/**
 * The AI overview at the top of the results → `ai_overview`. Two layouts, both inside `#eKIzJc`:
 *
 * - 2025: paragraphs `.rPeykc` and plain `ul` lists in `.WaaZC` blocks; the sources are a list of
 *   `li.LLtSOc` cards beside the text;
 * - 2026: paragraphs `.Y3BBE` (one holding only a bold line is a heading) and `ul`/`ol` lists whose
 *   items open with a bold lead-in; the sources are `li.CyMdWb` cards in the (closed) sources dialog.
 *
 * Citation buttons, images, hidden copies and the "AI Overview" label are not text, and neither are
 * source cards wherever they sit (2026 also repeats them in a list beside the text, `ul.EJw9bc`): a
 * card is told by its class or by the source id it carries (`data-src-id`). Overviews inside "People
 * also ask" answers are not this block.
 *
 * Citations (2026): a text's citation button (`[data-icl-uuid]`) names a citation whose sources the
 * page keeps in comments beside it (`<!--Sv6Kpe[["<uuid>",[title, snippet, icon, site, [name], link,
 * …, "<source id>", …]]]-->`, or `[["<uuid>","<source id>",0,"<link>",…]]`): the source ids are those
 * of the cards (`data-src-id`), which gives each text block or list item its `reference_indexes`.
 * 2025 pages map citations to sources only through opaque numbers in their scripts: no indexes there.
 *
 * Where none of those classes is in the overview (a redesign renamed them), its parts are found by
 * shape: a paragraph is a `div` carrying `data-sfc-cp` and `data-hveid` around no other such `div`
 * (2026; list items and video cards carry only the first), or an element holding the text's spans
 * (`data-huuid`, 2025); the "AI Overview" label and the error notes are told by their `jsname`
 * (`cUzNTd`, `L1sC6e`) or, where a page lost those, the label by its text; a 2025 source card is a list item whose link's `aria-label` (the source's
 * title) opens its text.
 *
 * When the page only holds the loading placeholder (the text is fetched after load, "Searching…"),
 * the overview is its continuation token (`data-mlro`) as `page_token`, where the page has one.
 */
import type { AiOverview } from "@serp/shared";
import { isComment, isTag } from "domhandler";
import {
  all,
  attr,
  closest,
  first,
  hiddenByMarkup,
  landmarkIndex,
  matches,
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

/**
 * Source cards: `li.LLtSOc` (2025), `li.CyMdWb` in the closed sources dialog (2026), and any element
 * carrying a source id (2026: the cards of the dialog and of the list beside the text).
 */
const REFERENCE = {
  itemClasses: new Set(["LLtSOc", "CyMdWb"]),
  sourceId: "data-src-id",
  link: "a[href]",
  title: ".mNme1d, .Nn35F",
  snippet: ".gxZfx, .vhJ6Pe",
  source: ".R8BTeb, .R0r5R",
} as const;

/** The overview's parts by shape, where none of its classes is there (see above). */
const SHAPE = {
  paragraph: "div[data-sfc-cp][data-hveid]",
  textSpan: "data-huuid",
  /** The "AI Overview" label and the error notes. */
  skippedNames: new Set(["cUzNTd", "L1sC6e"]),
  cardLink: "a[aria-label]",
  label: /^AI Overview$/i,
} as const;

/** Citations and the loading placeholder (see above). */
const CITATION = {
  uuid: "data-icl-uuid",
  /** The comments holding a citation's sources: the page's data marker, then JSON. */
  comment: /^Sv6Kpe(\[\["[0-9a-f-]{36}",[\s\S]*)$/,
  /** The placeholder's continuation token. */
  token: "data-mlro",
} as const;

type TextBlock = NonNullable<AiOverview["text_blocks"]>[number];
type ListItem = NonNullable<TextBlock["list"]>[number];
type Reference = NonNullable<AiOverview["references"]>[number];

export function extractAiOverview(doc: Document): AiOverview | undefined {
  const container = LANDMARKS.of(doc).overviewSlot;
  if (!container) return undefined;
  const rules = all("*", container).some(isKnownClass) ? BY_CLASS : BY_SHAPE;
  const { blocks, cards, citations, comments } = readOverview(container, rules);
  if (blocks.length === 0) return placeholder(container);
  const { references, ids } = readReferences(cards);
  if (citations.size) citeReferences(citations, readCitations(comments), references, ids);
  return references.length ? { text_blocks: blocks, references } : { text_blocks: blocks };
}

/** A still-loading overview: its continuation token, when the placeholder carries one. */
function placeholder(container: Element): AiOverview | undefined {
  const token = attr(first(`[${CITATION.token}]`, container), CITATION.token);
  return token ? { page_token: token } : undefined;
}

/** A test for "has one of these classes", run on every element of the overview. */
function classTest(classes: Iterable<string>): (el: Element) => boolean {
  const re = new RegExp(`(?:^|\\s)(?:${[...classes].join("|")})(?:\\s|$)`);
  return (el) => el.attribs.class !== undefined && re.test(el.attribs.class);
}
const isCardClass = classTest(REFERENCE.itemClasses);
const isSkippedClass = classTest([...SKIP.classes, ...REFERENCE.itemClasses]);
const isKnownClass = classTest([...TEXT.paragraphClasses, ...SKIP.classes, ...REFERENCE.itemClasses]);

/** How the overview's parts are told: by their classes, or by their shape where none is there. */
interface Rules {
  isCard: (el: Element) => boolean;
  isParagraph: (el: Element) => boolean;
  /** Called for every element of the overview text: one look at its name, role, classes and style. */
  skipped: (el: Element) => boolean;
}

const skippedByMarkup = (el: Element): boolean =>
  SKIP.tags.has(el.name) || SKIP.roles.has(el.attribs.role ?? "") || hiddenByMarkup(el) || el.attribs[REFERENCE.sourceId] !== undefined;

const BY_CLASS: Rules = {
  isCard: (el) => isCardClass(el) || el.attribs[REFERENCE.sourceId] !== undefined,
  isParagraph: classTest(TEXT.paragraphClasses),
  skipped: (el) => skippedByMarkup(el) || isSkippedClass(el),
};

/** A 2025 source card by shape: a list item opened by the title its link names (`aria-label`). */
function isCardByShape(el: Element): boolean {
  if (el.attribs[REFERENCE.sourceId] !== undefined) return true;
  if (el.name !== "li") return false;
  const label = attr(first(SHAPE.cardLink, el), "aria-label")?.replace(/\.\s*Opens in new tab\.?$/i, "");
  return !!label && text(el).startsWith(label);
}

const BY_SHAPE: Rules = {
  isCard: isCardByShape,
  isParagraph: (el) =>
    el.name !== "li" &&
    ((matches(el, SHAPE.paragraph) && !first(SHAPE.paragraph, el)) ||
      el.children.some((c) => isTag(c) && c.attribs[SHAPE.textSpan] !== undefined)),
  skipped: (el) =>
    skippedByMarkup(el) ||
    SHAPE.skippedNames.has(el.attribs.jsname ?? "") ||
    (el.attribs.role === "heading" && SHAPE.label.test(text(el))) ||
    (el.name === "li" && isCardByShape(el)),
};

/**
 * One walk of the overview: text blocks in reading order (the walk stops at each block it
 * recognises), the source cards, which sit in lists and dialogs that are not text, the citations of
 * each block or list item, and the comments that may hold the citations' sources.
 */
function readOverview(container: Element, rules: Rules): {
  blocks: TextBlock[];
  cards: Element[];
  citations: Citations;
  comments: string[];
} {
  const blocks: TextBlock[] = [];
  const cards: Element[] = [];
  const citations: Citations = new Map();
  const comments: string[] = [];
  const walk = (node: AnyNode, inText: boolean): void => {
    if (isComment(node)) {
      if (node.data.startsWith("Sv6Kpe[[\"") || node.data.startsWith("Sv6Kpe[[&quot;")) comments.push(node.data);
      return;
    }
    if (!isTag(node) || SKIP.opaqueTags.has(node.name)) return;
    if (rules.isCard(node)) {
      cards.push(node);
      return;
    }
    let text = inText && !rules.skipped(node);
    if (text) {
      const block = readBlock(node, citations, rules);
      if (block) {
        blocks.push(block);
        // The block's own comments (citations inside a paragraph) are still wanted.
        for (const c of all("*", node)) for (const k of c.children) if (isComment(k) && CITATION.comment.test(decodeEntities(k.data))) comments.push(k.data);
        return;
      }
      // A block without text (a list of source cards) is still searched for cards.
      if (block === null) text = false;
    }
    for (const child of node.children) walk(child, text);
  };
  for (const child of container.children) walk(child, true);
  return { blocks, cards, citations, comments };
}

/** The block an element is (null when it is one but holds no text), or undefined to look inside. */
function readBlock(el: Element, citations: Citations, { isParagraph, skipped }: Rules): TextBlock | null | undefined {
  if (TEXT.listTags.has(el.name)) {
    const list = listItems(el, citations, skipped);
    return list.length ? { type: "list", list } : null;
  }
  const heading = TEXT.headingTags.has(el.name) || el.attribs.role === "heading";
  if (!heading && !isParagraph(el)) return undefined;
  const snippet = textWithout(el, skipped);
  if (!snippet) return null;
  const strongs = all(TEXT.leadIn, el);
  if (heading || (strongs.length === 1 && text(strongs[0]) === snippet)) return { type: "heading", snippet };
  const marks = all(TEXT.highlight, el).map((m) => text(m)).filter(Boolean);
  const block: TextBlock = marks.length ? { type: "paragraph", snippet, snippet_highlighted_words: marks } : { type: "paragraph", snippet };
  noteCitations(block, el, citations);
  return block;
}

/** What a block or list item cites: the uuids of its citation buttons, resolved once the sources are read. */
type Citations = Map<TextBlock | ListItem, string[]>;

function noteCitations(target: TextBlock | ListItem, el: Element, citations: Citations): void {
  const uuids = [...new Set(all(`[${CITATION.uuid}]`, el).map((b) => b.attribs[CITATION.uuid]!))];
  if (uuids.length) citations.set(target, uuids);
}

/** The list's own items (not a nested list's), each split into its bold lead-in and the rest. */
function listItems(list: Element, citations: Citations, skipped: Rules["skipped"]): NonNullable<TextBlock["list"]> {
  const items: NonNullable<TextBlock["list"]> = [];
  for (const li of all("li", list)) {
    if (skipped(li) || closest(li, (e) => e === list || TEXT.listTags.has(e.name) || skipped(e)) !== list) continue;
    const full = textWithout(li, skipped);
    if (!full) continue;
    const lead = first(TEXT.leadIn, li);
    const title = lead ? text(lead) : "";
    const rest = title && full.startsWith(title) ? full.slice(title.length).trim() : "";
    const item: ListItem = rest ? { title, snippet: rest } : { snippet: full };
    noteCitations(item, li, citations);
    items.push(item);
  }
  return items;
}

/**
 * The sources the overview cites, each once, in the order shown, and each source id's reference
 * (a source shown twice, in the dialog and beside the text, is one reference).
 */
function readReferences(cards: Element[]): { references: Reference[]; ids: Map<string, number> } {
  const references: Reference[] = [];
  const ids = new Map<string, number>();
  const seen = new Map<string, number>();
  for (const item of cards) {
    const idEl = item.attribs[REFERENCE.sourceId] !== undefined ? item : first(`[${REFERENCE.sourceId}]`, item);
    const id = attr(idEl, REFERENCE.sourceId);
    const anchor = first(REFERENCE.link, item);
    const link = targetUrl(attr(anchor, "href"));
    const title = textOf(REFERENCE.title, item) ?? attr(anchor, "aria-label")?.replace(/\.\s*Opens in new tab\.?$/i, "");
    // Sanitized pages give every link the same placeholder URL: a source is its link and title.
    const key = `${link}\n${title}`;
    if (!link || !title) continue;
    const known = (id !== undefined ? ids.get(id) : undefined) ?? seen.get(key);
    if (known !== undefined) {
      if (id !== undefined) ids.set(id, known);
      continue;
    }
    seen.set(key, references.length);
    if (id !== undefined) ids.set(id, references.length);
    const ref: Reference = { title, link, index: references.length };
    const snippet = textOf(REFERENCE.snippet, item);
    if (snippet) ref.snippet = snippet;
    const source = textOf(REFERENCE.source, item);
    if (source) ref.source = source;
    references.push(ref);
  }
  return { references, ids };
}

/** A citation's sources: their source ids, and their links (for sources without an id). */
interface Cited {
  ids: string[];
  links: string[];
}

/** Each citation's sources, from the comments of the overview (see the top of this file). */
function readCitations(comments: string[]): Map<string, Cited> {
  const out = new Map<string, Cited>();
  for (const raw of comments) {
    const json = CITATION.comment.exec(decodeEntities(raw))?.[1];
    if (!json) continue;
    let row: unknown;
    try {
      row = (JSON.parse(json) as unknown[])[0];
    } catch {
      continue;
    }
    if (!Array.isArray(row) || typeof row[0] !== "string") continue;
    const [uuid, second] = row as [string, unknown, ...unknown[]];
    // Either the source's whole card ([title, snippet, icon, site, [name], link, _, _, id, …]) or its id and link.
    const card = Array.isArray(second) ? second : undefined;
    const id = card ? card[8] : second;
    const link = card ? card[5] : row[3];
    const cited = out.get(uuid) ?? { ids: [], links: [] };
    if (typeof id === "string" && id) cited.ids.push(id);
    if (typeof link === "string" && link) cited.links.push(link);
    out.set(uuid, cited);
  }
  return out;
}

/** Sets `reference_indexes` on the blocks and list items whose citations name known sources. */
function citeReferences(citations: Citations, cited: Map<string, Cited>, references: Reference[], ids: Map<string, number>): void {
  const byLink = new Map(references.map((r) => [withoutFragment(r.link), r.index]));
  for (const [target, uuids] of citations) {
    const indexes = new Set<number>();
    for (const uuid of uuids) {
      const sources = cited.get(uuid);
      if (!sources) continue;
      for (const id of sources.ids) {
        const index = ids.get(id);
        if (index !== undefined) indexes.add(index);
      }
      // Sanitized pages give every link the same placeholder: links only help without ids.
      if (sources.ids.length) continue;
      for (const link of sources.links) {
        const index = byLink.get(withoutFragment(link));
        if (index !== undefined) indexes.add(index);
      }
    }
    if (indexes.size) target.reference_indexes = [...indexes].sort((a, b) => a - b);
  }
}

function withoutFragment(link: string): string {
  const hash = link.indexOf("#");
  return hash < 0 ? link : link.slice(0, hash);
}

/** Comment text is not entity-decoded by the parser: the few entities the page's JSON uses. */
function decodeEntities(s: string): string {
  return s.replace(/&(?:quot|#39|#x27|amp|lt|gt|#(\d+)|#x([0-9a-f]+));/gi, (m, dec?: string, hex?: string) => {
    if (dec) return String.fromCodePoint(Number(dec));
    if (hex) return String.fromCodePoint(parseInt(hex, 16));
    return { "&quot;": '"', "&#39;": "'", "&#x27;": "'", "&amp;": "&", "&lt;": "<", "&gt;": ">" }[m.toLowerCase()] ?? m;
  });
}
