/**
 * docker-compose.yml and the Dockerfile, checked structurally (no Docker engine runs here): Redis
 * persistence flags, health checks, the queue split into separately scaled worker pools, shutdown
 * grace periods that cover the apps' own deadlines, and a small non-root production image.
 * When the docker compose plugin is installed, `docker compose config -q` must accept the file too.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import yaml from "yaml";
import { ROOT } from "./support.js";

const d = describe;

interface Service {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string>;
  env_file?: unknown;
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test: string[]; interval?: string };
  deploy?: { replicas?: number };
  stop_grace_period?: string;
  volumes?: string[];
  container_name?: string;
}

const seconds = (s: string | undefined) => {
  const m = s?.match(/^(\d+)s$/);
  return m ? Number(m[1]) : NaN;
};

d("docker-compose.yml", () => {
  const file = yaml?.parse(readFileSync(join(ROOT, "docker-compose.yml"), "utf8"), { merge: true }) as {
    services: Record<string, Service>;
    volumes: Record<string, unknown>;
  };
  const { services } = file;
  const workers = ["worker-live", "worker-fast", "worker-regular"] as const;

  test("declares redis, postgres, the API and one worker pool per queue", () => {
    expect(Object.keys(services).sort()).toEqual(["api", "postgres", "redis", ...workers].sort());
  });

  test("postgres: a volume for its data, a pg_isready health check, and the apps' DATABASE_URL pointing at it", () => {
    const pg = services.postgres!;
    expect(pg.image).toMatch(/^postgres:\d+/);
    expect(pg.volumes).toEqual(["postgres-data:/var/lib/postgresql/data"]);
    expect(file.volumes).toHaveProperty("postgres-data");
    expect(pg.healthcheck!.test.slice(0, 2)).toEqual(["CMD", "pg_isready"]);
    const env = pg.environment!;
    for (const name of ["api", ...workers]) {
      const url = new URL(services[name]!.environment!.DATABASE_URL!.replace("${POSTGRES_PASSWORD:-serp}", "x"));
      expect([url.protocol, url.hostname, url.port, url.pathname, url.username]).toEqual(["postgres:", "postgres", "5432", `/${env.POSTGRES_DB}`, env.POSTGRES_USER]);
    }
    expect(pg.ports).toBeUndefined();
  });

  test("redis: redis 7 with append-only persistence fsynced every second, no eviction, a volume and a ping health check", () => {
    const redis = services.redis!;
    expect(redis.image).toBe("redis:7-alpine");
    const cmd = redis.command!.join(" ");
    expect(cmd).toMatch(/--appendonly yes/);
    expect(cmd).toMatch(/--appendfsync everysec/);
    expect(cmd).toMatch(/--maxmemory-policy noeviction/);
    expect(redis.volumes).toEqual(["redis-data:/data"]);
    expect(file.volumes).toHaveProperty("redis-data");
    expect(redis.healthcheck!.test).toEqual(["CMD", "redis-cli", "ping"]);
  });

  test("api: waits for a healthy Redis (PostgreSQL only started), publishes 3000, checks /readyz, and reads settings from .env", () => {
    const api = services.api!;
    expect(api.depends_on).toEqual({ redis: { condition: "service_healthy" }, postgres: { condition: "service_started" } });
    expect(api.ports).toEqual(["3000:3000"]);
    expect(api.environment).toMatchObject({ REDIS_URL: "redis://redis:6379", PORT: "3000" });
    // Links in responses must reach the API: .env may set the address, else the published port.
    expect(api.environment!.PUBLIC_BASE_URL).toBe("${PUBLIC_BASE_URL:-http://127.0.0.1:3000}");
    expect(api.ports![0]!.split(":")[0]).toBe(api.environment!.PUBLIC_BASE_URL!.match(/:(\d+)\}$/)![1]);
    expect(api.healthcheck!.test.join(" ")).toContain("http://127.0.0.1:3000/readyz");
    expect(api.command).toEqual(["node", "--enable-source-maps", "dist/api.mjs"]);
    expect(api.env_file).toEqual([{ path: ".env", required: false }]);
  });

  test.each(workers)("%s: serves its own queue, scales with replicas, and checks its health server", (name) => {
    const w = services[name]!;
    expect(w.environment).toMatchObject({ WORKER_QUEUES: name.replace("worker-", ""), REDIS_URL: "redis://redis:6379", HEALTH_PORT: "9100" });
    expect(w.command).toEqual(["node", "--enable-source-maps", "dist/worker.mjs"]);
    expect(w.deploy!.replicas).toBeGreaterThanOrEqual(1);
    // Scaling needs generated container names and no host port per replica.
    expect(w.container_name).toBeUndefined();
    expect(w.ports).toBeUndefined();
    expect(w.depends_on).toEqual({ redis: { condition: "service_healthy" }, postgres: { condition: "service_started" } });
    expect(w.healthcheck!.test.join(" ")).toContain("http://127.0.0.1:9100/readyz");
    expect(w.env_file).toEqual([{ path: ".env", required: false }]);
    // The workers' image carries Chromium for the browser transport; the API's stays small.
    expect(w.image).toBe("serp-worker:latest");
    expect(w.build).toEqual({ context: ".", target: "worker" });
    expect(services.api!.build).toEqual({ context: ".", target: "runtime" });
  });

  test("the API and every worker pool share one volume of kept pages, where the image points RAW_PAGES_DIR", () => {
    for (const name of ["api", ...workers]) expect([name, services[name]!.volumes]).toEqual([name, ["raw-pages:/data/raw-pages"]]);
    expect(file.volumes).toHaveProperty("raw-pages");
    const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
    // Both images that run apps (worker and runtime) set it, and own the folder the volume takes its owner from.
    expect(dockerfile.match(/^ENV RAW_PAGES_DIR=\/data\/raw-pages$/gm)).toHaveLength(2);
    expect(dockerfile.match(/^RUN mkdir -p \/data\/raw-pages && chown node:node \/data\/raw-pages$/gm)).toHaveLength(2);
  });

  test("stop grace periods outlast the apps' own shutdown deadlines", () => {
    // API: live deadline (60 s by default) + 5 s to answer requests in flight.
    expect(seconds(services.api!.stop_grace_period)).toBeGreaterThan(65);
    for (const name of workers) {
      const w = services[name]!;
      const shutdownMs = Number(String(w.environment!.WORKER_SHUTDOWN_TIMEOUT_MS).match(/(\d+)\}?$/)![1]);
      expect(seconds(w.stop_grace_period) * 1000).toBeGreaterThan(shutdownMs + 5_000);
    }
  });

  const compose = spawnSync("docker", ["compose", "version"], { encoding: "utf8" });
  const t = compose.status === 0 ? test : test.skip;
  if (compose.status !== 0) console.warn("compose: the docker compose plugin is not installed; `docker compose config -q` not run");
  t("docker compose config accepts the file", () => {
    const r = spawnSync("docker", ["compose", "-f", join(ROOT, "docker-compose.yml"), "config", "-q"], { cwd: ROOT, encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  });
});

describe("Dockerfile", () => {
  const text = readFileSync(join(ROOT, "Dockerfile"), "utf8");
  const stages = text.split(/^FROM /m).slice(1);
  const runtime = stages.at(-1)!;
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { packageManager: string };

  test("is multi-stage, and the image that runs is a slim Node 20 with the bundles and production dependencies only", () => {
    expect(stages.length).toBeGreaterThanOrEqual(3);
    expect(text).toMatch(/^ARG NODE_IMAGE=node:20-(bookworm-)?slim$/m);
    expect(runtime).toMatch(/^\$\{NODE_IMAGE\} AS runtime/);
    expect(runtime).toContain("COPY --from=prod-deps /app/node_modules ./node_modules");
    expect(runtime).toContain("COPY --from=build /app/dist ./dist");
    expect(runtime).not.toMatch(/COPY \. /);
  });

  test("runs as a non-root user", () => {
    expect(runtime).toMatch(/^USER node$/m);
  });

  test("the workers' image is the same bundles plus Debian's chromium and xvfb; the API image has no browser", () => {
    const worker = stages.find((s) => s.startsWith("${NODE_IMAGE} AS worker"))!;
    expect(worker).toMatch(/apt-get install -y --no-install-recommends chromium xvfb/);
    expect(worker).toContain("COPY --from=prod-deps /app/node_modules ./node_modules");
    expect(worker).toContain("COPY --from=build /app/dist ./dist");
    expect(worker).toMatch(/^USER node$/m);
    expect(worker).toContain('CMD ["node", "--enable-source-maps", "dist/worker.mjs"]');
    expect(runtime).not.toMatch(/chromium/);
  });

  test("installs with the repository's pnpm version from the lockfile, production dependencies apart", () => {
    expect(text).toContain(`pnpm@${pkg.packageManager.replace("pnpm@", "")}`);
    const installs = text.match(/pnpm install [^\n]+/g) ?? [];
    expect(installs.length).toBeGreaterThanOrEqual(2);
    for (const line of installs) expect(line).toContain("--frozen-lockfile");
    expect(installs.some((l) => l.includes("--prod"))).toBe(true);
  });

  test("bundles each app entry point that compose and the CLI run", () => {
    for (const entry of ["apps/api/src/index.ts", "apps/worker/src/index.ts", "apps/cli/src/main.ts"]) {
      expect(text).toContain(entry);
      expect(existsSync(join(ROOT, entry))).toBe(true);
    }
    expect(runtime).toContain('CMD ["node", "--enable-source-maps", "dist/api.mjs"]');
  });

  test(".dockerignore keeps local dependencies, secrets and git out of the build context", () => {
    const ignore = readFileSync(join(ROOT, ".dockerignore"), "utf8").split("\n").map((l) => l.trim());
    for (const entry of ["**/node_modules", ".env", ".git", ".redis-data"]) expect(ignore).toContain(entry);
  });
});
