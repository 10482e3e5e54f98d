/**
 * docker-compose.yml as the apps read it: every variable it sets is a setting the code reads,
 * every app container listens beyond loopback (HOST), no published port serves /metrics, and
 * each container's stop_grace_period outlasts its app's own stop bound (the functions the apps stop
 * with, from the settings the container gets and the code's defaults).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import yaml from "yaml";
import { loadEnv as apiEnv } from "@serp/api/env";
import { loadEnv as workerEnv } from "@serp/worker/env";
import { apiShutdownBounds } from "../../apps/api/src/ops/http-shutdown.js";
import { workerShutdownBounds } from "../../apps/worker/src/drain.js";
import { ROOT } from "../ops/support.js";
import { settingsReadByCode } from "../support/settings-read.js";

interface Service {
  command?: string[];
  ports?: string[];
  environment?: Record<string, string>;
  stop_grace_period?: string;
  volumes?: string[];
}

const file = yaml.parse(readFileSync(join(ROOT, "docker-compose.yml"), "utf8"), { merge: true }) as { services: Record<string, Service> };
const apps = Object.entries(file.services).filter(([, s]) => s.command?.some((a) => /^dist\/(api|worker)\.mjs$/.test(a)));
const isApi = (s: Service) => s.command!.includes("dist/api.mjs");

/** A container's environment as compose passes it with an empty .env: `${NAME:-default}` takes its default. */
function environmentOf(s: Service): Record<string, string> {
  return Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, String(v).replace(/\$\{[A-Z0-9_]+:-([^}]*)\}/g, "$1")]));
}

const seconds = (s: string | undefined) => Number(/^(\d+)s$/.exec(s ?? "")?.[1] ?? NaN);

describe("docker-compose.yml, as the apps read it", () => {
  test("runs the API and a worker pool per queue", () => {
    expect(apps.filter(([, s]) => isApi(s)).length).toBe(1);
    expect(apps.length).toBeGreaterThanOrEqual(4);
  });

  test("every variable an app container sets is a setting the code reads", () => {
    const read = settingsReadByCode();
    const unread = apps.flatMap(([name, s]) => Object.keys(s.environment ?? {}).filter((k) => !read.has(k)).map((k) => `${name}: ${k}`));
    expect(unread).toEqual([]);
  });

  test("every app listens on all interfaces (HOST), and its settings pass its own schema", () => {
    for (const [name, s] of apps) {
      const env = environmentOf(s);
      const parsed = isApi(s) ? apiEnv(env) : workerEnv(env);
      expect([name, parsed.HOST]).toEqual([name, "0.0.0.0"]);
    }
  });

  test("no published port serves /metrics: the API's is on METRICS_PORT, the workers' on HEALTH_PORT, neither published", () => {
    for (const [name, s] of apps) {
      const env = environmentOf(s);
      const metricsPort = isApi(s) ? (apiEnv(env).METRICS_PORT ?? apiEnv(env).PORT) : workerEnv(env).HEALTH_PORT;
      const published = (s.ports ?? []).map((p) => Number(String(p).split(":").at(-1)));
      expect({ name, metricsPort, published: published.includes(metricsPort!) }).toEqual({ name, metricsPort: 9100, published: false });
    }
  });

  test("stop_grace_period outlasts each app's own stop bound", () => {
    for (const [name, s] of apps) {
      const env = environmentOf(s);
      const boundMs = isApi(s) ? apiShutdownBounds(apiEnv(env).LIVE_DEADLINE_MS).exitAfterMs : workerShutdownBounds(workerEnv(env).WORKER_SHUTDOWN_TIMEOUT_MS).exitAfterMs;
      expect({ name, grace: seconds(s.stop_grace_period) * 1000 > boundMs }).toEqual({ name, grace: true });
    }
  });
});
