/**
 * The forms a search is answered in, as the model API offers them: JSON (the default), the
 * upstream page itself (`output=html`, `/search.html`, `/searches/{id}.html`) and a compact markdown
 * rendering for agents (`output=md`, `/search.md`, `Accept: text/markdown`). A `.html` or `.md`
 * path decides first, then `output`, then the Accept header. Errors stay `{"error": "..."}` JSON in
 * every form, so a client reads them as it always does.
 */
import type { Request, Response } from "express";
import { ApiError } from "@serp/shared";
import type { JobRecord, RawPageStore } from "@serp/store";
import { pageMayBeKept, rawPageOf, sendRawPage } from "../jobs/raw-page.js";
import type { CompatEnvelope } from "./envelope.js";
import { envelopeMarkdown } from "./markdown.js";

export type Format = "json" | "html" | "md";

const OUTPUTS: Record<string, Format> = { json: "json", html: "html", md: "md", markdown: "md" };

/** The form asked for, or a 400 for an `output` this endpoint does not know. */
export function formatOf(req: Request): Format {
  const output = req.query.output;
  let asked: Format | undefined;
  if (output !== undefined && output !== "") {
    if (typeof output !== "string") throw new ApiError("invalid_request", "`output` parameter must be given once.");
    asked = OUTPUTS[output.toLowerCase()];
    if (!asked) throw new ApiError("invalid_request", `Unsupported \`${output.slice(0, 100)}\` output - output parameter (use json, html or md).`);
  }
  // The old Python client asks for `/searches/{id}.html` with the `output=json` of its last search: that path
  // decides. `.json` is every client's and doc's default path, so `output` and Accept still choose there.
  const extension = /\.(html|md)$/.exec(req.path)?.[1] as Format | undefined;
  if (extension) return extension;
  if (asked) return asked;
  return req.accepts(["application/json", "text/markdown"]) === "text/markdown" ? "md" : "json";
}

/** Refused before anything runs (or is billed): HTML when the service keeps no pages. */
export function checkFormat(format: Format, pages: RawPageStore): void {
  if (format === "html" && !pages.enabled) {
    throw new ApiError("invalid_request", "HTML output is not available: this service keeps no upstream pages. Use output=json or output=md.");
  }
}

/** `search_metadata.raw_html_file`: where the search's page is served, while it may be kept. */
export function rawHtmlFile(base: string, id: string): string {
  return `${base}/searches/${id}.html`;
}

/** The envelope with `raw_html_file` where the reference puts it (after the upstream URLs, before the time taken). */
function withRawHtmlFile(body: CompatEnvelope, record: JobRecord, pages: RawPageStore, base: string): CompatEnvelope {
  if (!pageMayBeKept(record, pages.retentionSeconds)) return body;
  const { total_time_taken, ...rest } = body.search_metadata;
  const search_metadata = { ...rest, raw_html_file: rawHtmlFile(base, record.job.id), ...(total_time_taken === undefined ? {} : { total_time_taken }) };
  return { ...body, search_metadata };
}

/** A search (or an archived one) to answer, in the form asked for. */
export interface SearchAnswer {
  format: Format;
  body: CompatEnvelope;
  record: JobRecord;
  pages: RawPageStore;
  base: string;
}

/** The route's typed reply (routes/define.ts): the JSON answer must fit the envelope's schema (./envelope.ts). */
export type EnvelopeReply = (status: 200, body: CompatEnvelope) => void;

/**
 * Answers a search (or an archived one) in the form asked for, the JSON through the route's typed
 * reply. The page itself is served only once the job completed; before that (an async search) the
 * JSON envelope says where it stands.
 */
export async function answer(req: Request, res: Response, o: SearchAnswer, reply: EnvelopeReply): Promise<void> {
  if (o.format === "md") {
    answerMarkdown(res, o);
    return;
  }
  res.vary("Accept");
  if (o.format === "html" && o.record.job.status === "completed") {
    await sendRawPage(req, res, await rawPageOf(o.pages, o.record, "search"));
    return;
  }
  reply(200, withRawHtmlFile(o.body, o.record, o.pages, o.base));
}

/** The markdown answer: every form's when asked for, and the only one of `/search.md`, which has no JSON to answer. */
export function answerMarkdown(res: Response, o: SearchAnswer): void {
  res.vary("Accept");
  res.type("text/markdown; charset=utf-8").send(envelopeMarkdown(withRawHtmlFile(o.body, o.record, o.pages, o.base)));
}
