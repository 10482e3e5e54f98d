import type { Logger } from "pino";
import {
  ApiError,
  FINAL_STATUSES,
  JOB_ERRORS,
  RESERVED_CREDITS,
  isJobId,
  jobRequestSchema,
  newJobId,
  withDefaults,
  type Country,
  type Job,
  type JobResponse,
  type JobStatus,
  type QueueName,
} from "@serp/shared";
import { IdempotencyStore, fairPriority, jobResponse, type JobRecord, type JobStore, type ResultCache, type ScrapePayload, type ScrapeProducers } from "@serp/store";
import { fieldIssues, invalidRequest } from "../errors.js";
import { postbackUrlProblem } from "../postback-url.js";
import type { Submitter } from "../submitter.js";
import { answerFromCache } from "./cache-hit.js";
import type { FinalWaiter } from "./final-waiter.js";

/** What the job service needs to know about locations (the upstream package provides it). */
export interface LocationCheck {
  countryOf(name: string): Country | undefined;
  /** undefined when no location list is configured: any well-formed name is accepted. */
  isKnown(name: string): boolean | undefined;
  /** Look-up by name prefix (empty without a location list). */
  search?(prefix: string, limit: number): unknown[];
  /** The list's own spelling of a name (commas tidied when the list does not hold it). */
  canonical?(name: string): string;
}

export interface JobServiceDeps {
  jobs: JobStore;
  queues: ScrapeProducers;
  waiter: FinalWaiter;
  locations: LocationCheck;
  liveDeadlineMs: number;
  logger: Logger;
  /** The account's limit on jobs pending or processing (0 = none), when the submitter does not bring it. */
  maxInFlight?: (accountId: string) => Promise<number>;
  /** Accept postback URLs on private networks (otherwise refused at submission and at delivery). */
  allowPrivateWebhookTargets?: boolean;
  /** Idempotency keys of submissions (none: the header is ignored). */
  idempotency?: IdempotencyStore;
  /** The result cache, for jobs that opt in with cacheMaxAgeSeconds (none: they run as any other). */
  cache?: { store: ResultCache; hitCredits: number };
}

/** A live job answers 200 with its final record (kept whole for callers that show more of it); the rest 202. */
export type SubmitOutcome = (
  | { status: 200; body: JobResponse; record: JobRecord }
  | { status: 202; body: { job: JobResponse["job"]; message: string } }
) & {
  /** Answered with the job an earlier submission with the same Idempotency-Key made. */
  replayed?: boolean;
};

/** The job as its owner reads it; one definition, shared with webhook payloads. */
export const toResponse = jobResponse;

export class JobService {
  constructor(private readonly deps: JobServiceDeps) {}

