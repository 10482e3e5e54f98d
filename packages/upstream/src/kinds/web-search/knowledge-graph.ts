/**
 * The knowledge panel → `knowledge_graph`. Found by its title (`[data-attrid="title"]` since 2020,
 * `.kno-ecr-pt` in 2019), then read inside the panel around it:
 *
 * - 2019 desktop: `.knowledge-panel` in the right column; 2019 mobile: the card around `.kp-header`;
 * - 2020–2024 desktop and mobile: `.kp-wholepage`, which holds header and body;
 * - 2025–2026 desktop: the header (title, subtitle) spans the page top in a `.kp-wholepage-osrp`,
 *   while the body (description, facts) sits in the page's right column `#rhs`.
 *
 * Fields: the subtitle as `type` (for places the line after the rating, for businesses the one-line
 * summary; a product's rating line is not a type), the description and the site it quotes
 * (`source`), the official site, and the `Label: value` fact rows as snake_case attributes. Then:
 *
 * - `kgmid`: the entity id the panel carries (`data-kpid="vise:/m/0cqt90"` 2026,
 *   `data-maindata='[null,"/m/09c7v","Central Park",…]'` 2024–2025), else the one the page's scripts
 *   pair with the title (`[null,"/m/0cqt90","Donald Trump"`, or a `kgmid=/m/02vqfm…&q=Coffee` link);
 * - `header_images`: the panel's pictures (elements carrying the page they come from, `data-lpage`),
 *   the image a placeholder stands for read from the page's script;
 * - `people_also_search_for`: the entity cards (a search link holding a picture) under the panel's
 *   "People also search for" heading, in the page's language, or in its `…:sideways` block (2019).
 *
 * Pages without that title show the entity elsewhere: the basic layout's panel block (`basicPanel`)
 * and the inline "About" panel of 2025 (`aboutPanel`).
 */
import type { KnowledgeGraph } from "@serp/shared";
import { isTag } from "domhandler";
import {
  all,
  attr,
  closest,
  first,
  hasClass,
  everyMatch,
  hiddenByMarkup,
  landmarkIndex,
  pageSource,
  scansOf,
  text,
  textOf,
  textWithout,
  type Document,
  type Element,
  type Scan,
  textLines,
} from "../../html/index.js";
import { isPlaceholderImage, scriptedImageSources, targetUrl } from "../../values.js";
import { engineUrl } from "../../hosts.js";

const PANEL = {
  /** The panel title: `[data-attrid="title"]` (2020–2026), `.kno-ecr-pt` (2019). */
  titleAttrid: "title",
  titleClass: "kno-ecr-pt",
  /** Elements holding a whole panel, by layout (see above). */
  panelClasses: ["kp-wholepage", "knowledge-panel"],
  /** The page-top header of 2025–2026 panels, and the right column (`#rhs`) holding their body. */
  headerClass: "kp-wholepage-osrp",
  bodyId: "rhs",
  /** 2019 mobile cards have neither: their header is the widest landmark. */
  headerFallbackClass: "kp-header",
} as const;


const HEADER = {
  subtitle: '[data-attrid="subtitle"], .wwUB2c, [data-attrid="kc:/local:one line summary"]',
  /** Star ratings inside a subtitle (places, products) are not part of the type. */
  rating: '[role="img"][aria-label]',
} as const;

const DESCRIPTION = {
  box: '.kno-rdesc, [data-attrid="VisualDigestDescription"]',
  sourceLink: "a[href]",
  /** Mobile 2023 prints the source name apart from its link. */
  sourceName: ".QbgPIe",
  boxClass: "kno-rdesc",
  /** The "… MORE" expander after a truncated description (the hidden rest of the text is read). */
  expanderClass: "piXPB",
} as const;

const FACTS = {
  /** `Born: …` rows (2019–2026) and product spec rows (`Weight: 2.8 lb`). */
  label: ".w8qArf, .S4y4d",
  labelClass: "w8qArf",
  value: ".LrzXr, .cZzIbd",
  /** "MORE" links, hour tables, dialogs and Google's collapsed regions are not part of a value. */
  moreLink: "SW5pqf",
  collapsed: "a-h",
  skipTags: ["table", "g-dialog", "iframe", "input"],
} as const;

