/**
 * The body of a parse thread (see parse-pool.ts): one page in, its blocks and coverage figure out,
 * by the same parsers the worker's own thread would run (the figure is a small object of numbers).
 */
import type { Endpoint } from "@serp/shared";
import { parsePage } from "./coverage.js";

export interface ParseTask {
  endpoint: Endpoint;
  body: string;
}

export default function parse({ endpoint, body }: ParseTask): unknown {
  return parsePage(endpoint, body);
}
