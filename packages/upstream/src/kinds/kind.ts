/**
 * What the upstream half of the service knows about one result kind, in one place: how to ask for
 * it, which rungs of the profile table ask, how to read the answer and how to judge what was read.
 * Each kind's module (`web-search.ts`, …) exports one of these; `index.ts` lists them, and the
 * generic code (URLs, profiles, classification, parsing and coverage, the scrape loop) reads the list.
 */
import type { BlocksByEndpoint, Endpoint, JobParams } from "@serp/shared";
import type { PageClass } from "../failures.js";
import type { Document, Element, LandmarkIndex, LandmarkSpec } from "../html/index.js";
import type { UrlForm } from "../profiles.js";
import type { UrlContext } from "../urls.js";
import type { Target } from "./url-forms.js";

/** Landmarks looked up by element id, each the first element with that id. */
export type RegionLandmarks = LandmarkIndex<Record<string, { first: LandmarkSpec }>>;

export interface UpstreamKind<E extends Endpoint> {
  /** The request for a job's params in a profile's URL form: path and query, before the base URL is put in front. */
  url(params: JobParams, form: UrlForm, ctx: UrlContext): Target;
  /**
   * Profile-table sets the kind draws from besides its own (the set named after its endpoint), each
   * with the jobs that take it; the first whose `when` holds wins, and otherwise the kind's own set.
   */
  variants?: readonly { set: string; when(params: Pick<JobParams, "device">): boolean }[];
  /** The pure parser: the upstream's body text in, typed blocks out. */
  parse(body: string): BlocksByEndpoint[E];
  coverage: {
    /** The least coverage figure (coverage.ts) of a page to be sold; 0 for kinds not measured. */
    threshold: number;
    /**
     * The results region: groups of landmark ids, the first group with any of its ids on the page
     * wins, and the region is every landmark of that group found there. None: the kind is not measured.
     */
    region?: readonly (readonly string[])[];
    /**
     * The parser's own landmarks by id, when they include the region's: its sweep of the page has then
     * found the region already, and coverage reads it there instead of sweeping the page again.
     */
    landmarks?: RegionLandmarks;
    /**
     * The blocks of the page the parser knows, for the parse that gave `blocks`: whether a link lies
     * inside one (a block it read, such as the AI overview, related questions or top stories, or one it
     * sets aside on purpose, such as video and social-post carousels). Such links count as understood
     * whether or not their targets reach the blocks. None: only links whose targets reach the blocks count.
     */
    known?(doc: Document, blocks: BlocksByEndpoint[E]): (anchor: Element) => boolean;
  };
  /**
   * A body format that carries the page inside it (web search's progressive JSON chunks): how to
   * tell it, and the page it carries. Coverage measures that page, and reports its layout as `json`.
   */
  wrapped?: { test(body: string): boolean; page(body: string): string };
  /** Whether parsed blocks hold anything to sell (a results page whose blocks do not is unparseable). */
  hasContent(blocks: BlocksByEndpoint[E]): boolean;
  /** What a page that says "nothing matched" holds when the parser cannot read it; none if the kind has no such page. */
  empty?(): BlocksByEndpoint[E];
  /**
   * Classifies an answer that is not an HTML page (a suggestion list), once the checks every kind
   * shares (redirects, blocks, HTTP errors, empty bodies) found nothing. Without it, such a body is
   * judged like a page.
   */
  classifyData?(body: string): PageClass;
}

/** Whether a block value holds something: a non-empty list, an object with a filled field, a truthy value. */
export const filled = (v: unknown): boolean =>
  Array.isArray(v) ? v.length > 0 : v !== null && typeof v === "object" ? Object.values(v).some(filled) : Boolean(v);
