/**
 * The worker's gauges read when /metrics is scraped: its browser pages, and the fleet's exits per
 * pool (how many, how many rest now). Exit health lives in Redis for the whole fleet, so every
 * worker shows the same exit figures: alerts take `max by (pool)`, never a sum.
 */
import type { Logger } from "pino";
import type { Metrics } from "@serp/metrics";
import type { Upstream } from "@serp/upstream";

/** A scrape never waits longer than this on Redis (an unreachable one would hold it to Prometheus's timeout). */
const READ_TIMEOUT_MS = 1_000;

export function scrapeGauges(upstream: Upstream, metrics: Metrics, logger: Logger): () => Promise<void> {
  return async () => {
    const pages = upstream.browserPages();
    metrics.browserPages.set({ state: "capacity" }, pages.capacity);
    metrics.browserPages.set({ state: "in_use" }, pages.inUse);
    metrics.browserPages.set({ state: "waiting" }, pages.waiting);
    const pools = upstream.exits();
    if (!pools.length) return;
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error("exit health timed out")), READ_TIMEOUT_MS)));
      const statuses = await Promise.race([upstream.exitHealth.statuses(), timeout]);
      const now = Date.now();
      const resting = statuses.filter((s) => s.until > now);
      metrics.exits.reset();
      for (const pool of pools) {
        // A gateway pool rests as one exit (`gateway`: the provider refused its credentials or its port).
        const exits = pool.kind === "gateway" ? ["gateway"] : pool.exits;
        const restingHere = resting.filter((s) => s.pool === pool.name && exits.includes(s.exit)).length;
        metrics.exits.set({ pool: pool.name, state: "total" }, exits.length);
        metrics.exits.set({ pool: pool.name, state: "resting" }, restingHere);
      }
    } catch (err) {
      // Redis out of reach: no exit figures rather than stale ones (searches ask exits as if healthy then).
      metrics.exits.reset();
      logger.debug({ err: (err as Error).message }, "exit health unavailable for /metrics");
    } finally {
      clearTimeout(timer);
    }
  };
}
