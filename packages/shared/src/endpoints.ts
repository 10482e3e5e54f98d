/** The eight job kinds (SPEC §2.1) and the engine value each one reports in `search_parameters`. */
export const ENDPOINTS = [
  "web-shopping-search",
  "web-shopping-product",
  "web-shopping-product-info",
  "web-search",
  "web-images",
  "web-news",
  "web-local",
  "web-autocomplete",
] as const;
export type Endpoint = (typeof ENDPOINTS)[number];

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