const WEBSITE = 'a[data-attrid="visit_official_site"], a.mI8Pwc[href^="http"], a.lua-button[href^="http"]';

/** The entity id on the panel (see the top of this file). */
const ENTITY = {
  carriers: "[data-kpid], [data-maindata]",
  id: /\/[mg]\/[\w-]+/,
  /** In the page's scripts: `kgmid=` (raw, `\u003d` or `\\u003d`-escaped) before a `q=` naming the title. */
  scriptLink: /kgmid(?:=|\\+u003d)(\/[mg]\/[\w-]+)/g,
} as const;

/**
 * Pictures: anything in the panel naming the page its picture comes from; 2025–2026 pages show the
 * entity's pictures in the results column instead (the "visual digest" strip), found anywhere.
 */
const IMAGES = { carrier: "[data-lpage]", digest: '[data-attrid^="VisualDigest"][data-lpage]', picture: "img" } as const;

/**
 * "People also search for": the heading in the languages of the captured pages, or the 2019 block's
 * attribute id; the cards are search links (`/search?…`) holding a picture.
 */
const ALSO_SEARCHED = {
  heading: /^(?:people also search for|他の人はこちらも検索|les internautes recherchent aussi|andere suchten auch nach|la gente también busca|as pessoas também pesquisam|le persone cercano anche|ludzie wyszukują też|люди также ищут)$/iu,
  headingCandidates: '[role="heading"], h2, h3, a[href*="stick="], .kno-fb-ctx',
  block: '[data-attrid$=":sideways"]',
  link: 'a[href^="/search?"], a[href*="google.com/search?"]',
  picture: "img, g-img",
  maxClimb: 6,
} as const;

/**
 * Where none of the panel's classes is on the page (a redesign renamed them), the panel is read by
 * shape: a 2019 title is found by its feedback attribute (`data-local-attribute="d3bn"`); its subtrees are the right column (`#rhs`) and the largest element around the title that
 * reaches into neither it nor the results column (`#rso`, `#center_col`…) nor holds a result heading
 * inside a link; the description is the `data-attrid="description"` box (its "Description" heading
 * and source link set apart), and each fact row is an element whose `data-attrid` names a fact
 * (`kc:/…`, `hw:/…`, `ss:/…`), its label the first element in it whose text ends with a colon (or
 * is followed by one), its "MORE" link the one searching for the entity's fact (`q=<title> …`). A 2019
 * subtitle (no `data-attrid`) is the element after the title.
 */
const SHAPE = {
  /** The title's feedback attribute (2019–2023), where a 2019 title has no `data-attrid`. */
  titleAttribute: "data-local-attribute",
  titleAttributeValue: "d3bn",
  resultRegions: ["rso", "center_col", "search", "rcnt", "main", "cnt"],
  resultHeading: "a h3, a [role=\"heading\"][aria-level=\"3\"]",
  description: '[data-attrid="description"], [data-attrid="VisualDigestDescription"]',
  wikipediaLink: 'a[href*="wikipedia.org/wiki/"]',
  heading: "h2, h3",
  factRow: /^(?:kc|hw|ss):\//,
  label: /^[^:：]{1,80}[:：]$/,
  colon: /^[:：]$/,
  /** A source name printed apart from its (empty) link, after the text: a short last line. */
  sourceName: 40,
} as const;

/** What the panel is read from, found on the page in the landmark sweep; the panel's are those in its subtrees. */
const PANEL_PARTS = [
  HEADER.subtitle,
  DESCRIPTION.box,
  WEBSITE,
  FACTS.label,
  ENTITY.carriers,
  IMAGES.carrier,
  ALSO_SEARCHED.headingCandidates,
  ALSO_SEARCHED.block,
];
const PAGE_PARTS = everyMatch(PANEL_PARTS);

