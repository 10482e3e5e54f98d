/**
 * The worker's eye on the upstream: every few seconds it publishes its breakers' states (for the
 * CLI's `upstream status` and the admin route) and sets their gauges; with CANARY_INTERVAL_MS it
 * also runs the canary on a schedule. A kind with no working profile is logged at error and shows
 * as 0 in `serp_upstream_canary_working_profiles`, so an alert fires before customers notice.
 */
import { hostname } from "node:os";
import type { Logger } from "pino";
import type { Metrics } from "@serp/metrics";
import { UpstreamStatusBoard } from "@serp/store";
import { runCanary, type CanaryReport, type Upstream } from "@serp/upstream";

export interface UpstreamWatchOptions {
  upstream: Upstream;
  board: UpstreamStatusBoard;
  logger: Logger;
  metrics?: Metrics;
  /** How often the status is published. */
  statusIntervalMs: number;
  /** 0: no scheduled canary. */
  canaryIntervalMs: number;
  canaryProductId?: string;
}

const STATE_VALUE = { closed: 0, probing: 1, open: 2 } as const;

export function watchUpstream(o: UpstreamWatchOptions): { close(): Promise<void>; canary(): Promise<CanaryReport> } {
  const instance = `${hostname()}-${process.pid}`;
  let lastCanary: (CanaryReport & { at: string }) | undefined;
  let canaryRunning: Promise<CanaryReport> | undefined;

  const publish = async () => {
    const status = o.upstream.status();
    for (const b of status.breakers) o.metrics?.upstreamBreakerState.set({ profile: b.profile, proxy: b.proxy ?? "" }, STATE_VALUE[b.state]);
    const ttlSeconds = Math.max(5, Math.ceil((o.statusIntervalMs * 3) / 1000));
    await o.board.publish(instance, { ...status, ...(lastCanary ? { canary: lastCanary } : {}) }, ttlSeconds).catch((err: Error) => {
      o.logger.debug({ err: err.message }, "upstream status not published");
    });
  };

  const canary = () =>
    (canaryRunning ??= runCanary(o.upstream, { productId: o.canaryProductId })
      .then((report) => {
        lastCanary = { ...report, at: new Date().toISOString() };
        for (const [kind, names] of Object.entries(report.working)) o.metrics?.canaryWorking.set({ kind }, names.length);
        o.metrics?.canaryRuns.inc({ result: report.ok ? "ok" : "dead" });
        if (report.ok) o.logger.info({ working: report.working }, "canary: every kind has a working profile");
        else o.logger.error({ dead: report.dead, rows: report.rows }, `canary: no working profile for ${report.dead.join(", ")}`);
        void publish();
        return report;
      })
      .finally(() => (canaryRunning = undefined)));

  const statusTimer = setInterval(() => void publish(), o.statusIntervalMs);
  statusTimer.unref();
  void publish();
  const canaryTimer =
    o.canaryIntervalMs > 0
      ? setInterval(() => void canary().catch((err: Error) => o.logger.error({ err: err.message }, "canary failed to run")), o.canaryIntervalMs)
      : undefined;
  canaryTimer?.unref();

  return {
    canary,
    close: async () => {
      clearInterval(statusTimer);
      if (canaryTimer) clearInterval(canaryTimer);
      await canaryRunning?.catch(() => undefined);
    },
  };
}
