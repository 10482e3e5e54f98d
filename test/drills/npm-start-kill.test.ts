/**
 * Drill (issue 26, part 4): `node scripts/run.mjs start`, its output to a pipe whose reader dies once
 * the run is up (as when the process that started it exits), killed in every order and started again
 * at once. Each time the new run comes up (the API answers /healthz) on the private Redis it took over
 * or started; the old processes are all gone within their drain deadlines (with Redis gone and
 * nobody reading their output); after the final SIGTERM nothing is left, by process listing (ps).
 * The Redis runs use the test run's PostgreSQL (DATABASE_URL, faster); one run has the private
 * PostgreSQL, taken over after run.mjs is killed and started again after everything was.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, StopWaiting, freePort, statusOf, waitFor } from "../ops/support.js";
import { stablePort } from "../support/redis-server.js";

// Short drains, so that the old apps' deadlines fit in the drill: an API stops within
// LIVE_DEADLINE_MS + 10 s at most, a worker within WORKER_SHUTDOWN_TIMEOUT_MS + 7 s.
const DRAIN_ENV = { LIVE_DEADLINE_MS: "1000", WORKER_SHUTDOWN_TIMEOUT_MS: "1000" };
const API_EXIT_BOUND_MS = 1_000 + 10_000 + 3_000;

type Role = "run" | "redis-keeper" | "postgres-keeper" | "redis-server" | "postgres" | "api" | "worker";
const ROLES: [Role, RegExp][] = [
  ["run", /scripts\/run\.mjs start/],
  ["redis-keeper", /scripts\/redis-keeper\.mjs/],
  ["postgres-keeper", /scripts\/postgres-keeper\.mjs/],
  ["redis-server", /^\S*redis-server /],
  ["postgres", /^\S*postgres -D /],
  ["api", /apps\/api\/src\/index\.ts/],
  ["worker", /apps\/worker\/src\/index\.ts/],
];

interface Proc {
  pid: number;
  role: Role | undefined;
  args: string;
}

/**
 * Every process whose command line or environment (`ps e`) mentions one of `markers`: the drill's
 * folder (in every process's environment, and PostgreSQL's command line) and the Redis addresses
 * (redis-server shows its address instead of its environment).
 */
function listing(markers: string[]): Proc[] {
  const out = spawnSync("ps", ["axeww", "-o", "pid=,args="], { encoding: "utf8" }).stdout;
  const found: Proc[] = [];
  for (const line of out.split("\n")) {
    const m = /^\s*(\d+)\s+(.*)$/.exec(line);
    if (!m || Number(m[1]) === process.pid || !markers.some((k) => m[2]!.includes(k))) continue;
    if (/^ps /.test(m[2]!)) continue;
    found.push({ pid: Number(m[1]), role: ROLES.find(([, re]) => re.test(m[2]!))?.[0], args: m[2]!.slice(0, 160) });
  }
  return found;
}

interface Run {
  child: ChildProcess;
  lines: string[];
  base: string;
  redisUrl: string;
  /** The pid of each role of this run (the servers may be a previous run's, taken over). */
  pids: Partial<Record<Role, number>>;
}

interface Drill {
  dir: string;
  markers: string[];
  start(): Promise<Run>;
  /** The environment each run gets. */
  startEnv(): Record<string, string>;
  /** Every process of the drill so far. */
  processes(): Proc[];
}

