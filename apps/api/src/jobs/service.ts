import type { Logger } from "pino";
import type { LocationRow } from "@serp/upstream";
import type { Metrics } from "@serp/metrics";
import {
  ApiError,
  FINAL_STATUSES,
  JOB_ERRORS,
  RESERVED_CREDITS,
  isJobId,
  jobRequestSchema,
  newJobId,
  pendingJob,
  withDefaults,
  type Country,
  type Job,
  type JobParams,
  type JobRequestInput,
  type JobResponse,
  type JobStatus,
  type QueueName,
} from "@serp/shared";
import {
  fairPriority,
  jobResponse,
  scrapePayloadOf,
  type Created,
  type IdempotencyClaim,
  type IdempotencyKeys,
  type JobRecord,
  type JobStore,
  type NewJob,
  type ReplicaBarrier,
  type ResultCache,
  type ScrapeProducers,
} from "@serp/store";
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
  search?(prefix: string, limit: number): LocationRow[];
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
  idempotency?: IdempotencyKeys;
  /** The result cache, for jobs that opt in with cacheMaxAgeSeconds (none: they run as any other). */
  cache?: { store: ResultCache; hitCredits: number };
  /** Live jobs failed here (past the deadline) count in serp_jobs_total beside the workers' settlements. */
  metrics?: Pick<Metrics, "jobsTotal">;
  /** Replicas that must hold a job before it is answered (REDIS_WAIT_REPLICAS; none: answered at once). */
  replicas?: Pick<ReplicaBarrier, "reached" | "replicas" | "timeoutMs">;
}

/** A submission's Idempotency-Key, and the body as sent, which its claim fingerprints. */
export interface Idempotency {
  key: string;
  body: unknown;
}

/**
 * A job request built by the app (the compatibility search, an MCP tool call), parsed as POST
 * /v1/jobs parses its body (routes/jobs.ts declares it), refused alike.
 */
