/**
 * A compact markdown rendering of a result, for agents (the model API's `output=md`, 2026-08: about
 * half the tokens of its JSON): a heading, one line of what was searched, then a heading per block
 * with its items numbered, each its title linked and its snippet under it. Thumbnails, tracking
 * links, positions and other fields an agent does not read are left out; nothing is invented.
 *
 * Used by the compatibility endpoint (`output=md`, `/search.md`, `Accept: text/markdown`) on its
 * envelope, and by the MCP tools on the job result, so both read the same.
 *
 * Every piece of text is the page's (or the caller's), so none of it may act as markdown: control and
 * bidi characters are dropped (safeText), markdown's inline syntax is escaped and a line-starting
 * block marker too, `<` is written as `&lt;`, and only http(s) URLs become link targets. Only the
 * lines' own structure (headings, numbers, links) is markdown.
 */
import { isHttpUrl, safeText, type JobResponse } from "@serp/shared";

type Obj = Record<string, unknown>;

/** Headings of the known blocks, in the order they are shown; any other block follows, titled from its key. */
const BLOCKS: [key: string, title: string][] = [
  ["ai_overview", "AI overview"],
  ["knowledge_graph", "Knowledge graph"],
  ["organic_results", "Results"],
  ["ads", "Ads"],
  ["top_stories", "Top stories"],
  ["news_results", "News"],
  ["local_results", "Places"],
  ["related_questions", "Related questions"],
  ["discussions_and_forums", "Discussions and forums"],
  ["images_results", "Images"],
  ["shopping_results", "Shopping"],
  ["product_results", "Product"],
  ["sellers", "Sellers"],
  ["suggestions", "Suggestions"],
  ["related_searches", "Related searches"],
];
const KNOWN = new Set(BLOCKS.map(([k]) => k));
/** Not blocks: shown in the header or the footer, or not at all. */
const NOT_BLOCKS = new Set(["search_metadata", "search_parameters", "search_information", "pagination", "serpapi_pagination", "error", "layout"]);
/** Blocks whose items are bare terms (their links only repeat the search), shown on one line. */
const TERMS: Record<string, string> = { suggestions: "value", related_searches: "query" };

/** A related question is titled by the question, linked to its answer's page. */
const TITLE_KEYS = ["question", "title", "name", "query", "value"];
const LINK_KEYS = ["link", "product_link", "website"];
const SNIPPET_KEYS = ["snippet", "description", "answer"];
/** Short facts shown on the item's line after its title, in this order. */
const FACT_KEYS = ["source", "date", "price", "base_price", "total_price", "shipping", "type", "address", "phone", "hours", "delivery"];

const MAX_TEXT = 600;

/**
 * One line of inert text: control and bidi characters dropped, whitespace collapsed, cut at
 * MAX_TEXT, then markdown's inline syntax (links, images, emphasis, code, tables, escapes) escaped
 * (`_` inside a word cannot emphasise, so `web_news` stays as it is),
 * raw HTML and autolinks defused (`&lt;`), and a block marker at its start (a heading's `#`, `>`,
 * a list's `-`, `+` or `1.`, a `---` or `===` rule) escaped, since a line may begin with it.
 */
