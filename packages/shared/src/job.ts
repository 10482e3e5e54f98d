import type { Endpoint, JobStatus, QueueName } from "./endpoints.js";
import type { JobParams } from "./params.js";
import type { JobResult } from "./results.js";

/** The job as customers see it (SPEC §2.3, plus `attempts`). */
export interface Job {
  id: string;
  endpoint: Endpoint;
  queue: QueueName;
  status: JobStatus;
  params: JobParams;
  credits: number;
  latencyMs: number | null;
  error: string | null;
  attempts: number;
  createdAt: string;
  completedAt: string | null;
  postbackUrl?: string;
}

export interface JobResponse {
  job: Job;
  result: JobResult | null;
}
