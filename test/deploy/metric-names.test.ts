/**
 * The metric names the deployment reads really exist: the real API and a real worker process run on
 * loopback (as `npm start` runs them), their /metrics are scraped, and every metric named in every
 * rendered KEDA query and in deploy/prometheus/alerts.yaml must be one they export. The KEDA
 * queries' series must also have samples for their queue (an autoscaler reads values, not
 * declarations). The worker's fleet-wide exit gauge and its browser pages are checked on the way.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { keySpace, RedisExitHealth } from "@serp/store";
import { EXIT_HEALTH_DEFAULTS } from "@serp/upstream";
import { REDIS_URL } from "../support/stack.js";
import { freePort, spawnService, type ServiceProcess } from "../ops/support.js";
import { alertRules, kedaQueries, kubectlAvailable, metricNames, render } from "./support.js";

/** Metric families a scrape declares (`# TYPE name kind`). */
function declared(text: string): Map<string, string> {
  return new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
}

/** A name a query may use: a declared family, or a histogram's or summary's _bucket, _sum or _count series. */
function exported(name: string, families: Map<string, string>): boolean {
  if (families.has(name)) return true;
  const base = /^(.*)_(bucket|sum|count)$/.exec(name)?.[1];
  return base !== undefined && ["histogram", "summary"].includes(families.get(base) ?? "");
}

/** Sample lines of `name` as label maps with their value. */
function samples(text: string, name: string): { labels: Record<string, string>; value: number }[] {
  const out: { labels: Record<string, string>; value: number }[] = [];
  for (const line of text.split("\n")) {
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})?\s+(\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    out.push({ labels: Object.fromEntries([...(m[2] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!])), value: Number(m[3]) });
  }
  return out;
}

const d = kubectlAvailable ? describe : describe.skip;

d("metric names in the KEDA queries and the alert rules", () => {
  const prefix = `t${randomBytes(4).toString("hex")}`;
  const dir = mkdtempSync(join(tmpdir(), "serp-metric-names-"));
  const redis = new Redis(REDIS_URL);
  let api: ServiceProcess;
  let worker: ServiceProcess;
  let apiText: string;
  let workerText: string;

  beforeAll(async () => {
    // A static pool of two exits, one of them resting (as a block would leave it), for serp_exits.
    const proxies = join(dir, "proxies.json");
    writeFileSync(proxies, JSON.stringify({ pools: [{ name: "dc", proxies: ["http://127.0.0.1:9/", "http://127.0.0.2:9/"] }] }));
    await new RedisExitHealth(redis, keySpace(prefix), EXIT_HEALTH_DEFAULTS).report("dc", "127.0.0.2:9", "blocked");

    const [apiPort, healthPort] = [await freePort(), await freePort()];
    api = spawnService("api", { REDIS_URL, SERP_PREFIX: prefix, PORT: String(apiPort), HOST: "127.0.0.1" });
    worker = spawnService("worker", {
      REDIS_URL, SERP_PREFIX: prefix, WORKER_QUEUES: "live,fast,regular", HEALTH_PORT: String(healthPort), UPSTREAM_BASE_URL: "http://127.0.0.1:9",
      UPSTREAM_PROXIES_FILE: proxies, BROWSER_CONCURRENCY: "3",
    });
    await api.waitForLog("API listening", (l) => String(l.msg).startsWith("API listening"), 60_000);
    await worker.waitForLog("workers ready", (l) => l.msg === "workers ready", 60_000);
    apiText = await (await fetch(`http://127.0.0.1:${apiPort}/metrics`)).text();
    workerText = await (await fetch(`http://127.0.0.1:${healthPort}/metrics`)).text();
  }, 120_000);

  afterAll(async () => {
    await worker?.kill();
    await api?.kill();
    const stale = await redis.keys(`${prefix}*`);
    const bull = await redis.keys(`{${prefix}}*`);
    if (stale.length + bull.length) await redis.del(...stale, ...bull);
    redis.disconnect();
    rmSync(dir, { recursive: true, force: true });
  });

  test("every metric a rendered KEDA query reads is exported by the API, with a sample for its queue", () => {
    const queries = kedaQueries(render("production"));
    expect(queries.length).toBeGreaterThanOrEqual(4);
    const families = declared(apiText);
    const problems: string[] = [];
    for (const { where, query } of queries) {
      const names = metricNames(query);
      if (!names.length) problems.push(`${where}: names no serp_ metric`);
      const queue = /queue="([a-z]+)"/.exec(query)?.[1];
      for (const name of names) {
        if (!exported(name, families)) problems.push(`${where}: ${name} is not exported by the API`);
        else if (!samples(apiText, name).some((s) => s.labels.queue === queue && s.labels.app === "api")) problems.push(`${where}: ${name} has no sample for queue ${queue}`);
      }
    }
    expect(problems).toEqual([]);
  });

  test("every metric the alert rules read is exported by the API or a worker", () => {
    const { groups } = alertRules();
    expect(groups.map((g) => g.name)).toEqual(["serp-queues", "serp-upstream", "serp-ledger"]);
    const families = new Map([...declared(apiText), ...declared(workerText)]);
    const problems: string[] = [];
    const rules = groups.flatMap((g) => g.rules);
    for (const rule of rules) {
      expect(rule).toEqual(expect.objectContaining({ alert: expect.stringMatching(/^Serp[A-Za-z]+$/), expr: expect.any(String), labels: { severity: expect.stringMatching(/^(warning|critical)$/) } }));
      const names = metricNames(rule.expr);
      if (!names.length) problems.push(`${rule.alert}: names no serp_ metric`);
      for (const name of names) if (!exported(name, families)) problems.push(`${rule.alert}: ${name} is exported by neither the API nor a worker`);
    }
    expect(problems).toEqual([]);
    // What the issue asks the rules to cover.
    const covered = rules.map((r) => r.expr).join("\n");
    for (const name of ["serp_queue_oldest_waiting_age_seconds", "serp_upstream_canary_working_profiles", "serp_jobs_total", "serp_upstream_responses_total", "serp_exits", "serp_ledger_drain_lag_seconds"]) {
      expect(metricNames(covered)).toContain(name);
    }
  });

  test("a worker exports its browser pages and the fleet's exits per pool, the resting one counted", () => {
    const pages = Object.fromEntries(samples(workerText, "serp_browser_pages").map((s) => [s.labels.state, s.value]));
    expect(pages).toEqual({ capacity: 3, in_use: 0, waiting: 0 });
    const exits = Object.fromEntries(samples(workerText, "serp_exits").filter((s) => s.labels.pool === "dc").map((s) => [s.labels.state, s.value]));
    expect(exits).toEqual({ total: 2, resting: 1 });
  });
});
