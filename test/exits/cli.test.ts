/**
 * The operators' view of exits: `upstream proxies` lists the pools the workers' settings name (labels
 * only, never credentials) with each exit's state as the fleet keeps it in Redis, and `job show`
 * prints the pool, tier and country that served a job.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { runCli } from "../../apps/cli/src/main.js";
import { EXIT_HEALTH_DEFAULTS } from "@serp/upstream";
import { JobStore, keySpace, RedisExitHealth } from "@serp/store";
import { REDIS_URL } from "../support/stack.js";
import { ROOT } from "../ops/support.js";

const prefix = `t${randomBytes(5).toString("hex")}`;
const keys = keySpace(prefix);
const redis = new Redis(REDIS_URL);
const dir = mkdtempSync(join(tmpdir(), "exits-cli-"));
const saved = { SERP_PREFIX: process.env.SERP_PREFIX, REDIS_URL: process.env.REDIS_URL, UPSTREAM_PROXIES_FILE: process.env.UPSTREAM_PROXIES_FILE, UPSTREAM_PROXIES: process.env.UPSTREAM_PROXIES };

beforeAll(() => {
  Object.assign(process.env, { SERP_PREFIX: prefix, REDIS_URL, UPSTREAM_PROXIES_FILE: join(dir, "pools.json") });
  delete process.env.UPSTREAM_PROXIES;
  writeFileSync(
    join(dir, "pools.json"),
    JSON.stringify({
      pools: [
        { name: "dc", tier: 1, proxies: ["http://user:hunter2@10.0.0.1:8080", "socks5://10.0.0.2:1080"], countries: ["us"] },
        { name: "resi", tier: 2, gateway: "http://cust-cc-{country}-sessid-{session}:gw-hunter2@gw.example:7777", countries: ["de"] },
      ],
    }),
  );
});
afterAll(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  const found = await redis.keys(`${prefix}:*`);
  if (found.length) await redis.del(...found);
  redis.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

async function cli(...argv: string[]) {
  const lines: string[] = [];
  const code = await runCli(argv, (l) => lines.push(l), () => undefined);
  return { code, text: lines.join("\n") };
}

test("upstream proxies lists pools and exits by label, with the fleet's state and cooldowns from Redis", async () => {
  await new RedisExitHealth(redis, keys, EXIT_HEALTH_DEFAULTS).report("dc", "10.0.0.1:8080", "blocked");
  const out = await cli("upstream", "proxies", "--json");
  expect(out.code).toBe(0);
  const { exits } = JSON.parse(out.text) as { exits: { pool: string; exit: string; state: string; strikes: number; reason?: string; restUntil?: string }[] };
  expect(exits.map((e) => [e.pool, e.exit, e.state])).toEqual([
    ["dc", "10.0.0.1:8080", "resting"],
    ["dc", "10.0.0.2:1080", "ok"],
    ["resi", "gateway", "ok"],
  ]);
  expect(exits[0]).toMatchObject({ strikes: 1, reason: "blocked" });
  expect(Date.parse(exits[0]!.restUntil!)).toBeGreaterThan(Date.now());
  const table = await cli("upstream", "proxies");
  expect(table.text).toMatch(/dc\s+1\s+static\s+us\s+10\.0\.0\.1:8080\s+resting\s+1\s+blocked/);
  for (const text of [out.text, table.text]) expect(text).not.toMatch(/hunter2|user:|cust-cc/);
});

test("a bad pools file is a usage error naming the field", async () => {
  writeFileSync(join(dir, "bad.json"), JSON.stringify({ pools: [{ name: "x", proxies: ["ftp://u:hunter2@h:1"] }] }));
  process.env.UPSTREAM_PROXIES_FILE = join(dir, "bad.json");
  try {
    const out = await cli("upstream", "proxies");
    expect(out.code).toBe(2);
    expect(out.text).toMatch(/UPSTREAM_PROXIES_FILE: .*bad\.json: pools\[0\]\.proxies\[0\]/);
    expect(out.text).not.toContain("hunter2");
  } finally {
    process.env.UPSTREAM_PROXIES_FILE = join(dir, "pools.json");
  }
});

test("job show prints the exit that served the job", async () => {
  const jobs = new JobStore(redis, keys, 3600);
  const { accountId } = JSON.parse((await cli("account", "create", "--name", "Acme", "--credits", "10")).text) as { accountId: string };
  const id = "job_01JZ0000000000000000000E24";
  await jobs.create({ id, accountId, endpoint: "web-search", queue: "fast", params: { query: "coffee", country: "de", language: "en", page: 1 }, createdAt: new Date().toISOString() }, 1);
  await jobs.finalize(id, accountId, { status: "failed", credits: 0, latencyMs: 5, error: "blocked", result: null, completedAt: new Date().toISOString(), exit: { pool: "resi", tier: 2, country: "de" } });
  const out = await cli("job", "show", "--id", id);
  expect(out.code).toBe(0);
  expect(JSON.parse(out.text)).toMatchObject({ id, exit: { pool: "resi", tier: 2, country: "de" } });
});

test("a worker refuses a bad pools file at boot: one configuration line naming the field, exit 78", () => {
  writeFileSync(join(dir, "boot.json"), JSON.stringify({ pools: [{ name: "x", gateway: "http://u-{session}:hunter2@gw.example" }] }));
  const r = spawnSync(process.execPath, ["--import", "tsx", "apps/worker/src/index.ts"], {
    cwd: ROOT,
    env: { ...process.env, UPSTREAM_PROXIES_FILE: join(dir, "boot.json"), HEALTH_PORT: "" },
    encoding: "utf8",
    timeout: 30_000,
  });
  expect(r.status).toBe(78);
  const lines = `${r.stdout}${r.stderr}`.trim().split("\n").filter(Boolean);
  expect(lines).toHaveLength(1);
  expect(lines[0]).toMatch(/UPSTREAM_PROXIES_FILE: .*boot\.json: pools\[0\]\.gateway: gateway URL needs a host and a port/);
  expect(lines[0]).not.toContain("hunter2");
}, 40_000);
