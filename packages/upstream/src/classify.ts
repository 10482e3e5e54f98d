// Placeholder until the classifier lands (issue 3); replaced by the real module.
import type { Endpoint } from "@serp/shared";

/** What an upstream answer is. Only `results` and `no_results` pages are parsed. */
export type PageClass = "results" | "no_results" | "blocked" | "consent" | "js_wall" | "upstream_error";

export interface UpstreamResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The URL that was requested (redirects are not followed). */
  url: string;
}

export function classify(_res: UpstreamResponse, _endpoint: Endpoint): PageClass {
  throw new Error("classifier not implemented");
}
