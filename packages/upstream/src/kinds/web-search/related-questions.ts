/**
 * "People also ask" → `related_questions`. Two families of layout:
 *
 * - full pages (desktop and mobile, 2019–2026): one `.related-question-pair` per question inside a
 *   `.cUnQKe` list. A page saved after rendering (a browser dump, a sanitized DOM) holds the answer in
 *   the pair; a raw response (2019–2026) serves it in a script that fills the pair's empty answer pane
 *   on load (`jsl.dh`, see `deferredHtml`), and it is read from there. A page that carries it nowhere
 *   (a SingleFile snapshot taken before the question was opened: empty pane, scripts gone) gives the
 *   question alone. 2021–2023 pairs also carry a hidden "Search for: <question>" line, never read here;
 * - basic HTML (`gbv=1`): a `span.C7GS5b` question followed by a `div` holding the answer card
 *   (`.yStFkb`), always expanded since that page has no script.
 *
 * An answer is a featured-snippet card: a text (or a heading and a list), sometimes a date, and the
 * result it quotes (title, link, displayed link). Answers written by the AI (2026) are left out.
 *
 * Where none of those classes is on the page (a redesign renamed them), the questions are found by
 * their shape (`pairsByShape`, `basicByShape`): on full pages, the element that carries both the
 * question (`data-q`) and its log key (`data-lk`, 2021–2026), or else (2019) expandable rows
 * (`role="tab"` with `aria-expanded` and `aria-controls`) whose text is a question; on basic
 * pages, a question line whose only sibling is the answer box quoting a result (`/url?q=`). Each
 * question's pair is the largest element around it holding no other question (at most
 * `PAIR_DEPTH` levels up); answers are read from it as above, by tag, role and attributes.
 */
import type { RelatedQuestion } from "@serp/shared";
import { isTag } from "domhandler";
import {
  all,
  attr,
  first,
  hasClass,
  hiddenByMarkup,
  landmarkIndex,
  parseFragment,
  scan,
  text,
  textOf,
  textWithout,
  type AnyNode,
  type Document,
  type Element,
  type Scan,
} from "../../html/index.js";
import { deferredHtml, servedHtml, targetUrl } from "../../values.js";

/** Desktop and mobile pages, 2019–2026. */
const FULL = {
  pair: "div.related-question-pair",
  pairClass: "related-question-pair",
  /** The list holding the pairs, in every captured layout. */
  listClass: "cUnQKe",
  /** The clickable question row: `role=button` (2021–2026), `role=tab` (2019). */
  question: '[role="button"], [role="tab"]',
  /** Featured-snippet text (`.LGOjhe`, marked `wa:/description` since 2021) and its date. */
  snippetBox: '[data-attrid="wa:/description"], .LGOjhe',
  snippetText: ".hgKElc",
  date: ".kX21rb, .Od5Jsd",
  dateClass: "kX21rb",
  /** List answers (2019): a bold heading over the items. */
  listBox: ".di3YZe",
  listHeading: '[role="heading"]',
  listItem: "li",
  /** The quoted result: the anchor around its `h3` title (desktop), or inside it (mobile 2023). */
  resultLink: "a[href]:has(> h3), h3 > a[href]",
  resultTitle: "h3",
  displayedLink: "cite",
} as const;

/** What a pair is read from, found in one scan of the pair. */
const PAIR_PARTS = [FULL.question, FULL.snippetBox, FULL.listBox, FULL.date, FULL.resultLink, FULL.displayedLink];
/** What an answer served apart from its pair is read from. */
const ANSWER_PARTS = PAIR_PARTS.slice(1);
/** Empty blocks that deferred HTML may fill: the pair's answer pane and the slots inside it. */
const SLOT = "div[id]:empty";
/** How deep deferred HTML nests (pane → slots → card parts: 3 levels in 2021–2026 pages). */
const MAX_NESTING = 4;
/**
 * What served HTML must hold to be worth parsing: a part an answer is read from (see PAIR_PARTS), as
 * the script writes it (`<` may be escaped as `\x3c`). Wrappers of slots and answers written by the AI
 * (long, and not read) are passed over unparsed.
 */
