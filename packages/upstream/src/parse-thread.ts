/**
 * The body of a parse thread (see parse-pool.ts): one page in, its blocks out, by the same parsers
 * the worker's own thread would run.
 */
import type { Endpoint } from "@serp/shared";
import { PARSERS } from "./parsers/index.js";

export interface ParseTask {
  endpoint: Endpoint;
  body: string;
}

export default function parse({ endpoint, body }: ParseTask): unknown {
  return PARSERS[endpoint](body);
}
