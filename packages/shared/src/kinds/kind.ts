import type { z } from "zod";

/**
 * Everything `shared` knows about one result kind (one job endpoint), kept in the kind's own module
 * so that adding or changing a kind touches that module and the list in ./index.ts. The upstream's
 * half (URL forms, fetch rungs, parser) lives in packages/upstream.
 */
export interface Kind<P extends z.ZodObject = z.ZodObject, B extends z.ZodObject = z.ZodObject> {
  /** The request's params: a strict object of the fields the kind takes, from ../fields.ts. */
  params: P;
  /** The result blocks its parser returns (every result also carries `search_parameters`). */
  blocks: B;
  /** Params filled in when the request leaves them out, besides country and language (every kind's). */
  defaults?: Partial<z.output<P>>;
  /**
   * The list whose positions continue across pages, and its results per page (the upstream's
   * `start` step): page 2 of a web search begins at 11, as in the reference API.
   */
  pagedList?: { list: keyof z.output<B> & string; step: number };
  /** What a completed job costs, from its result (SPEC §8), and that rule in words for the MCP tool; absent: 1 credit. */
  credits?: { of: (result: unknown) => number; words: string };
  /** Its MCP tool: a title, and what the tool returns (the tool catalog adds how it runs and what it costs). */
  tool: { title: string; returns: string };
}

/** Types a kind's module, keeping its schemas' own types for z.infer. */
export function defineKind<P extends z.ZodObject, B extends z.ZodObject>(kind: Kind<P, B>): Kind<P, B> {
  return kind;
}
