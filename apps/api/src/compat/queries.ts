/**
 * The query each compatibility search was asked with, kept beside its job for as long as the job.
 * GET /searches/<id>.json parses it again, so the archive answers as /search.json did: the engine
 * as sent (`google`, not `web`), `tbm`, the product view, and `async` (whose pending search reads
 * `Processing`). A job made through POST /v1/jobs has none: it is rebuilt from its params instead.
 */
import type { Redis } from "ioredis";
import type { KeySpace } from "@serp/store";

/** The parameters `parseSearch` reads; nothing else is kept (never the key). */
const KEPT = ["engine", "q", "gl", "hl", "device", "location", "uule", "start", "tbm", "product_id", "offers", "specs", "async"] as const;

export type SearchQuery = Partial<Record<(typeof KEPT)[number], string>>;

/** The parameters of a validated request worth keeping: the single string values `parseSearch` took. */
export function keptQuery(query: Record<string, unknown>): SearchQuery {
  const out: SearchQuery = {};
  for (const name of KEPT) {
    const value = query[name];
    if (typeof value === "string" && value !== "") out[name] = value;
  }
  return out;
}

export class SearchQueries {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Pick<KeySpace, "compatQuery">,
    /** The job retention: the query is no use once its job is gone. */
    private readonly ttlSeconds: number,
  ) {}

  async save(jobId: string, query: SearchQuery): Promise<void> {
    await this.redis.set(this.keys.compatQuery(jobId), JSON.stringify(query), "EX", this.ttlSeconds);
  }

  async load(jobId: string): Promise<SearchQuery | undefined> {
    const raw = await this.redis.get(this.keys.compatQuery(jobId));
    if (!raw) return undefined;
    try {
      const parsed: unknown = JSON.parse(raw);
      return parsed && typeof parsed === "object" ? keptQuery(parsed as Record<string, unknown>) : undefined;
    } catch {
      return undefined;
    }
  }
}