  /** Validates, reserves a credit, stores and enqueues a job; waits for it on the live queue. */
  async submit({ accountId, maxInFlight, onInFlight }: Submitter, body: unknown, idempotencyKey?: string): Promise<SubmitOutcome> {
    const startedMs = performance.now();
    const parsed = jobRequestSchema.safeParse(body);
    if (!parsed.success) throw invalidRequest(fieldIssues(parsed.error));
    const req = parsed.data;
    if (req.postbackUrl) {
      const problem = postbackUrlProblem(req.postbackUrl, { allowPrivateTargets: this.deps.allowPrivateWebhookTargets });
      if (problem) throw invalidRequest([{ field: "postbackUrl", message: problem }]);
    }
    const location = (req.params as { location?: string }).location;
    if (location !== undefined && this.deps.locations.isKnown(location) === false) {
      throw invalidRequest([{ field: "params.location", message: "is not a known location (use a canonical name such as Austin,Texas,United States)" }]);
    }
    const params = withDefaults(req, (name) => this.deps.locations.countryOf(name));
    const id = newJobId();
    // A retried submission (same key, same body) is answered with its first job: no second job, no second charge.
    const idem = idempotencyKey && this.deps.idempotency ? { store: this.deps.idempotency, key: idempotencyKey } : undefined;
    if (idem) {
      const claim = await idem.store.claim(accountId, idem.key, IdempotencyStore.fingerprint(body), id);
      if (claim.kind === "mismatch") {
        throw new ApiError("idempotency_key_reused", "This Idempotency-Key was already used with a different request body; use a new key for a new job");
      }
      if (claim.kind === "replay") return this.replay(accountId, claim.jobId);
    }
    const release = () => idem?.store.release(accountId, idem.key, id).catch(() => undefined);
    const createdAt = new Date().toISOString();
    const { cacheMaxAgeSeconds } = req;
    // A live job the cache can answer is answered here, completed at once (./cache-hit.ts).
    if (req.queue === "live" && cacheMaxAgeSeconds && this.deps.cache?.store.enabled) {
      const { store, hitCredits } = this.deps.cache;
      const newJob = { id, accountId, endpoint: req.endpoint, queue: req.queue, params, createdAt, cacheMaxAgeSeconds };
      let hit: JobRecord | null;
      try {
        hit = await answerFromCache({ jobs: this.deps.jobs, cache: store, hitCredits }, newJob, startedMs);
      } catch (err) {
        await release(); // Refused (402) or failed: the Idempotency-Key stays free for a retry.
        throw err;
      }
      if (hit) return { status: 200, body: toResponse(hit), record: hit };
    }
    const { outcome: created, inFlight } = await this.deps.jobs.create(
      {
        id, accountId, endpoint: req.endpoint, queue: req.queue, params, postbackUrl: req.postbackUrl, createdAt,
        replyTo: req.queue === "live" ? this.deps.waiter.replyChannel : undefined, cacheMaxAgeSeconds,
      },
      RESERVED_CREDITS,
      maxInFlight ?? (await this.deps.maxInFlight?.(accountId)) ?? 0,
    );
    if (created !== "no_account") onInFlight?.(inFlight);
    if (created !== "created") await release();
    if (created === "concurrency_limited") {
      throw new ApiError("concurrency_limited", "Too many jobs pending or processing for this account; retry when some finish", undefined, 1);
    }
    if (created === "insufficient_credits") {
      throw new ApiError("insufficient_credits", "Not enough credits: a job needs 1 available credit");
    }
    if (created === "no_account") throw new ApiError("unauthorized", "The account of this key no longer exists");

    const wait =
      req.queue === "live"
        ? this.deps.waiter.wait(id, this.deps.liveDeadlineMs, async () => isFinal(await this.deps.jobs.status(id)))
        : undefined;
    try {
      const payload: ScrapePayload = req.queue === "live" ? { jobId: id, params, accountId } : { jobId: id, accountId };
      // The worker must look the cache up before it fetches (no early fetch of the params carried).
      if (cacheMaxAgeSeconds && this.deps.cache?.store.enabled) payload.useCache = true;
      // Fair order: an account's n-th job in flight waits behind every account's earlier ones.
      await this.deps.queues[req.queue].enqueue(payload, { name: req.endpoint, priority: fairPriority(inFlight) });
    } catch (err) {
      wait?.cancel();
      await release();
      // Not enqueued: release the reservation so nothing is lost or billed, then report.
      await this.deps.jobs
        .finalize(id, accountId, { status: "failed", credits: 0, latencyMs: null, error: JOB_ERRORS.internal, result: null, completedAt: new Date().toISOString() })
        .catch(() => undefined);
      throw err;
    }

    if (!wait) {
      // The record was just written as exactly this: no need to read it back.
      const job: Job = {
        id, endpoint: req.endpoint, queue: req.queue, status: "pending", params, credits: 0, latencyMs: null, error: null,
        attempts: 0, createdAt, completedAt: null, ...(req.postbackUrl ? { postbackUrl: req.postbackUrl } : {}),
        ...(cacheMaxAgeSeconds !== undefined ? { cacheMaxAgeSeconds, cacheHit: false } : {}),
      };
      return { status: 202, body: { job, message: `Job queued on ${req.queue}; poll GET /v1/jobs/${id} for its result` } };
    }
    const final = await wait.done;
    if (final === false) await this.expireLive(id, accountId, req.queue);
    // The record came with the settlement, unless the waiter was woken another way.
    const record = typeof final === "object" ? final : await this.deps.jobs.get(id);
    if (!record) throw new ApiError("internal_error", "The job record disappeared");
    return { status: 200, body: toResponse(record), record };
  }

  /**
   * The job an earlier submission with the same key made, as that submission answered: a live job
   * once final (waiting for it, within the live deadline, when it is still running), any other job
   * at once with its current state. A claim whose job is not written yet is a moment old: wait for it.
   */
  private async replay(accountId: string, jobId: string): Promise<SubmitOutcome> {
    let record = await this.deps.jobs.get(jobId);
    for (let i = 0; !record && i < 20; i++) {
      await new Promise((r) => setTimeout(r, 50));
      record = await this.deps.jobs.get(jobId);
    }
    if (!record || record.accountId !== accountId) {
      throw new ApiError("idempotency_key_in_use", "A submission with this Idempotency-Key is still being created; retry in a moment", undefined, 1);
    }
    const { job } = record;
    if (job.queue !== "live") {
      return { status: 202, replayed: true, body: { job, message: `Job already submitted with this Idempotency-Key; poll GET /v1/jobs/${jobId} for its result` } };
    }
    if (!isFinal(job.status)) {
      const left = Date.parse(job.createdAt) + this.deps.liveDeadlineMs - Date.now();
      const wait = this.deps.waiter.wait(jobId, Math.max(left, 0) + 1_000, async () => isFinal(await this.deps.jobs.status(jobId)));
      const final = await wait.done;
      record = typeof final === "object" ? final : ((await this.deps.jobs.get(jobId)) ?? record);
    }
    return { status: 200, replayed: true, body: toResponse(record), record };
  }

  /** Past the live deadline the job fails with `timed out`; a late worker result is discarded. */
  private async expireLive(id: string, accountId: string, queue: QueueName): Promise<void> {
    const now = new Date().toISOString();
    const changed = await this.deps.jobs.finalize(id, accountId, {
      status: "failed", credits: 0, latencyMs: null, error: JOB_ERRORS.timedOut, result: null, completedAt: now,
    });
    if (changed) {
      this.deps.logger.warn({ jobId: id }, "live job timed out");
      // Spare the workers a job nobody waits for any more (it may already be running).
      await this.deps.queues[queue].queue.remove(id).catch(() => undefined);
    }
  }

  async get(accountId: string, id: string): Promise<JobResponse> {
    const record = isJobId(id) ? await this.deps.jobs.get(id) : null;
    // Another account's job is as unknown as an expired one: 404, never 403.
    if (!record || record.accountId !== accountId) throw new ApiError("not_found", `No job ${id}`);
    return toResponse(record);
  }
}

function isFinal(status: JobStatus | null): boolean {
  return !status || FINAL_STATUSES.includes(status);
}
