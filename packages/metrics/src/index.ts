/**
 * Every Prometheus metric the service exports, declared once. Each process (API, worker) has
 * its own registry; `/metrics` serves `registry.metrics()`.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

export function createMetrics(app: "api" | "worker") {
  const registry = new Registry();
  registry.setDefaultLabels({ app });
  collectDefaultMetrics({ register: registry });
  const r = [registry];
  return {
    registry,
    /** Jobs that became final, by endpoint, queue and final status. */
    jobsTotal: new Counter({ name: "serp_jobs_total", help: "Jobs that became final", labelNames: ["endpoint", "queue", "status"], registers: r }),
    /**
     * Jobs the sweeper settled (workers): stored but never on their queue (Redis went away between
     * the two), failed at 0 credits. Any steady rise means submissions lose their enqueue.
     */
    jobsSwept: new Counter({ name: "serp_jobs_swept_total", help: "Jobs settled as failed by the sweeper because they were never queued", labelNames: ["queue"], registers: r }),
    /** Processing latency of final jobs (the job's latencyMs). */
    jobLatency: new Histogram({
      name: "serp_job_latency_seconds", help: "Job processing latency", labelNames: ["endpoint", "queue", "status"],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60], registers: r,
    }),
    /** Every upstream attempt, by what came back (results, no_results, blocked, consent, js_wall, upstream_error, timeout, unparseable, partial). */
    upstreamResponses: new Counter({ name: "serp_upstream_responses_total", help: "Upstream attempts by outcome", labelNames: ["endpoint", "outcome"], registers: r }),
    /**
     * Every upstream try by the profile that made it, the proxy it went through (`direct` without
     * one) and what came back: results, no_results, blocked, wall, refused, timeout, error, unparseable,
     * partial (a results page below its kind's coverage threshold).
     */
    upstreamTries: new Counter({ name: "serp_upstream_tries_total", help: "Upstream tries by profile, proxy and outcome", labelNames: ["profile", "proxy", "outcome"], registers: r }),
    /**
     * Per parsed page, the share of its result links that ended up in some block (coverage.ts), by
     * endpoint and the layout the figure read (full, mobile, basic, json, unknown: a fixed set). Pages
     * of one layout normally sit near 1: a layout the parsers do not know shows as the mass moving
     * down, before any job fails; below the kind's threshold the page was not taken (outcome `partial`).
     */
    parseCoverage: new Histogram({
      name: "serp_parse_coverage_ratio", help: "Share of a parsed page's result links found in its blocks", labelNames: ["endpoint", "layout"],
      buckets: [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1], registers: r,
    }),
    /** Rungs passed over because a breaker rested (`profile`, or `profile@proxy`). */
    /**
     * Exits (docs/proxies.md): every try through a pool by outcome, with the exit where the pool is a
     * short static list (`*` for a gateway's sessions or a long list, so labels stay few).
     */
    exitTries: new Counter({ name: "serp_exit_tries_total", help: "Upstream tries per proxy pool, exit and outcome", labelNames: ["pool", "exit", "outcome"], registers: r }),
    /** Bytes moved through each pool (request and response; a browser page's subresources too). */
    exitBytes: new Counter({ name: "serp_exit_bytes_total", help: "Bytes moved through each proxy pool", labelNames: ["pool"], registers: r }),
    /** Searches served by a pool without countries because no pool lists the search's country. */
    exitCountryFallbacks: new Counter({ name: "serp_exit_country_fallbacks_total", help: "Searches served by a pool without countries because no pool lists the country", labelNames: ["pool", "country"], registers: r }),
    /**
     * The fleet's exits per pool (`total`; a gateway pool counts as one) and those resting now after a
     * block or a proxy error (`resting`), read from Redis when a worker is scraped. Resting equal to
     * total: the pool is cooling as a whole and its countries' searches fail or fall back.
     */
    exits: new Gauge({ name: "serp_exits", help: "Exits per proxy pool by state (total, resting), fleet-wide", labelNames: ["pool", "state"], registers: r }),
    /** Sessions open now per pool. */
    exitSessions: new Gauge({ name: "serp_exit_sessions", help: "Proxy sessions open per pool", labelNames: ["pool"], registers: r }),
    /** CAPTCHA (/sorry/) pages met per pool, solves by result, and what the solves cost (US dollars). */
    captchas: new Counter({ name: "serp_captchas_total", help: "CAPTCHA pages met per pool", labelNames: ["pool"], registers: r }),
    captchaSolves: new Counter({ name: "serp_captcha_solves_total", help: "CAPTCHA solves per pool and result (solved, failed, capped)", labelNames: ["pool", "result"], registers: r }),
    captchaCost: new Counter({ name: "serp_captcha_cost_dollars_total", help: "What the CAPTCHA solves cost, in US dollars", labelNames: ["pool"], registers: r }),
    upstreamSkips: new Counter({ name: "serp_upstream_skipped_total", help: "Upstream rungs skipped while their breaker rests", labelNames: ["profile", "breaker"], registers: r }),
    /** Each breaker's state: 0 closed, 1 probing, 2 open (resting). `proxy` is empty for a profile's own breaker. */
    upstreamBreakerState: new Gauge({ name: "serp_upstream_breaker_state", help: "Breaker state per profile and per profile and proxy (0 closed, 1 probing, 2 open)", labelNames: ["profile", "proxy"], registers: r }),
    /** Per kind, how many profiles answered the last canary with a page that parsed; 0 is an outage. */
    canaryWorking: new Gauge({ name: "serp_upstream_canary_working_profiles", help: "Profiles that worked in the last canary, per kind", labelNames: ["kind"], registers: r }),
    canaryRuns: new Counter({ name: "serp_upstream_canary_runs_total", help: "Canary runs by result (ok, dead: some kind had no working profile)", labelNames: ["result"], registers: r }),
    /** Webhook delivery attempts by outcome (delivered, failed, gone, refused). */
    fairShareDeferrals: new Counter({ name: "serp_fair_share_deferrals_total", help: "Jobs sent back to wait a moment because their account held its share of a process's slots", labelNames: ["queue"], registers: r }),
    webhookDeliveries: new Counter({ name: "serp_webhook_deliveries_total", help: "Webhook delivery attempts", labelNames: ["outcome"], registers: r }),
    creditsCharged: new Counter({ name: "serp_credits_charged_total", help: "Credits charged on completed jobs", labelNames: ["endpoint"], registers: r }),
    /** Jobs per queue and state, read from BullMQ when /metrics is scraped. */
    queueDepth: new Gauge({ name: "serp_queue_jobs", help: "Jobs in each queue by state", labelNames: ["queue", "state"], registers: r }),
    /**
     * Per queue, how long its oldest waiting job (plain or fair-priority) has waited since it was
     * enqueued, read from Redis when the API's /metrics is scraped; 0 when none waits. What a
     * customer of `live` feels before the depth says anything: the autoscaler's second trigger.
     */
    queueOldestAge: new Gauge({ name: "serp_queue_oldest_waiting_age_seconds", help: "Age of the oldest job waiting in each queue", labelNames: ["queue"], registers: r }),
    /**
     * The browser tier of this worker process (BrowserPool): pages it may have open at once
     * (`capacity`, BROWSER_CONCURRENCY), pages open now (`in_use`) and requests waiting for one
     * (`waiting`). Waiting above 0 for long: more browser replicas, or more pages per process.
     */
    browserPages: new Gauge({ name: "serp_browser_pages", help: "Browser pages per worker process by state (capacity, in_use, waiting)", labelNames: ["state"], registers: r }),
    httpRequests: new Counter({ name: "serp_http_requests_total", help: "API requests", labelNames: ["route", "method", "status"], registers: r }),
    httpDuration: new Histogram({
      name: "serp_http_request_duration_seconds", help: "API request duration", labelNames: ["route", "method"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60], registers: r,
    }),
    rateLimited: new Counter({ name: "serp_rate_limited_total", help: "Requests refused by a limit", labelNames: ["limit"], registers: r }),
    /**
     * The ledger stream (workers): entries settled but not yet in PostgreSQL, the age of the oldest,
     * and the stream's fill (pending / its cap of 1 M entries; past 1 the oldest would be dropped:
     * alarm well before, e.g. above 0.1, or on the lag above a minute). 0 lag with PostgreSQL down
     * cannot happen while settlements go on: the lag grows with the outage.
     */
    ledgerPending: new Gauge({ name: "serp_ledger_pending_entries", help: "Ledger entries in the Redis stream not yet drained into PostgreSQL", registers: r }),
    ledgerLag: new Gauge({ name: "serp_ledger_drain_lag_seconds", help: "Age of the oldest ledger entry not yet drained into PostgreSQL", registers: r }),
    ledgerFill: new Gauge({ name: "serp_ledger_stream_fill_ratio", help: "Ledger stream length over its cap (entries past the cap would be dropped)", registers: r }),
    ledgerPostgresUp: new Gauge({ name: "serp_ledger_postgres_up", help: "1 when the ledger drainer's last write to PostgreSQL succeeded", registers: r }),
    /** Per drained entry, the time from its settlement (XADD) to its commit in PostgreSQL. */
    ledgerDrainDelay: new Histogram({
      name: "serp_ledger_drain_delay_seconds", help: "Time from a ledger entry's settlement to its commit in PostgreSQL",
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 30, 120, 600], registers: r,
    }),
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