const ANSWER_MARK = /(?:<|\\x3c)h3\b|wa:\/description|LGOjhe|di3YZe/;
/**
 * A slot in served HTML: an empty `<div id="…"></div>` that a later call fills, as the script writes
 * it (`\x3cdiv id\x3d\x22…\x22\x3e\x3c/div\x3e`).
 */
const SERVED_SLOT = /(?:<|\\x3c)div id(?:=|\\x3d)(?:"|\\x22|\\")([^"\\]+)(?:"|\\x22|\\")(?:>|\\x3e)(?:<|\\x3c)\/div/g;

/** Basic HTML (`gbv=1`). */
const BASIC = {
  /** A question whose next sibling holds an answer card (related-search groups use the same span). */
  question: "span.C7GS5b:has(+ div .yStFkb)",
  questionClass: "C7GS5b",
  answer: ".yStFkb",
  /** Answer text blocks: a paragraph, or a list heading and its `.X7NTVe` items. */
  block: ".kCrYT",
  listItem: ".X7NTVe",
  /** Item numbers of numbered lists (`1`, `2` …) sit in their own cell. */
  itemNumberClass: "pkr8ib",
  resultLink: 'a[href*="/url?q="]',
  resultTitle: ".vvjwJb, .Xb5VRe",
  displayedLink: ".UPmit, .aJyiOc",
} as const;

/** What questions are found by where their classes are not (see the module's comment). */
const SHAPE = {
  /** The question and its log key on one element (2021–2026). */
  asked: "data-q",
  askedKey: "data-lk",
  /**
   * Expandable rows (2019): tabs. Later pages mark other accordions' rows (a hotel's questions and
   * answers, 2023) as buttons, and their questions with `data-q`.
   */
  expander: "aria-expanded",
  expanderRole: "tab",
  /** A question's text ends with a question mark (Latin, full-width, Arabic, Greek). */
  questionMark: /[?？؟;]$/u,
  basicAnswerLink: 'a[href^="/url?q="]',
} as const;
/** How far above its question a pair reaches (2021: the question's element sits in the pair's first child). */
const PAIR_DEPTH = 3;

/** Found in the web page's one landmark sweep (web/index.ts includes this index). */
export const LANDMARKS = landmarkIndex({
  /** The first question of either layout. */
  firstQuestion: { first: { classes: [FULL.pairClass, BASIC.questionClass], selector: `${FULL.pair}, ${BASIC.question}` } },
  /** Every pair on the page: a page can hold more than one list (a second one in the lower `#bres`, 2025). */
  everyPair: { every: { classes: [FULL.pairClass], selector: FULL.pair } },
  /** Questions by shape: a question and its log key (2021–2026)… */
  askedQuestions: { every: { attributes: { [SHAPE.asked]: true }, match: (el: Element) => SHAPE.askedKey in el.attribs } },
  /** …expandable rows (2019)… */
  expanders: { every: { attributes: { [SHAPE.expander]: true }, match: (el: Element) => el.attribs.role === SHAPE.expanderRole && "aria-controls" in el.attribs } },
  /** …a basic page's question line followed by its answer box (two children of one wrapper). */
  basicQuestions: { every: { tags: ["span"], match: isBasicQuestion } },
});
/** SingleFile's mark on what was not displayed when the page was saved. */
const SAVED_HIDDEN = "sf-hidden";

export function extractRelatedQuestions(doc: Document): RelatedQuestion[] {
  const { firstQuestion: found, everyPair, basicQuestions } = LANDMARKS.of(doc);
  if (found) return hasClass(found, FULL.pairClass) ? readFull(everyPair, doc) : readBasic(found);
  const pairs = pairsByShape(doc);
  if (pairs.length) return readFull(pairs, doc);
  return basicQuestions.length ? readBasicSpans(basicQuestions) : [];
}

/**
 * The question pairs of a full page: by class, else by shape (see the module's comment). Links
 * inside them are the answers' sources, never results or related searches.
 */
export function questionPairs(doc: Document): readonly Element[] {
  const { everyPair, firstQuestion } = LANDMARKS.of(doc);
  if (everyPair.length) return everyPair;
  return firstQuestion ? [] : pairsByShape(doc);
}

/** Full-page pairs found by shape: around each asked question, or else each expandable question row. */
function pairsByShape(doc: Document): Element[] {
  const { askedQuestions, expanders } = LANDMARKS.of(doc);
  const questions = askedQuestions.length
    ? askedQuestions
    : expanders.filter((e) => SHAPE.questionMark.test(text(e)));
  // A lone expandable row whose text asks something is not a list of questions.
  if (!askedQuestions.length && questions.length < 2) return [];
  return questionsWidened(questions);
}

/** Each question widened to the largest element around it that holds no other question, at most `PAIR_DEPTH` levels up. */
function questionsWidened(questions: readonly Element[]): Element[] {
  const set = new Set(questions);
  const holdsOther = (el: Element, own: Element): boolean => {
    for (const q of set) if (q !== own && q !== el && isWithin(q, el)) return true;
    return false;
  };
  return questions
    .filter((q) => !questions.some((o) => o !== q && isWithin(q, o)))
    .map((q) => {
      let pair = q;
      for (let i = 0; i < PAIR_DEPTH; i++) {
        const up = parentElement(pair);
        if (!up || holdsOther(up, q)) break;
        pair = up;
      }
      return pair;
    });
}

function isWithin(el: Element, ancestor: Element): boolean {
  for (let node = el.parent; node; node = node.parent) if (node === ancestor) return true;
  return false;
}

/** A basic page's question line: a `span` whose wrapper holds it and one `div`, the answer quoting a result. */
function isBasicQuestion(span: Element): boolean {
  const wrapper = parentElement(span);
  if (!wrapper) return false;
  const children = wrapper.children.filter(isTag);
  if (children.length !== 2 || children[0] !== span || children[1]!.name !== "div") return false;
  return first(SHAPE.basicAnswerLink, children[1]!) !== null;
}

/**
 * The pairs of every list, in page order, each question once. A page saved after questions were
 * opened holds the questions they loaded (web/something-desktop-singlefile-2025: 9 in the first list);
 * pairs the saved page did not display are left out.
 */
function readFull(pairs: readonly Element[], doc: Document): RelatedQuestion[] {
  const questions: RelatedQuestion[] = [];
  let deferred: ((id: string) => string | undefined) | undefined;
  for (const pair of pairs) {
    if (isHidden(pair)) continue;
    const found = scan(pair, PAIR_PARTS);
    const question = found.textOf(FULL.question) ?? attr(first("[data-q]", [pair]), "data-q")?.trim();
    if (!question || questions.some((q) => q.question === question)) continue;
    let answer = fullAnswer(found);
    if (!answer.snippet && !answer.list && !answer.link) {
      deferred ??= deferredHtml(doc);
      const served = servedAnswer(pair, deferred);
      if (served.length) answer = fullAnswer(scan(served, ANSWER_PARTS));
    }
    questions.push({ question, ...answer });
  }
  return questions;
}

/**
 * The answer a raw page serves for a pair in its scripts: the HTML filling each empty slot of the
 * pair, and the slots named in that HTML, filled in turn; of those, the pieces holding an answer's
 * parts, in the order the slots nest, parsed apart from the page (never joined to it).
 */
function servedAnswer(pair: Element, served: (id: string) => string | undefined): AnyNode[] {
  const pieces: string[] = [];
  const seen = new Set<string>();
  const visit = (id: string, depth: number) => {
    const literal = served(id);
    if (literal === undefined || seen.has(id)) return;
    seen.add(id);
    if (ANSWER_MARK.test(literal)) pieces.push(literal);
    if (depth < MAX_NESTING) for (const m of literal.matchAll(SERVED_SLOT)) visit(m[1]!, depth + 1);
  };
  for (const slot of all(SLOT, pair)) visit(slot.attribs.id!, 1);
  // Each piece is an element's whole content: parsed together, they stay apart.
  return pieces.length ? parseFragment(pieces.map(servedHtml).join("")) : [];
}

/** Not displayed when the page was saved: marked so by the page or the saving tool, up to the list. */
function isHidden(pair: Element): boolean {
  for (let e: Element | undefined = pair; e && !hasClass(e, FULL.listClass); e = parentElement(e)) {
    if (hiddenByMarkup(e) || hasClass(e, SAVED_HIDDEN)) return true;
  }
  return false;
}

type Answer = Omit<RelatedQuestion, "question">;

function fullAnswer(pair: Scan): Answer {
  const answer: Answer = {};
  const snippetBox = pair.first(FULL.snippetBox);
  const listBox = snippetBox ? null : pair.first(FULL.listBox);
  if (snippetBox) {
    const snippet = textOf(FULL.snippetText, snippetBox) ?? textWithout(snippetBox, (e) => hasClass(e, FULL.dateClass));
    if (snippet) answer.snippet = snippet;
  } else if (listBox) {
    const heading = textOf(FULL.listHeading, listBox);
    if (heading) answer.snippet = heading;
    const items = all(FULL.listItem, listBox).map((li) => text(li)).filter(Boolean);
    if (items.length) answer.list = items;
  }
  const date = pair.textOf(FULL.date);
  if (date && (snippetBox || listBox)) answer.date = date;
  const anchor = pair.first(FULL.resultLink);
  // A mobile title is the anchor itself, inside its `h3`.
  const inTitle = anchor?.parent && isTag(anchor.parent) && anchor.parent.name === FULL.resultTitle;
  const title = !anchor ? undefined : inTitle ? text(anchor) || undefined : textOf(FULL.resultTitle, anchor);
  Object.assign(answer, quotedResult(anchor, title, pair.first(FULL.displayedLink)));
  return answer;
}

function readBasic(firstSpan: Element): RelatedQuestion[] {
  // Each question and its answer share a wrapper; the wrappers are children of the PAA block.
  const wrapper = parentElement(firstSpan);
  const block = wrapper && parentElement(wrapper);
  return readBasicSpans(block ? all(BASIC.question, block) : [firstSpan]);
}

/** The questions of a basic page from their lines, each followed by its answer box. */
function readBasicSpans(spans: readonly Element[]): RelatedQuestion[] {
  const questions: RelatedQuestion[] = [];
  for (const span of spans) {
    const question = text(span);
    if (!question) continue;
    const next = nextElement(span);
    const answerBox = next && (first(BASIC.answer, [next]) ?? (hasClass(span, BASIC.questionClass) ? null : next));
    questions.push(answerBox ? { question, ...basicAnswer(answerBox) } : { question });
  }
  return questions;
}

function basicAnswer(box: Element): Answer {
  const answer: Answer = {};
  const textBlock = all(BASIC.block, box).find((b) => !first("a[href]", b));
  const snippet = text(textBlock);
  if (snippet) answer.snippet = snippet;
  const items = all(BASIC.listItem, box)
    .map((li) => textWithout(li, (e) => hasClass(e, BASIC.itemNumberClass)))
    .filter(Boolean);
  if (items.length) answer.list = items;
  const anchor = first(BASIC.resultLink, box);
  Object.assign(answer, quotedResult(anchor, anchor ? textOf(BASIC.resultTitle, anchor) : undefined, first(BASIC.displayedLink, box)));
  return answer;
}

function parentElement(el: Element): Element | undefined {
  return el.parent && isTag(el.parent) ? el.parent : undefined;
}

function nextElement(el: Element): Element | null {
  for (let n = el.next; n; n = n.next) if (isTag(n)) return n;
  return null;
}

/** The result an answer quotes: its title, real link and displayed link, when shown. */
function quotedResult(anchor: Element | null, title: string | undefined, displayedEl: Element | null): Answer {
  const link = targetUrl(attr(anchor, "href"));
  if (!anchor || !link) return {};
  const out: Answer = title ? { title, link } : { link };
  const displayed = text(displayedEl);
  if (displayed) out.displayed_link = displayed;
  return out;
}