function text(value: unknown): string {
  const s = safeText(String(value)).replace(/\s+/g, " ").trim();
  const cut = s.length > MAX_TEXT ? `${s.slice(0, MAX_TEXT)}…` : s;
  return cut
    .replace(/[\\`*[\]|~]|(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu, "\\$&")
    .replace(/</g, "&lt;")
    .replace(/^(?:#{1,6}(?=\s|$)|>|[-+=](?=\s|$|[-=]*$))/, "\\$&")
    .replace(/^(\d{1,9})(?=[.)](?:\s|$))/, "$1\\");
}

/** Text inside a link's brackets. */
const label = text;

/** An http(s) URL fit for a markdown link target, or undefined (javascript: and the like are dropped). */
function target(value: unknown): string | undefined {
  if (typeof value !== "string" || !isHttpUrl(value)) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  // A text fragment (`#:~:text=…`) only tells a browser what to highlight: long, and nothing to read.
  if (url.hash.startsWith("#:~:")) url.hash = "";
  return /[()<>\s]/.test(url.href) ? `<${url.href.replace(/[<>\s]/g, encodeURIComponent)}>` : url.href;
}

function linked(title: unknown, link: unknown): string {
  const href = target(link);
  return href ? `[${label(title)}](${href})` : text(title);
}

const first = (o: Obj, keys: string[]): unknown => keys.map((k) => o[k]).find((v) => v !== undefined && v !== null && v !== "");
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const count = (n: number) => n.toLocaleString("en-US");

function facts(o: Obj): string[] {
  const out: string[] = [];
  for (const key of FACT_KEYS) {
    const v = o[key];
    if (typeof v === "string" || typeof v === "number") out.push(text(v));
    else if (isObj(v) && typeof v.name === "string") out.push(text(v.name));
  }
  if (typeof o.rating === "number") out.push(`rated ${o.rating}${typeof o.reviews === "number" ? ` (${count(o.reviews)} reviews)` : ""}`);
  if (typeof o.original === "string" && target(o.original)) out.push(`image ${target(o.original)}`);
  return out;
}

/** `1. [Title](link) · source · date` and the snippet (or an answer's list) indented under it. */
function item(n: number, o: Obj): string[] {
  const title = first(o, TITLE_KEYS) ?? first(o, LINK_KEYS) ?? "(untitled)";
  const line = [linked(title, first(o, LINK_KEYS)), ...facts(o)].join(" · ");
  const out = [`${n}. ${line}`];
  const snippet = first(o, SNIPPET_KEYS);
  if (snippet !== undefined) out.push(`   ${text(snippet)}`);
  if (Array.isArray(o.list)) for (const entry of o.list) out.push(`   - ${listEntry(entry)}`);
  if (Array.isArray(o.extensions) && o.extensions.length) out.push(`   ${o.extensions.map(text).join(" · ")}`);
  return out;
}

function listEntry(entry: unknown): string {
  if (!isObj(entry)) return text(entry);
  return [entry.title, entry.snippet].filter((v) => v !== undefined).map(text).join(": ");
}

function aiOverview(o: Obj): string[] {
  const out: string[] = [];
  for (const block of Array.isArray(o.text_blocks) ? o.text_blocks : []) {
    if (!isObj(block)) continue;
    if (block.type === "heading" && block.snippet) out.push(`**${text(block.snippet)}**`);
    else if (block.snippet) out.push(text(block.snippet));
    if (Array.isArray(block.list)) for (const entry of block.list) out.push(`- ${listEntry(entry)}`);
  }
  const refs = Array.isArray(o.references) ? o.references.filter(isObj) : [];
  if (refs.length) {
    out.push("", "Sources:");
    refs.forEach((r, i) => out.push(`${i + 1}. ${[linked(r.title ?? r.link, r.link), ...facts(r)].join(" · ")}`));
  }
  return out;
}

/** An object block (knowledge graph, product): its title and facts, its text, then its key–value rows and lists. */
function record(o: Obj): string[] {
  const title = first(o, TITLE_KEYS);
  const head = [title === undefined ? undefined : `**${linked(title, first(o, LINK_KEYS))}**`, ...facts(o)].filter(Boolean);
  const out = head.length ? [head.join(" · ")] : [];
  const snippet = first(o, SNIPPET_KEYS);
  if (snippet !== undefined) out.push(text(snippet));
  for (const [key, value] of Object.entries(o)) {
    if ([...TITLE_KEYS, ...LINK_KEYS, ...SNIPPET_KEYS, ...FACT_KEYS, "rating", "reviews", "thumbnail", "images"].includes(key)) continue;
    if (typeof value === "string" || typeof value === "number") out.push(`- ${fieldName(key)}: ${text(value)}`);
    else if (Array.isArray(value) && value.every((v) => typeof v === "string")) {
      if (value.length) out.push(`- ${fieldName(key)}: ${value.map(text).join("; ")}`);
    } else if (isObj(value) && Object.values(value).every((v) => typeof v === "string" || typeof v === "number")) {
      for (const [k, v] of Object.entries(value)) out.push(`- ${fieldName(k)}: ${text(v)}`);
    }
  }
  return out;
}

/** A field's name as a label (a knowledge graph's attribute names come from the page). */
const fieldName = (key: string) => text(key.replace(/_/g, " "));

function block(key: string, value: unknown): string[] {
  if (key === "ai_overview" && isObj(value)) return aiOverview(value);
  // The web results page's local pack: its places (its link to more places only repeats the search).
  if (isObj(value) && Array.isArray(value.places)) return block(key, value.places);
  if (Array.isArray(value)) {
    const items = value.filter(isObj);
    const term = TERMS[key];
    if (term) return [items.map((o) => text(o[term] ?? "")).filter(Boolean).join("; ")];
    return items.flatMap((o, i) => item(i + 1, o));
  }
  if (isObj(value)) return record(value);
  return value === undefined || value === null ? [] : [text(value)];
}

const isEmpty = (v: unknown): boolean =>
  v === undefined || v === null || (Array.isArray(v) ? v.length === 0 : isObj(v) ? Object.values(v).every(isEmpty) : false);

function titled(key: string): string {
  return BLOCKS.find(([k]) => k === key)?.[1] ?? text(key.replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase()));
}

export interface MarkdownParts {
  title: string;
  /** Short facts about the search, on one line under the title. */
  about: string[];
  blocks: Obj;
  /** Lines after the blocks (the next page's link). */
  footer?: string[];
  /** Shown under the heading, as a quote (no results, a failed job). */
  notice?: string;
}

/** The rendering itself: title, the line about the search, a section per non-empty block. */
export function renderMarkdown(p: MarkdownParts): string {
  const out = [`# ${text(p.title)}`];
  if (p.about.length) out.push("", p.about.join(" · "));
  if (p.notice) out.push("", `> ${text(p.notice)}`);
  const keys = [...BLOCKS.map(([k]) => k).filter((k) => k in p.blocks), ...Object.keys(p.blocks).filter((k) => !KNOWN.has(k) && !NOT_BLOCKS.has(k))];
  for (const key of keys) {
    const value = p.blocks[key];
    if (isEmpty(value)) continue;
    const lines = block(key, value);
    if (lines.length) out.push("", `## ${titled(key)}`, "", ...lines);
  }
  if (p.footer?.length) out.push("", ...p.footer);
  return `${out.join("\n")}\n`;
}

/** `served`: the layout of the page the result came from (docs/LAYOUTS.md), shown when it is the light one. */
function searchFacts(sp: Obj, info: Obj | undefined, served?: unknown): string[] {
  const about: string[] = [];
  const engine = sp.engine ?? "web";
  about.push(`engine ${text(engine)}${sp.tbm ? ` (tbm=${text(sp.tbm)})` : ""}`);
  const page = typeof sp.page === "number" ? sp.page : typeof info?.page_number === "number" ? info.page_number : undefined;
  if (page !== undefined) about.push(`page ${page}`);
  for (const key of ["country", "gl", "language", "hl", "device", "location", "location_used"]) {
    if (typeof sp[key] === "string") about.push(`${key.replace("_used", "")} ${text(sp[key])}`);
  }
  if (typeof info?.total_results === "number") about.push(`about ${count(info.total_results)} results`);
  if (served === "light") about.push("light page (no AI overview, top stories or knowledge panel)");
  return about;
}

/** A job's result (GET /v1/jobs/{id}, the MCP tools): what was searched, the job, then the blocks. */
export function jobMarkdown(body: JobResponse): string {
  const { job, result } = body;
  const { search_parameters: sp = {}, search_information: info, ...blocks } = (result ?? {}) as Obj;
  const params = job.params as unknown as Obj;
  const subject = (sp as Obj).query ?? params.query ?? params.product_id ?? "";
  const credits = job.status === "completed" || job.status === "failed" ? ` · ${job.credits} credit${job.credits === 1 ? "" : "s"}` : "";
  const facts = searchFacts({ ...params, ...(sp as Obj), engine: (sp as Obj).engine ?? job.endpoint }, isObj(info) ? info : undefined, blocks.layout);
  const about = [...facts, `job ${job.id} ${job.status}${credits}`];
  const notice =
    job.status === "failed"
      ? `The job failed: ${job.error ?? "no result"}. No credits were charged.`
      : job.status !== "completed"
        ? `The job is ${job.status} on the ${job.queue} queue: read it again with get_job (jobId ${job.id}) for its result.`
        : undefined;
  return renderMarkdown({ title: `${subject}`, about, blocks, ...(notice ? { notice } : {}) });
}

/** The compatibility endpoint's envelope: its echo, then the blocks, then the next page's link. */
export function envelopeMarkdown(envelope: Obj): string {
  const meta = isObj(envelope.search_metadata) ? envelope.search_metadata : {};
  const sp = isObj(envelope.search_parameters) ? envelope.search_parameters : {};
  const info = isObj(envelope.search_information) ? envelope.search_information : undefined;
  const subject = sp.q ?? sp.product_id ?? "";
  const about = [...searchFacts(sp, info, meta.layout), `search ${text(meta.id ?? "")} ${text(meta.status ?? "")}`.trim()];
  const pages = isObj(envelope.serpapi_pagination) ? envelope.serpapi_pagination : undefined;
  const next = target(pages?.next);
  return renderMarkdown({
    title: String(subject),
    about,
    blocks: envelope,
    ...(typeof envelope.error === "string" ? { notice: envelope.error } : {}),
    ...(next ? { footer: [`Next page: ${next}`] } : {}),
  });
}
