/**
 * Parsing on worker threads. A worker runs many jobs at once on one event loop; parsing a page is
 * the one long piece of CPU work in a job, and while it runs no other job's Redis reply or response
 * is read. With a fixed upstream delay the jobs fall into step: their pages arrive together, are
 * parsed one after another, and every job of the batch waits for the slowest. Parsing on threads
 * keeps the event loop free for I/O, so each job finishes as soon as its own page is parsed, and a
 * process can use more than one core. Pages go to the thread as text and blocks (with the page's
 * coverage figure, a few numbers) come back by structured clone, which costs far less than the parse.
 */
import { availableParallelism } from "node:os";
import { Piscina } from "piscina";
import type { Endpoint } from "@serp/shared";
import type { Parsed } from "./coverage.js";
import type { ParseTask } from "./parse-thread.js";

export interface ParsePool {
  parse<E extends Endpoint>(endpoint: E, body: string): Promise<Parsed<E>>;
  /** Waits for parses in flight, then stops the threads. */
  close(): Promise<void>;
}

/**
 * The thread's module: the bundle's sibling file in production; from source, a small ES module that
 * registers the TypeScript loader in the thread first. (Loaded any other way, tsx would compile the
 * parsers to CommonJS in the thread, and they run several times slower there.)
 */
function threadModule(): string {
  const fromSource = import.meta.url.endsWith(".ts");
  return new URL(fromSource ? "./parse-thread-source.mjs" : "./parse-thread.mjs", import.meta.url).href;
}

/** Young-generation size of a parse thread (V8's default is about 16 MB on 64-bit). */
const PARSE_YOUNG_GENERATION_MB = 96;

/** The default thread count: one per core beyond the event loop's, at least one. */
export const defaultParseThreads = (): number => Math.max(1, availableParallelism() - 1);

export function createParsePool(threads: number): ParsePool {
  const pool = new Piscina<ParseTask, unknown>({
    filename: threadModule(),
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: Number.POSITIVE_INFINITY,
    // A parse allocates a tree of some megabytes; a young generation that holds it lets it die
    // young instead of being copied and promoted (300 parses of a web page in a thread: 12.5 → 11.2 ms each).
    resourceLimits: { maxYoungGenerationSizeMb: PARSE_YOUNG_GENERATION_MB },
  });
  return {
    parse: <E extends Endpoint>(endpoint: E, body: string) => pool.run({ endpoint, body }) as Promise<Parsed<E>>,
    close: () => pool.close(),
  };
}
