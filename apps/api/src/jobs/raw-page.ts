/**
 * A completed job's upstream page, for its owner only: GET /v1/jobs/{id}/html here, and the
 * compatibility endpoint's `raw_html_file` and `output=html` (compat/formats.ts).
 *
 * The page is the upstream's, not ours: it is served in a sandbox (CSP `sandbox`, no script, no
 * request to any host), so its scripts never run with this origin. A client that accepts `br` gets
 * the stored bytes as they are; any other gets them decompressed.
 */
import type { Request, Response } from "express";
import { ApiError } from "@serp/shared";
import { PageStoreUnavailableError, RAW_PAGE_ENCODING, RawPageMissingError, decompressPage, type JobRecord, type KeptPage, type RawPageStore } from "@serp/store";

/**
 * The worker keeps the page just after the job settles (compressing it takes a few ms), so a reader
 * that asks the moment the answer arrives may come early: for a job completed this recently, wait
 * for it this long.
 */
const JUST_COMPLETED_MS = 10_000;
const WAIT_MS = 2_000;
const POLL_MS = 15;

/** Sandboxed: no script, plugin, form or navigation, and nothing loaded from anywhere. */
const PAGE_CSP = "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'";

/** Whether a completed job's page may still be kept (the link the compatibility endpoint writes). */
export function pageMayBeKept(record: JobRecord, retentionSeconds: number, now = Date.now()): boolean {
  const { status, completedAt } = record.job;
  if (retentionSeconds <= 0 || status !== "completed" || !completedAt) return false;
  return Date.parse(completedAt) + retentionSeconds * 1000 > now;
}

/**
 * The kept page of a job the caller owns, or a 404 that says why there is none (never a 500 for a
 * page that is gone).
 */
export async function rawPageOf(store: RawPageStore, record: JobRecord, what = "job"): Promise<KeptPage> {
  const { id, status, completedAt } = record.job;
  if (!store.enabled) throw new ApiError("not_found", "This service keeps no upstream pages");
  if (status !== "completed") {
    throw new ApiError("not_found", `No page for ${what} ${id}: it is ${status}; a page is kept only for a completed ${what}`);
  }
  // A result answered from the cache was parsed from the page of the job that fetched it.
  const source = record.cachedFrom ?? id;
  const read = () => readPage(store, source, id, what);
  let page = await read();
  // Not for a page whose retention has run out: it is gone, not late.
  if (!page && completedAt && Date.now() - Date.parse(completedAt) < Math.min(JUST_COMPLETED_MS, store.retentionSeconds * 1000)) {
    const until = Date.now() + WAIT_MS;
    while (!page && Date.now() < until) {
      await new Promise((r) => setTimeout(r, POLL_MS));
      page = await read();
    }
  }
  if (!page) {
    throw new ApiError("not_found", `The page of ${what} ${id} is no longer kept (pages are kept ${store.retentionSeconds} s after completion)`);
  }
  return page;
}

async function readPage(store: RawPageStore, source: string, id: string, what: string): Promise<KeptPage | null> {
  try {
    return await store.compressed(source);
  } catch (err) {
    if (err instanceof RawPageMissingError) {
      // The record outlived the bytes: swept early, or this API does not see the workers' folder.
      const hint = store.blobs.kind === "folder" ? ": the API and the workers must share RAW_PAGES_DIR, or keep pages in a bucket (RAW_PAGES_S3_BUCKET)" : "";
      throw new ApiError("not_found", `The page of ${what} ${id} is gone from the page store${hint}`);
    }
    if (err instanceof PageStoreUnavailableError) throw new ApiError("unavailable", "The page store is not answering; try again shortly", undefined, 2);
    // A refusal (credentials, permissions) is the operator's to fix: a logged 500.
    throw err;
  }
}

export async function sendRawPage(req: Request, res: Response, page: KeptPage): Promise<void> {
  res.setHeader("Content-Type", page.contentType);
  res.setHeader("Content-Security-Policy", PAGE_CSP);
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Cache-Control", "private, max-age=300");
  res.vary("Accept-Encoding");
  if (req.get("accept-encoding") && req.acceptsEncodings(RAW_PAGE_ENCODING) === RAW_PAGE_ENCODING) {
    res.setHeader("Content-Encoding", RAW_PAGE_ENCODING);
    res.send(page.data);
    return;
  }
  res.send(Buffer.from(await decompressPage(page.data), "utf8"));
}