export function jobRequestOf(body: unknown): JobRequestInput {
  const parsed = jobRequestSchema.safeParse(body);
  if (!parsed.success) throw invalidRequest(fieldIssues(parsed.error));
  return parsed.data;
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
  private warnedUnreplicatedAt = 0;
  constructor(private readonly deps: JobServiceDeps) {}

  /**
   * Validates, reserves a credit, stores and enqueues a job; waits for it on the live queue. With
   * REDIS_WAIT_REPLICAS, answered once the job is on that many replicas, so a failover keeps it:
   * when Redis fails meanwhile, the answer is a 503 (a keyed retry finds the job, or makes it again).
   */
  async submit(submitter: Submitter, req: JobRequestInput, idempotency?: Idempotency): Promise<SubmitOutcome> {
    const outcome = await this.submitted(submitter, req, idempotency);
    const barrier = this.deps.replicas;
    if (barrier && !(await barrier.reached()) && Date.now() - this.warnedUnreplicatedAt > 10_000) {
      this.warnedUnreplicatedAt = Date.now();
      this.deps.logger.warn(
        { replicas: barrier.replicas, timeoutMs: barrier.timeoutMs },
        "REDIS_WAIT_REPLICAS: fewer replicas confirmed a submission in time (a replica down?); answering anyway, a failover now could lose it",
      );
    }
    return outcome;
  }

  private async submitted(submitter: Submitter, req: JobRequestInput, idempotency?: Idempotency): Promise<SubmitOutcome> {
    const startedMs = performance.now();
    if (req.postbackUrl) {
      const problem = postbackUrlProblem(req.postbackUrl, { allowPrivateTargets: this.deps.allowPrivateWebhookTargets });
      if (problem) throw invalidRequest([{ field: "postbackUrl", message: problem }]);
    }
    const location = (req.params as { location?: string }).location;
    if (location !== undefined && this.deps.locations.isKnown(location) === false) {
      throw invalidRequest([{ field: "params.location", message: "is not a known location (use a canonical name such as Austin,Texas,United States)" }]);
    }
    const params = withDefaults(req, (name) => this.deps.locations.countryOf(name));
    // A retried submission (same key, same body) is answered with its first job: no second job, no second charge.
    let claim = idempotency && this.deps.idempotency ? this.deps.idempotency.claim(submitter.accountId, idempotency.key, idempotency.body) : undefined;
    for (let takenOver = false; ; takenOver = true) {
      const made = await this.create(submitter, req, params, startedMs, claim);
      if (!("claimHeld" in made)) return made;
      if (made.claimHeld.outcome === "key_reused") {
        throw new ApiError("idempotency_key_reused", "This Idempotency-Key was already used with a different request body; use a new key for a new job");
      }
      const jobId = made.claimHeld.replayOf!;
      const replayed = await this.replay(submitter.accountId, jobId);
      if (replayed) return replayed;
      // The key names a job that is gone (its record expired): the key is free again, once; a
      // second gone job means another retry with this key took it over at the same moment.
      if (takenOver) throw new ApiError("idempotency_key_in_use", "A submission with this Idempotency-Key is still being created; retry in a moment", undefined, 1);
      claim = { ...claim!, staleJob: jobId };
    }
  }

  /**
   * Creates the job (answered from the cache, or reserved, stored with its idempotency claim and
   * enqueued), or says whose job the claim already names.
   */
  private async create(
    { accountId, maxInFlight, onInFlight }: Submitter, req: JobRequestInput, params: JobParams, startedMs: number, claim?: IdempotencyClaim,
  ): Promise<SubmitOutcome | { claimHeld: Created<"replay" | "key_reused"> }> {
    const id = newJobId();
    const createdAt = new Date().toISOString();
    const { cacheMaxAgeSeconds } = req;
    const newJob: NewJob = {
      id, accountId, endpoint: req.endpoint, queue: req.queue, params, postbackUrl: req.postbackUrl, createdAt, cacheMaxAgeSeconds,
      replyTo: req.queue === "live" ? this.deps.waiter.replyChannel : undefined,
    };
    // A live job the cache can answer is answered here, completed at once (./cache-hit.ts).
    if (req.queue === "live" && cacheMaxAgeSeconds && this.deps.cache?.store.enabled) {
      const { store, hitCredits } = this.deps.cache;
      const hit = await answerFromCache({ jobs: this.deps.jobs, cache: store, hitCredits }, newJob, startedMs, claim);
      if (hit && "claimHeld" in hit) return hit;
      if (hit) return { status: 200, body: toResponse(hit.record), record: hit.record };
    }
    const created = await this.deps.jobs.create(newJob, RESERVED_CREDITS, maxInFlight ?? (await this.deps.maxInFlight?.(accountId)) ?? 0, claim);
    const { outcome, inFlight } = created;
    if (outcome === "replay" || outcome === "key_reused") return { claimHeld: { ...created, outcome } };
    if (outcome !== "no_account") onInFlight?.(inFlight);
    if (outcome === "concurrency_limited") {
      throw new ApiError("concurrency_limited", "Too many jobs pending or processing for this account; retry when some finish", undefined, 1);
    }
    if (outcome === "insufficient_credits") {
      throw new ApiError("insufficient_credits", "Not enough credits: a job needs 1 available credit");
    }
    if (outcome === "no_account") throw new ApiError("unauthorized", "The account of this key no longer exists");
    return this.run(newJob, fairPriority(inFlight), claim !== undefined);
  }

  /** Enqueues a job just stored; answers 202 at once, or for a live job once it is final. */
  private async run(newJob: NewJob, priority: number, keyed: boolean): Promise<SubmitOutcome> {
    const { id, accountId, queue } = newJob;
    const wait = queue === "live" ? this.deps.waiter.wait(id, this.deps.liveDeadlineMs, async () => isFinal(await this.deps.jobs.status(id))) : undefined;
    // As the store wrote it (JobStore.create): no need to read it back.
    const job = pendingJob(newJob);
    try {
      await this.enqueue(job, accountId, priority);
    } catch (err) {
      wait?.cancel();
      // Stored but not queued (Redis went away between the two). With an Idempotency-Key the
      // client's retry finds the job and enqueues it (replay); without one nobody will, so it is
      // settled now (failed, 0 credits). Either way, the sweeper settles what is left (apps/worker).
      if (!keyed) {
        await this.deps.jobs
          .finalize(id, accountId, { status: "failed", credits: 0, latencyMs: null, error: JOB_ERRORS.internal, result: null, completedAt: new Date().toISOString() })
          .catch(() => undefined);
      }
      throw err;
    }
    if (!wait) return { status: 202, body: { job, message: `Job queued on ${queue}; poll GET /v1/jobs/${id} for its result` } };
    const final = await wait.done;
    if (final === false) await this.expireLive(id, accountId, job);
    // The record came with the settlement, unless the waiter was woken another way.
    const record = typeof final === "object" ? final : await this.deps.jobs.get(id);
    if (!record) throw new ApiError("internal_error", "The job record disappeared");
    return { status: 200, body: toResponse(record), record };
  }

  /**
   * Puts a stored job on its queue under its own id (BullMQ takes an id once: enqueueing a job
   * already queued changes nothing), and off the sweeper's list. Its payload is built from the job
   * alone, so a replay can enqueue a job whose first submission never did.
   */
  private async enqueue(job: Pick<Job, "id" | "endpoint" | "queue" | "params" | "cacheMaxAgeSeconds">, accountId: string, priority: number): Promise<void> {
    // The worker must look the cache up before it fetches (no early fetch of the params carried).
    const payload = scrapePayloadOf(job, accountId, Boolean(job.cacheMaxAgeSeconds && this.deps.cache?.store.enabled));
    // Fair order: an account's n-th job in flight waits behind every account's earlier ones.
    await this.deps.queues[job.queue].enqueue(payload, { name: job.endpoint, priority });
    // Off the sweeper's list; not waited for: when it is lost, the sweeper finds the job queued and drops it itself.
    this.deps.jobs.queued(job.id).catch(() => undefined);
  }

  /**
   * The job an earlier submission with the same key made, as that submission answered: a live job
   * once final (waiting for it, within the live deadline, when it is still running), any other job
   * at once with its current state; null when the job is gone. A job still pending is enqueued
   * again first: its first submission may have stored it and lost Redis before enqueueing it (that
   * client got a 503 and retries), and a job never enqueued would never run (a ghost).
   */
  private async replay(accountId: string, jobId: string): Promise<SubmitOutcome | null> {
    let record = await this.deps.jobs.get(jobId);
    if (!record || record.accountId !== accountId) return null;
    const { job } = record;
    // Its place in the fair order is lost with its first submission: it has waited already.
    if (job.status === "pending") await this.enqueue(job, accountId, fairPriority(1));
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
  private async expireLive(id: string, accountId: string, { endpoint, queue }: Pick<Job, "endpoint" | "queue">): Promise<void> {
    const now = new Date().toISOString();
    const changed = await this.deps.jobs.finalize(id, accountId, {
      status: "failed", credits: 0, latencyMs: null, error: JOB_ERRORS.timedOut, result: null, completedAt: now,
    });
    if (changed) {
      this.deps.logger.warn({ jobId: id }, "live job timed out");
      this.deps.metrics?.jobsTotal.inc({ endpoint, queue, status: "failed" });
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