export function extractKnowledgeGraph(doc: Document): KnowledgeGraph | undefined {
  const titleEl = LANDMARKS.of(doc).panelTitle ?? LANDMARKS.of(doc).titleByShape;
  const title = titleEl && text(titleEl);
  if (!titleEl || !title) return basicPanel(doc) ?? aboutPanel(doc);
  const byShape = !LANDMARKS.of(doc).panelClass;
  const scopes = byShape ? panelScopesByShape(titleEl, doc) : panelScopes(titleEl, doc);
  const scans = scansOf(scopes, PANEL_PARTS, (part) => PAGE_PARTS.of(doc)[part]!);
  const graph: KnowledgeGraph = { title };

  const type = typeOf(firstIn(HEADER.subtitle, scans) ?? (byShape ? nextElement(titleEl) ?? null : null));
  if (type && type !== title) graph.type = type;
  Object.assign(graph, description(firstIn(DESCRIPTION.box, scans) ?? (byShape ? descriptionByShape(scopes) : null), byShape));
  const website = targetUrl(attr(firstIn(WEBSITE, scans), "href"));
  if (website) graph.website = website;
  const attributes = byShape ? factsByShape(scopes, title) : facts(scopes, scans);
  if (Object.keys(attributes).length) graph.attributes = attributes;
  const kgmid = entityId(scans, title, doc);
  if (kgmid) graph.kgmid = kgmid;
  let scripted: Map<string, string> | undefined;
  const images = () => (scripted ??= scriptedImageSources(doc));
  const header_images = headerImages(scans, images, LANDMARKS.of(doc).visualDigest);
  if (header_images.length) graph.header_images = header_images;
  const people_also_search_for = alsoSearched(scans, title, images);
  if (people_also_search_for.length) graph.people_also_search_for = people_also_search_for;
  return graph;
}

