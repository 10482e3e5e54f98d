/**
 * Outgoing proxies: what a try's failure says about its exit, and the proxy a transport is handed.
 * Pools, sessions and health are in exits/ (config.ts, router.ts, health.ts).
 */
export { makeProxy, type Proxy } from "./exits/router.js";

export type ProxyFailure = "blocked" | "timeout" | "network";
