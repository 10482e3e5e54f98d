import { KINDS } from "./kinds/index.js";

/** The eight job kinds (SPEC §2.1), in the order ./kinds/index.ts lists them. */
export type Endpoint = keyof typeof KINDS;
/** Object.keys types the keys as strings: they are the table's, and there is at least one. */
export const ENDPOINTS = Object.keys(KINDS) as readonly Endpoint[] as readonly [Endpoint, ...Endpoint[]];

export function isEndpoint(name: string): name is Endpoint {
  return (ENDPOINTS as readonly string[]).includes(name);
}

export const QUEUES = ["live", "fast", "regular"] as const;
export type QueueName = (typeof QUEUES)[number];

export const JOB_STATUSES = ["pending", "processing", "completed", "failed"] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export const FINAL_STATUSES: readonly JobStatus[] = ["completed", "failed"];

/** `web-shopping-product` → `web_shopping_product`: the engine value of SPEC §2.5. */
export function engineOf(endpoint: Endpoint): string {
  return endpoint.replaceAll("-", "_");
}