/** The entity's id: on the panel, else where the page's scripts pair it with the title. */
function entityId(scans: Scan[], title: string, doc: Document): string | undefined {
  for (const found of scans) {
    for (const el of found.all(ENTITY.carriers)) {
      const kpid = el.attribs["data-kpid"];
      if (kpid) {
        const id = ENTITY.id.exec(kpid)?.[0];
        if (id) return id;
      }
      const main = el.attribs["data-maindata"];
      if (main) {
        try {
          const data = JSON.parse(main) as unknown[];
          if (typeof data[1] === "string" && ENTITY.id.test(data[1]) && data[2] === title) return data[1];
        } catch {
          // Not the JSON array this attribute holds on the captured pages: no id from it.
        }
      }
    }
  }
  const source = pageSource(doc);
  if (!source) return undefined;
  const named = new RegExp(`\\[null,"(/[mg]/[\\w-]+)",${escapeRegExp(JSON.stringify(title))}`).exec(source)?.[1];
  if (named) return named;
  const query = encodeURIComponent(title).replace(/%20/g, "+");
  for (const m of source.matchAll(ENTITY.scriptLink)) {
    const rest = source.slice(m.index + m[0].length, m.index + m[0].length + 200);
    const q = /(?:&|\\+u0026|&amp;)q(?:=|\\+u003d)([^&"'\\]*)/.exec(rest)?.[1];
    if (q === query) return m[1];
  }
  return undefined;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** A picture's image: its URL or data URI; a placeholder is swapped for the data URI its script sets. */
function imageOf(img: Element | null, scripted: () => Map<string, string>): string | undefined {
  if (!img) return undefined;
  const src = attr(img, "src") ?? attr(img, "data-src");
  if (src && !isPlaceholderImage(src)) return src;
  const id = attr(img, "id");
  return id ? scripted().get(id) : undefined;
}

/** The panel's pictures, each once, with the page each comes from when that is another site. */
function headerImages(
  scans: Scan[],
  scripted: () => Map<string, string>,
  digest: readonly Element[],
): NonNullable<KnowledgeGraph["header_images"]> {
  const out: NonNullable<KnowledgeGraph["header_images"]> = [];
  const seen = new Set<string>();
  const inPanel = scans.flatMap((found) => found.all(IMAGES.carrier));
  for (const group of [inPanel.length ? inPanel : digest]) {
    for (const el of group) {
      if (hiddenByMarkup(el)) continue;
      const image = imageOf(first(IMAGES.picture, el), scripted);
      if (!image || seen.has(image)) continue;
      seen.add(image);
      const source = targetUrl(el.attribs["data-lpage"]);
      out.push(source && !GOOGLE_OWN.test(source) ? { image, source } : { image });
    }
  }
  return out;
}

/** The upstream's own hosts (search pages, image servers): never a picture's source page. */
const GOOGLE_OWN = engineUrl({ subdomains: ["[^/]+"], also: ["gstatic", "usercontent"] });
/** A page of the engine's search host. */
const ENGINE_PAGE = engineUrl({ then: "/" });

/** The entity cards under the panel's "People also search for" heading (or in its 2019 block). */
function alsoSearched(
  scans: Scan[],
  title: string,
  scripted: () => Map<string, string>,
): NonNullable<KnowledgeGraph["people_also_search_for"]> {
  const out: NonNullable<KnowledgeGraph["people_also_search_for"]> = [];
  const seen = new Set<string>();
  for (const found of scans) {
    const blocks = [
      ...found.all(ALSO_SEARCHED.block),
      ...found
        .all(ALSO_SEARCHED.headingCandidates)
        .filter((h) => ALSO_SEARCHED.heading.test(text(h)))
        .map(cardsAround)
        .filter((b): b is Element => !!b),
    ];
    for (const block of blocks) {
      for (const a of all(ALSO_SEARCHED.link, block)) {
        const card = entityCard(a, block);
        const picture = card && first(ALSO_SEARCHED.picture, card);
        if (!card || !picture) continue;
        const lines = textLines(card);
        const labelledBy = attr(a, "aria-labelledby");
        const label = labelledBy ? all("[id]", card).find((el) => el.attribs.id === labelledBy) : undefined;
        const name = attr(a, "aria-label") ?? attr(a, "title") ?? (label && text(label)) ?? lines[0];
        const link = targetUrl(attr(a, "href"));
        if (!name || !link || name === title || seen.has(name)) continue;
        seen.add(name);
        const item: NonNullable<KnowledgeGraph["people_also_search_for"]>[number] = { name, link };
        const image = imageOf(picture.name === "img" ? picture : first("img", picture), scripted);
        if (image) item.image = image;
        const extensions = lines.filter((l) => l !== name);
        if (extensions.length) item.extensions = extensions;
        out.push(item);
      }
    }
  }
  return out;
}

/**
 * An entity card: the link itself when it holds the picture (2019–2024), else the list item around it
 * (2026: an empty link laid over a card, named by `aria-labelledby`).
 */
function entityCard(a: Element, block: Element): Element | undefined {
  if (first(ALSO_SEARCHED.picture, a)) return a;
  const item = closest(a, (e) => e === block || e.attribs.role === "listitem");
  return item && item !== block ? item : undefined;
}

/** The nearest element around a heading that holds entity cards (search links holding a picture). */
function cardsAround(heading: Element): Element | undefined {
  let el: Element | undefined = heading;
  for (let level = 0; el && level < ALSO_SEARCHED.maxClimb; level++) {
    el = parentElement(el);
    if (el && all(ALSO_SEARCHED.link, el).some((a) => entityCard(a, el!) && first(ALSO_SEARCHED.picture, entityCard(a, el!)!))) return el;
  }
  return undefined;
}

/** The subtrees that make up the panel around its title. */
function panelScopes(titleEl: Element, doc: Document): Element[] {
  const panel = closest(titleEl, (e) => PANEL.panelClasses.some((c) => hasClass(e, c)));
  if (panel) return [panel];
  const header = closest(titleEl, (e) => hasClass(e, PANEL.headerClass));
  const body = header ? LANDMARKS.of(doc).rightColumn : undefined;
  if (header) return body ? [header, body] : [header];
  const card = closest(titleEl, (e) => hasClass(e, PANEL.headerFallbackClass));
  return [(card && parentElement(card)) ?? card ?? titleEl];
}

/** The panel's subtrees where its classes are gone (see `SHAPE`). */
function panelScopesByShape(titleEl: Element, doc: Document): Element[] {
  const { rightColumn, resultRegions } = LANDMARKS.of(doc);
  if (rightColumn && isInside(titleEl, rightColumn)) return [rightColumn];
  const outside = [...resultRegions, ...(rightColumn ? [rightColumn] : [])];
  let header = titleEl;
  for (let up = parentElement(header); up && up.name !== "body"; up = parentElement(up)) {
    if (outside.some((r) => r === up || isInside(r, up!)) || first(SHAPE.resultHeading, up)) break;
    header = up;
  }
  return rightColumn ? [header, rightColumn] : [header];
}

/**
 * The description box by shape: the `data-attrid="description"` box, else (2019) the nearest
 * element around the panel's Wikipedia link that holds a heading (the screen-reader "Description").
 */
function descriptionByShape(scopes: Element[]): Element | null {
  const box = firstOf(SHAPE.description, scopes);
  if (box) return box;
  const link = firstOf(SHAPE.wikipediaLink, scopes);
  const around = link ? closest(link, (e) => !!first(SHAPE.heading, e)) : undefined;
  return around && !scopes.includes(around) ? around : null;
}

/** The first match in the first subtree that has one. */
function firstOf(selector: string, scopes: Element[]): Element | null {
  for (const scope of scopes) {
    const el = first(selector, scope);
    if (el) return el;
  }
  return null;
}

/** A fact's label: its text ends with a colon, or the element after it is the colon (`Weight` `:` `2.8 lb`). */
function isLabel(el: Element): boolean {
  const t = text(el);
  if (SHAPE.label.test(t)) return true;
  const next = nextElement(el);
  return !!t && !/[:：]/.test(t) && !!next && SHAPE.colon.test(text(next));
}

function nextElement(el: Element): Element | undefined {
  let next = el.next;
  while (next && !isTag(next)) next = next.next;
  return next && isTag(next) ? next : undefined;
}

/** A fact's "MORE" link: a search for the entity's fact (`q=vincent+van+gogh+siblings`), not for another entity. */
function isMoreLink(el: Element, title: string): boolean {
  if (el.name !== "a") return false;
  const q = /[?&]q=([^&#]*)/.exec(el.attribs.href ?? "")?.[1];
  if (!q) return false;
  try {
    return decodeURIComponent(q.replace(/\+/g, " ")).toLowerCase().startsWith(`${title.toLowerCase()} `);
  } catch {
    return false;
  }
}

/** Fact rows found by their `data-attrid` and a label ending with a colon (see `SHAPE`). */
function factsByShape(scopes: Element[], title: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const scope of scopes) {
    for (const row of all("[data-attrid]", scope)) {
      if (!SHAPE.factRow.test(row.attribs["data-attrid"]!) || isHidden(row, scope)) continue;
      const labelEl = all("*", row).find((e) => isLabel(e) && !hiddenByMarkup(e));
      if (!labelEl || closest(labelEl, (e) => e === row || (e !== labelEl && e.attribs["data-attrid"] !== undefined)) !== row) continue;
      const key = snakeCase(text(labelEl).replace(/[:：]\s*$/, ""));
      if (!key || key in out) continue;
      const value = factValue(row, labelEl, (e) => isMoreLink(e, title));
      if (value) out[key] = value;
    }
  }
  return out;
}

function parentElement(el: Element): Element | undefined {
  return el.parent && isTag(el.parent) ? el.parent : undefined;
}

/** The first match in the first subtree that has one. */
function firstIn(selector: string, scans: Scan[]): Element | null {
  for (const found of scans) {
    const el = found.first(selector);
    if (el) return el;
  }
  return null;
}

/** The subtitle as a type; with a rating in it, only the plain line after the rating. */
function typeOf(subtitle: Element | null): string | undefined {
  if (!subtitle) return undefined;
  if (!first(HEADER.rating, subtitle)) return text(subtitle) || undefined;
  const children = subtitle.children.filter(isTag);
  const last = children[children.length - 1];
  if (!last || first(HEADER.rating, last) || last.name === "br") return undefined;
  const line = text(last);
  return line && !/^[\d\s.,()]+$/.test(line) ? line : undefined;
}

function description(box: Element | null, byShape = false): Pick<KnowledgeGraph, "description" | "source"> {
  if (!box) return {};
  const anchor = first(DESCRIPTION.sourceLink, box);
  const link = targetUrl(attr(anchor, "href"));
  const name = text(anchor) || textOf(DESCRIPTION.sourceName, box) || (byShape && anchor ? sourceNameByShape(box) : undefined);
  let body = textWithout(
    box,
    (e) =>
      e.name === "h3" ||
      e.name === "a" ||
      hasClass(e, DESCRIPTION.expanderClass) ||
      e.attribs.role === "button" ||
      hiddenByMarkup(e),
  );
  if (name && body.endsWith(name)) body = body.slice(0, -name.length).trim();
  body = body.replace(/\s*…$/, "");
  const out: Pick<KnowledgeGraph, "description" | "source"> = {};
  if (body) out.description = body;
  if (name) out.source = link ? { name, link } : { name };
  return out;
}

/** By shape, the source named apart from its empty link: the box's last line, when short and not the whole text. */
function sourceNameByShape(box: Element): string | undefined {
  const lines = textLines(box);
  const last = lines[lines.length - 1];
  return lines.length > 1 && last && last.length <= SHAPE.sourceName ? last : undefined;
}

/** Visible `Label: value` rows, keyed by the label in snake_case; the first row of a label wins. */
function facts(scopes: Element[], scans: Scan[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [i, scope] of scopes.entries()) {
    for (const labelEl of scans[i]!.all(FACTS.label)) {
      const row = closest(labelEl, (e) => e.attribs["data-attrid"] !== undefined) ?? parentElement(labelEl);
      if (!row || isHidden(row, scope)) continue;
      const key = snakeCase(text(labelEl).replace(/[:：]\s*$/, ""));
      if (!key || key in out) continue;
      const value = factValue(row, labelEl);
      if (value) out[key] = value;
    }
  }
  return out;
}

function factValue(row: Element, labelEl: Element, skipAlso?: (e: Element) => boolean): string {
  const valueEl = first(FACTS.value, row);
  const skip = (e: Element) =>
    e === labelEl ||
    hasClass(e, FACTS.moreLink) ||
    (e.name === "a" && !!first(`.${FACTS.moreLink}`, e)) ||
    hasClass(e, FACTS.collapsed) ||
    (FACTS.skipTags as readonly string[]).includes(e.name) ||
    hiddenByMarkup(e) ||
    !!skipAlso?.(e);
  const raw = textWithout(valueEl ?? row, skip);
  return raw.replace(/^[:：]\s*/, "").replace(/[\s,·]+$/, "");
}

/** Hidden by its own markup or an ancestor's, up to the panel. */
function isHidden(el: Element, upTo: Element): boolean {
  for (let e: Element | undefined = el; e && e !== upTo; e = parentElement(e)) if (hiddenByMarkup(e)) return true;
  return false;
}

/** `Date/Lieu de naissance` → `date_lieu_de_naissance`; letters of any script are kept. */
function snakeCase(label: string): string {
  return label
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, "_")
    .replace(/^_+|_+$/g, "");
}

/**
 * Basic HTML (`gbv=1`, 2022–2024): the panel is one block of the results list (`.Gx5Zad`/`.ZINbbc`)
 * whose head pairs a title (`.deIvCb`) with a subtitle (`.tAd8D`) right after it: the entity's kind
 * (`R · 1999 ‧ Sci-fi/Action ‧ 2h 16m`, web-nojs/matrix-nojs-2023; `Nutrition Facts`,
 * web-nojs/coffee-nojs-2023; `Application programming interface`, web-nojs/domain-nojs-2023). Section
 * heads (`<h2>`: "Places", a featured snippet) and the cards of a pack or list (`.am3QBf`) share the
 * title class and are not panels. Then a description (the first plain text block, its source the
 * link at its end) and `Label: value` rows (`.AVsepf`).
 */
const BASIC = {
  title: "deIvCb",
  subtitle: "tAd8D",
  block: ["Gx5Zad", "ZINbbc"],
  card: "am3QBf",
  text: ".s3v9rd:not(:has(.s3v9rd))",
  /** Rating rows (`8.7/10 · IMDb`) and fact rows are not the description. */
  notDescription: ["Ap5OSd", "AVsepf"],
  fact: ".AVsepf",
  sourceLink: 'a[href*="/url?q="]',
} as const;

function basicPanel(doc: Document): KnowledgeGraph | undefined {
  for (const titleEl of LANDMARKS.of(doc).basicTitles) {
    const subtitleEl = subtitleAfter(titleEl);
    if (!subtitleEl || !titledAsPanel(titleEl)) continue;
    if (closest(titleEl, (e) => e.name === "h2" || hasClass(e, BASIC.card))) continue;
    const block = closest(titleEl, (e) => BASIC.block.some((c) => hasClass(e, c)));
    const title = text(titleEl);
    if (!block || !title) continue;
    const graph: KnowledgeGraph = { title };
    const type = text(subtitleEl);
    if (type) graph.type = type;
    const head = parentElement(titleEl);
    const box = all(BASIC.text, block).find(
      (el) =>
        !(head && isInside(el, head)) &&
        !closest(el, (e) => e.name === "table" || BASIC.notDescription.some((c) => hasClass(e, c))) &&
        text(el),
    );
    if (box) {
      const anchor = first(BASIC.sourceLink, box);
      const name = text(anchor);
      let body = textWithout(box, (e) => e === anchor);
      if (name && body.endsWith(name)) body = body.slice(0, -name.length).trim();
      if (body) graph.description = body;
      const link = targetUrl(attr(anchor, "href"));
      if (name) graph.source = link ? { name, link } : { name };
    }
    const attributes: Record<string, string> = {};
    for (const row of all(BASIC.fact, block)) {
      const [label, ...value] = text(row).split(/[:：]/);
      const key = snakeCase(label ?? "");
      const v = value.join(":").trim();
      if (key && v && !(key in attributes)) attributes[key] = v;
    }
    if (Object.keys(attributes).length) graph.attributes = attributes;
    return graph;
  }
  return undefined;
}

/**
 * The subtitle after a basic panel's title: its next sibling, or the first element of the next
 * sibling of a wrapper around it (`<span><h3>title</h3></span><span>subtitle</span>`, matrix 2023;
 * `<span>title</span><span>subtitle</span>` in a link, coffee 2023).
 */
function subtitleAfter(titleEl: Element): Element | undefined {
  let el: Element | undefined = titleEl;
  for (let level = 0; el && level < 3 && !hasClass(el, "kCrYT"); level++) {
    let next = el.next;
    while (next && !isTag(next)) next = next.next;
    if (next && isTag(next)) {
      let candidate: Element | undefined = next;
      for (let depth = 0; candidate && depth < 3; depth++) {
        if (hasClass(candidate, BASIC.subtitle)) return candidate;
        candidate = candidate.children.find(isTag);
      }
      return undefined;
    }
    el = parentElement(el);
  }
  return undefined;
}

/** How a basic panel's title is set: a heading or a link out, never a link to more searches. */
function titledAsPanel(titleEl: Element): boolean {
  const heading = closest(titleEl, (e) => e.name === "h3" || e.name === "a");
  if (!heading) return false;
  if (heading.name === "h3") return true;
  const target = targetUrl(attr(heading, "href"));
  return !!target && !ENGINE_PAGE.test(target);
}

function isInside(el: Element, ancestor: Element): boolean {
  for (let node = el.parent; node; node = node.parent) if (node === ancestor) return true;
  return false;
}

/**
 * The inline "About <entity>" panel (2025 desktop, web/tesla-manifesto-desktop-2025): a block in the
 * results column headed "About Tesla" (`role=heading`, level 2), a carousel of cards
 * (`role=listitem`) about the entity, and a "More about Tesla" link to the entity's profile page
 * (`tbm=ilp`), which is how the panel is found. The first card, when it describes the entity (its
 * description comes before its label, "From Wikipedia", where a news card starts with its headline),
 * gives the description and its source (the card's link and site name). Each card's link names its
 * parts in `aria-labelledby` (the page sometimes runs two ids together, so ids are matched as text).
 */
const ABOUT = {
  /** The profile page's parameter in the "More about" link. */
  profileParam: "tbm=ilp",
  heading: '[role="heading"][aria-level="2"]',
  card: '[role="listitem"]',
  cardLink: "a[href][aria-labelledby]",
  /** How far above the profile link the panel's head may be. */
  maxClimb: 4,
  /** "About Tesla" in the page's language: the words before the entity's name. */
  lead: /^(?:about|über|à propos de|a propos de|acerca de|sobre|informazioni su|over|om|o|о)\s+(?=\S)/iu,
} as const;

/** Found in the web page's one landmark sweep (web/index.ts includes this index). */
export const LANDMARKS = landmarkIndex({
  /** The panel title, and the right column holding the body of 2025–2026 panels. */
  panelTitle: { first: { attributes: { "data-attrid": PANEL.titleAttrid }, classes: [PANEL.titleClass] } },
  /** 2019 titles carry no `data-attrid`: by shape, their feedback attribute. */
  titleByShape: { first: { attributes: { [SHAPE.titleAttribute]: SHAPE.titleAttributeValue } } },
  rightColumn: { first: { attributes: { id: PANEL.bodyId } } },
  /** Any element carrying one of the panel's classes: without one, the panel is read by shape. */
  panelClass: { first: { classes: [...PANEL.panelClasses, PANEL.headerClass, PANEL.headerFallbackClass, DESCRIPTION.boxClass, FACTS.labelClass] } },
  /** The results column's regions: a panel read by shape never reaches into them. */
  resultRegions: { every: { attributes: { id: true }, match: (el: Element) => (SHAPE.resultRegions as readonly string[]).includes(el.attribs.id!) } },
  basicTitles: { every: { classes: [BASIC.title] } },
  visualDigest: { every: IMAGES.digest },
  profileLink: { first: { tags: ["a"], match: (a: Element) => a.attribs.href?.includes(ABOUT.profileParam) === true } },
}, [PAGE_PARTS]);

function aboutPanel(doc: Document): KnowledgeGraph | undefined {
  const link = LANDMARKS.of(doc).profileLink;
  if (!link) return undefined;
  let panel: Element | undefined = link;
  let heading: Element | null = null;
  for (let level = 0; panel && !heading && level < ABOUT.maxClimb; level++) {
    panel = parentElement(panel);
    heading = panel ? first(ABOUT.heading, panel) : null;
  }
  const title = text(heading).replace(ABOUT.lead, "");
  if (!panel || !title) return undefined;
  const graph: KnowledgeGraph = { title };
  const card = first(ABOUT.card, panel);
  const anchor = card && first(ABOUT.cardLink, card);
  if (!card || !anchor) return graph;
  const labelledBy = attr(anchor, "aria-labelledby")!;
  const withIds = all("[id]", card);
  const parts = withIds.filter((el) => names(labelledBy, el.attribs.id!, withIds) && text(el));
  const [lead, ...rest] = parts;
  const source = rest[rest.length - 1];
  if (!lead || !source || lead.attribs.role === "heading" || !rest.some((el) => el.attribs.role === "heading")) return graph;
  graph.description = text(lead).replace(/\s*(?:\.\.\.|…)$/, "");
  const name = text(source);
  const sourceLink = targetUrl(attr(anchor, "href"));
  graph.source = sourceLink ? { name, link: sourceLink } : { name };
  return graph;
}

/**
 * Whether an `aria-labelledby` list names the id, as a whole: followed by a space, the end, or
 * another id of the card (the run-together case), never as the start of a longer id (`_7` in `_74`).
 */
function names(labelledBy: string, id: string, others: readonly Element[]): boolean {
  for (let at = labelledBy.indexOf(id); at >= 0; at = labelledBy.indexOf(id, at + 1)) {
    const rest = labelledBy.slice(at + id.length);
    if (rest === "" || /^\s/.test(rest) || others.some((o) => o.attribs.id !== id && rest.startsWith(o.attribs.id!))) return true;
  }
  return false;
}
