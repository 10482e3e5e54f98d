export * from "./accounts.js";
export * from "./catalog.js";
export * from "./jobs.js";
export * from "./keys.js";
export * from "./limits.js";
export * from "./redis.js";
export * from "./webhooks.js";
export * from "./upstream-status.js";