/** `envOf` gives the runs' settings, from the drill's folder. */
function drill(envOf: (dir: string) => Record<string, string>): Drill {
  const dir = mkdtempSync(join(tmpdir(), "serp-kill-drill-"));
  // Open to the `postgres` user a private PostgreSQL runs as when we are root.
  chmodSync(dir, 0o755);
  const env = envOf(dir);
  const startEnv = () => ({ PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", REDIS_DATA_DIR: join(dir, "redis"), LOG_LEVEL: "info", ...DRAIN_ENV, ...env });
  const markers = [dir];
  return {
    dir,
    markers,
    startEnv,
    processes: () => listing(markers),
    async start() {
      const child = spawn(process.execPath, ["scripts/run.mjs", "start"], {
        cwd: ROOT,
        env: startEnv(),
        stdio: ["ignore", "pipe", "pipe"],
        // Its own process group, like a background job of the shell that started it.
        detached: true,
      });
      const lines: string[] = [];
      let partial = "";
      const onData = (chunk: Buffer) => {
        const parts = (partial + chunk.toString()).split("\n");
        partial = parts.pop() ?? "";
        lines.push(...parts.filter((l) => l.trim()));
      };
      child.stdout!.on("data", onData);
      child.stderr!.on("data", onData);
      const base = `http://127.0.0.1:${env.PORT}`;
      await waitFor("the API answering /healthz and the worker ready", async () => {
        if (child.exitCode !== null) throw new StopWaiting(`run.mjs exited (${child.exitCode}):\n${lines.slice(-30).join("\n")}`);
        // This run's own API: the old one, let go while it drains, may still answer on the port.
        const listening = lines.some((l) => l.includes('"msg":"API listening on'));
        const apiUp = listening && (await statusOf(`${base}/healthz`)) === 200;
        return apiUp && lines.some((l) => l.includes('"msg":"workers ready"'));
      }, 40_000, 100).catch((err: Error) => {
        throw new Error(`${err.message}\n${lines.slice(-30).join("\n")}`);
      });
      // The reader goes: from now on every line the run writes meets a broken pipe.
      child.stdout!.destroy();
      child.stderr!.destroy();
      const redisUrl = readFileSync(join(dir, "redis", "redis-url"), "utf8").trim();
      markers.push(new URL(redisUrl).host);
      const pids: Partial<Record<Role, number>> = {};
      const ours = (p: Proc) => p.role === "redis-server" ? p.args.includes(new URL(redisUrl).host) : true;
      for (const p of listing(markers)) if (p.role && ours(p) && isDescendantOrServer(p, child.pid!)) pids[p.role] = p.pid;
      return { child, lines, base, redisUrl, pids };
    },
  };
}

/** The run's own processes: run.mjs, its apps and keepers (by parent), and the servers (whoever started them). */
function isDescendantOrServer(p: Proc, runPid: number): boolean {
  if (p.role === "redis-server" || p.role === "postgres") return true;
  if (p.pid === runPid) return true;
  return parentOf(p.pid) === runPid;
}

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

const kill = (pid: number | undefined, signal: NodeJS.Signals = "SIGKILL") => {
  if (pid === undefined) return;
  try {
    process.kill(pid, signal);
  } catch {
    // gone already
  }
};
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves once none of `pids` runs (a zombie counts as gone), with how long that took. */
async function gone(d: Drill, pids: number[], what: string, timeoutMs: number): Promise<number> {
  const since = Date.now();
  await waitFor(what, () => !d.processes().some((p) => pids.includes(p.pid)), timeoutMs, 100).catch((err: Error) => {
    throw new Error(`${err.message}; left: ${JSON.stringify(d.processes().filter((p) => pids.includes(p.pid)))}`);
  });
  return Date.now() - since;
}

const drills: Drill[] = [];
afterAll(() => {
  // A failed drill must not leave its processes behind.
  for (const d of drills) {
    for (const p of d.processes()) kill(p.pid);
    rmSync(d.dir, { recursive: true, force: true });
  }
});

async function ports(): Promise<Record<string, string>> {
  const [port, health, upstream] = [await stablePort(), await stablePort(), await freePort()];
  // Nothing listens upstream: no job runs in this drill, the worker only needs a loopback address.
  return { PORT: String(port), HOST: "127.0.0.1", HEALTH_PORT: String(health), UPSTREAM_BASE_URL: `http://127.0.0.1:${upstream}` };
}

type How = "took over" | "started";

/** The one line run.mjs says about a private server: taken over, or started (after waiting or not). */
function expectSaid(run: Run, variable: string, label: string, how: How) {
  const said = run.lines.find((l) => l.startsWith(`[run] ${variable} is not set: `));
  expect(said).toMatch(how === "took over" ? new RegExp(`took over the private ${label} at \\S+ \\(pid \\d+\\) that a previous npm start left running`) : new RegExp(`started a private ${label} at`));
}

/** A drill's runs, one after the other: each killed as told, the next started at once. */
function rounds(d: Drill, first: Run, report: string[]) {
  let run = first;
  return {
    get current() {
      return run;
    },
    async round(name: string, order: (r: Run) => Promise<void>, how: { redis: How; postgres?: How }) {
      const old = run;
      // What must end: all of the old run but the servers taken over.
      const kept = [how.redis === "took over" && old.pids["redis-server"], how.postgres === "took over" && old.pids.postgres];
      const mustEnd = Object.values(old.pids).filter((pid): pid is number => pid !== undefined && !kept.includes(pid));
      await order(old);
      // Measured from the kill, while the next run starts: the old apps end within their deadlines,
      // whatever became of their Redis and their output's reader.
      const oldGone = gone(d, mustEnd, `every process of the run before "${name}" gone`, API_EXIT_BOUND_MS);
      oldGone.catch(() => undefined);
      const startedAt = Date.now();
      run = await d.start();
      const upMs = Date.now() - startedAt;
      expectSaid(run, "REDIS_URL", "redis-server", how.redis);
      if (how.postgres) expectSaid(run, "DATABASE_URL", "PostgreSQL", how.postgres);
      // Taken over: the same server, with its data; started: a new one.
      for (const [role, h] of [["redis-server", how.redis], ["postgres", how.postgres]] as const) {
        if (h === "took over") expect(run.pids[role]).toBe(old.pids[role]);
        if (h === "started") expect(run.pids[role]).not.toBe(old.pids[role]);
      }
      expect(await statusOf(`${run.base}/healthz`)).toBe(200);
      const goneMs = await oldGone;
      report.push(`${name}: up again in ${upMs} ms (${Object.entries(how).map(([k, v]) => `${k} ${v}`).join(", ")}); the old processes were gone ${goneMs} ms after the kill`);
    },
    /** The last stop, as an operator's SIGTERM: nothing of any run is left. */
    async finalStop() {
      const termAt = Date.now();
      kill(run.pids.run, "SIGTERM");
      await waitFor("nothing left", () => d.processes().length === 0, 30_000, 100).catch((err: Error) => {
        throw new Error(`${err.message}; left: ${JSON.stringify(d.processes())}`);
      });
      report.push(`final SIGTERM: nothing left after ${Date.now() - termAt} ms`);
    },
  };
}

/**
 * The old API is held (SIGSTOP) as a long drain would hold it: its keeper waits for it, and the new
 * run takes the servers over instead of waiting. Let go after a while, it stops on its own.
 */
async function runMjsFirstWhileDraining(r: Run) {
  kill(r.pids.api, "SIGSTOP");
  kill(r.pids.run);
  setTimeout(() => kill(r.pids.api, "SIGCONT"), 3_000);
}

const withDatabase = process.env.DATABASE_URL ? test : test.skip;

withDatabase("killed in every order with its output reader gone, npm start starts again at once; nothing is left after the last stop", async () => {
  const given = await ports();
  const d = drill(() => ({ ...given, DATABASE_URL: process.env.DATABASE_URL! }));
  drills.push(d);
  const report: string[] = [];
  const runs = rounds(d, await d.start(), report);
  await runs.round("run.mjs first, its API still draining", runMjsFirstWhileDraining, { redis: "took over" });
  await runs.round("the keeper, then run.mjs", async (r) => {
    kill(r.pids["redis-keeper"]);
    await pause(200);
    kill(r.pids.run);
  }, { redis: "took over" });
  // Its run.mjs gone, a keeper no longer restarts the server for apps that are going: a Redis killed
  // while the old API still drains stays down (the keeper's restart back-off is 1 s; 2.5 s are given).
  await runs.round("run.mjs, then Redis, its API still draining", async (r) => {
    kill(r.pids.api, "SIGSTOP");
    kill(r.pids.run);
    kill(r.pids["redis-server"]);
    await pause(2_500);
    expect(d.processes().filter((p) => p.role === "redis-server")).toEqual([]);
    kill(r.pids.api, "SIGCONT");
  }, { redis: "started" });
  // The issue's case: npm start SIGKILLed with its Redis; the apps stop on their own, Redis gone.
  await runs.round("run.mjs, the keeper and Redis at once (the apps left)", async (r) => {
    for (const role of ["run", "redis-keeper", "redis-server"] as const) kill(r.pids[role]);
  }, { redis: "started" });
  await runs.round("the apps first, then run.mjs, the keeper, Redis", async (r) => {
    for (const role of ["api", "worker", "run", "redis-keeper", "redis-server"] as const) {
      kill(r.pids[role]);
      await pause(100);
    }
  }, { redis: "started" });
  await runs.round("everything at once", async () => {
    for (const p of d.processes()) kill(p.pid);
  }, { redis: "started" });

  // A second npm start on the same data while this one runs: refused in one line, this one unharmed.
  const second = spawnSync(process.execPath, ["scripts/run.mjs", "start"], { cwd: ROOT, env: { ...d.startEnv() }, encoding: "utf8", timeout: 30_000 });
  expect(second.status).toBe(1);
  expect(second.stdout + second.stderr).toMatch(new RegExp(`^\\[run\\] cannot start: a redis-server already runs on \\S+ at ${runs.current.redisUrl} for another npm start \\(run\\.mjs pid ${runs.current.pids.run}\\)`, "m"));
  expect(second.stderr).not.toMatch(/\s+at /);
  expect(await statusOf(`${runs.current.base}/healthz`)).toBe(200);

  await runs.finalStop();
  console.log(`npm start kill drill:\n${report.join("\n")}`);
}, 150_000);

test("with its private PostgreSQL: taken over after run.mjs is killed, started again after everything was; nothing is left", async () => {
  const given = await ports();
  const d = drill((dir) => ({ ...given, PG_DATA_DIR: join(dir, "pg") }));
  drills.push(d);
  const report: string[] = [];
  const runs = rounds(d, await d.start(), report);
  await runs.round("run.mjs first, its API still draining", runMjsFirstWhileDraining, { redis: "took over", postgres: "took over" });
  await runs.round("everything at once", async () => {
    for (const p of d.processes()) kill(p.pid);
  }, { redis: "started", postgres: "started" });
  await runs.finalStop();
  console.log(`npm start kill drill, private PostgreSQL:\n${report.join("\n")}`);
}, 120_000);
