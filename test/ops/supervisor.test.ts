/**
 * `npm start` as a supervisor, run as an operator runs it: npm → sh → scripts/run.mjs, which starts
 * its private Redis (held by scripts/redis-keeper.mjs, data in a temp dir), the API and the worker.
 * A SIGKILLed worker or API is restarted within seconds while the other keeps serving; the CLI finds
 * the private Redis without REDIS_URL; SIGTERM to npm stops everything and leaves no process behind;
 * Ctrl-C (SIGINT to the process group, as a terminal sends it) with jobs in flight lets them finish,
 * then stops Redis last, well within WORKER_SHUTDOWN_TIMEOUT_MS.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import request from "supertest";
import { startReplayServer, type ReplayServer } from "@serp/replay";
import { restartDelay } from "../../scripts/supervise.mjs";
import { FIXTURES_DIR, fixturesAvailable, startStack } from "../support/stack.js";
import { ROOT, StopWaiting, freePort, spawnService, startOwnRedis, statusOf, waitFor, START_BOUND_MS } from "./support.js";

/**
 * Processes whose command line or environment mention one of `markers` (the run's data dir, and its
 * Redis's address: redis-server rewrites its command line and environment to show its address).
 */
function processesOf(markers: string[]): { pid: number; cmd: string }[] {
  const found: { pid: number; cmd: string }[] = [];
  const mentions = (text: string) => markers.some((m) => text.includes(m));
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmd = readFileSync(`/proc/${name}/cmdline`, "utf8").replaceAll("\0", " ").trim();
      if (cmd && (mentions(cmd) || mentions(readFileSync(`/proc/${name}/environ`, "utf8")))) found.push({ pid: Number(name), cmd });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

interface NpmStart {
  child: ChildProcess;
  dir: string;
  /** DATABASE_URL or PG_DATA_DIR, as npm start was given them (the CLI gets the same). */
  database: Record<string, string>;
  base: string;
  health: string;
  lines: string[];
  /** The pid of the latest `<name> started (pid N)` line of run.mjs. */
  pidOf(name: "api" | "worker" | "redis-server"): number | undefined;
  waitForLine(what: string, match: (line: string) => boolean, timeoutMs?: number): Promise<string>;
  /** Every process of this run still there: npm, run.mjs, the keeper, Redis, the apps and their helpers. */
  processes(): { pid: number; cmd: string }[];
  /** Resolves once no process of this run is left, with how long that took from `since`. */
  allGone(since: number, timeoutMs: number): Promise<number>;
}

const running: NpmStart[] = [];

async function npmStart(env: Record<string, string> = {}): Promise<NpmStart> {
  const dir = mkdtempSync(join(tmpdir(), "serp-supervisor-"));
  // Open to the `postgres` user a private PostgreSQL runs as when we are root.
  chmodSync(dir, 0o755);
  const [port, healthPort] = [await freePort(), await freePort()];
  // No REDIS_URL: run.mjs starts its private Redis. The test run's PostgreSQL when there is one
  // (a private one per start would only slow this down), else a private one in the same folder.
  const database: Record<string, string> = process.env.DATABASE_URL ? { DATABASE_URL: process.env.DATABASE_URL } : { PG_DATA_DIR: join(dir, "pg") };
  // Its own process group, like a terminal's job.
  const child = spawn("npm", ["start"], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", PORT: String(port), HOST: "127.0.0.1", HEALTH_PORT: String(healthPort), REDIS_DATA_DIR: dir, LOG_LEVEL: "info", ...database, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const lines: string[] = [];
  const markers = [dir];
  let partial = "";
  const onData = (chunk: Buffer) => {
    const parts = (partial + chunk.toString()).split("\n");
    partial = parts.pop() ?? "";
    lines.push(...parts.filter((l) => l.trim()));
  };
  child.stdout!.on("data", onData);
  child.stderr!.on("data", onData);
  // Everything it and its descendants wrote has been read only once the pipes close, which can be
  // well after npm itself exits on a busy machine (the keeper outlives it and speaks last).
  let outputClosed = false;
  child.once("close", () => (outputClosed = true));
  const run: NpmStart = {
    child,
    dir,
    database,
    base: `http://127.0.0.1:${port}`,
    health: `http://127.0.0.1:${healthPort}`,
    lines,
    pidOf: (name) => {
      const started = lines.filter((l) => l.startsWith(`[run] ${name} started (pid `)).pop();
      return started ? Number(/pid (\d+)/.exec(started)![1]) : undefined;
    },
    waitForLine: (what, match, timeoutMs = 20_000) =>
      waitFor(what, () => {
        const line = lines.find(match);
        if (!line && outputClosed) throw new StopWaiting(`npm start exited (${child.exitCode ?? child.signalCode}) and said no more:\n${lines.slice(-30).join("\n")}`);
        return line;
      }, timeoutMs, 50),
    processes: () => processesOf(markers),
    allGone: async (since, timeoutMs) => {
      await waitFor("every process of the run gone", () => processesOf(markers).length === 0, timeoutMs, 50).catch((err: Error) => {
        throw new Error(`${err.message}; left: ${JSON.stringify(processesOf(markers))}\n${lines.slice(-30).join("\n")}`);
      });
      return Date.now() - since;
    },
  };
  running.push(run);
  await waitFor("API and worker ready", async () => {
    if (child.exitCode !== null) throw new StopWaiting(`npm start exited (${child.exitCode})`);
    return (await statusOf(`${run.base}/readyz`)) === 200 && (await statusOf(`${run.health}/readyz`)) === 200;
  }, 40_000, 100).catch((err: Error) => {
    throw new Error(`${err.message}\n${lines.slice(-30).join("\n")}`);
  });
  markers.push(new URL(readFileSync(join(dir, "redis-url"), "utf8").trim()).host);
  // The scan that counts what is left sees the whole tree: npm, run.mjs, the keeper, Redis, API, worker.
  const tree = run.processes().map((p) => p.cmd).join("\n");
  for (const part of [/^npm start/m, /scripts\/run\.mjs start$/m, /redis-keeper\.mjs/, /^\S*redis-server /m, /apps\/api\/src\/index\.ts/, /apps\/worker\/src\/index\.ts/]) {
    expect(tree).toMatch(part);
  }
  return run;
}

afterEach(() => {
  // A failed test must not leave its processes behind either.
  for (const run of running.splice(0)) {
    for (const { pid } of run.processes()) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
    rmSync(run.dir, { recursive: true, force: true });
  }
});

test("restarts back off 1 s, 2 s, 4 s … up to 30 s", () => {
  expect([1, 2, 3, 4, 5, 6, 7, 20].map((n) => restartDelay(n))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000]);
});

test("npm start: a SIGKILLed worker, then API, is restarted while the other serves; the CLI finds the private Redis; SIGTERM to npm stops everything", async () => {
  const run = await npmStart({ API_KEY: "sk_test_supervisor_key_1" });
  const redisUrl = readFileSync(join(run.dir, "redis-url"), "utf8").trim();
  expect(redisUrl).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);

  // The CLI without REDIS_URL, as an operator runs it beside npm start (in the background meanwhile).
  const cli = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const c = spawn(process.execPath, ["--import", "tsx", "apps/cli/src/main.ts", "account", "create", "--name", "ops", "--credits", "5"], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", REDIS_DATA_DIR: run.dir, ...run.database },
    });
    let stdout = "";
    let stderr = "";
    c.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    c.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    c.once("exit", (code) => resolve({ code, stdout, stderr }));
  });

  // The worker dies: run.mjs says why and restarts it after 1 s; the API answers all along.
  const oldWorker = run.pidOf("worker")!;
  const killedWorkerAt = Date.now();
  process.kill(oldWorker, "SIGKILL");
  const apiAnswers: number[] = [];
  let workerRestarted = 0;
  const workerBack = await waitFor("a new worker ready", async () => {
    apiAnswers.push(await statusOf(`${run.base}/healthz`));
    if (run.pidOf("worker") === oldWorker) return false;
    workerRestarted ||= Date.now() - killedWorkerAt;
    return (await statusOf(`${run.health}/readyz`)) === 200 && Date.now() - killedWorkerAt;
  }, 20_000, 100);
  // Started again after the 1 s back-off (ready once it has booted, which takes longer on a busy machine).
  expect(workerRestarted).toBeLessThan(4_000);
  expect(apiAnswers.length).toBeGreaterThan(5);
  expect(apiAnswers.every((s) => s === 200)).toBe(true);
  expect(run.lines).toContainEqual(expect.stringMatching(/^\[run\] worker ended on its own \(signal SIGKILL\) after [\d.]+ s: restarting in 1 s \(restart 1 in a row\)$/));

  // The API dies: restarted the same way; the worker's health server answers all along.
  const oldApi = run.pidOf("api")!;
  const killedApiAt = Date.now();
  process.kill(oldApi, "SIGKILL");
  const workerAnswers: number[] = [];
  let apiRestarted = 0;
  const apiBack = await waitFor("a new API ready", async () => {
    workerAnswers.push(await statusOf(`${run.health}/healthz`));
    if (run.pidOf("api") === oldApi) return false;
    apiRestarted ||= Date.now() - killedApiAt;
    return (await statusOf(`${run.base}/readyz`)) === 200 && Date.now() - killedApiAt;
  }, 20_000, 100);
  expect(apiRestarted).toBeLessThan(4_000);
  expect(workerAnswers.every((s) => s === 200)).toBe(true);
  expect(run.lines).toContainEqual(expect.stringMatching(/^\[run\] api ended on its own \(signal SIGKILL\) after [\d.]+ s: restarting in 1 s/));

  // The CLI used npm start's Redis (one line on stderr, JSON on stdout): the key it made works on the API.
  const made = await cli;
  expect(made.code).toBe(0);
  expect(made.stderr.split("\n")).toContain(`using Redis ${redisUrl}, the one npm start runs (named in ${join(run.dir, "redis-url")}; REDIS_URL is unset)`);
  const { apiKey } = JSON.parse(made.stdout) as { apiKey: string };
  const account = await fetch(`${run.base}/v1/account`, { headers: { Authorization: `Bearer ${apiKey}` } });
  expect(account.status).toBe(200);

  // SIGTERM to npm (which only signals its `sh -c`): run.mjs notices, stops the apps, then Redis.
  const termAt = Date.now();
  process.kill(run.child.pid!, "SIGTERM");
  const stopMs = await run.allGone(termAt, 20_000);
  expect(await statusOf(`${run.base}/healthz`)).toBe(0);
  expect(existsSync(join(run.dir, "redis-url"))).toBe(false);
  const at = (text: string) => run.lines.findIndex((l) => l.startsWith(`[run] ${text}`));
  // npm 10+ signals only the `sh -c` it runs scripts in, which dies: run.mjs sees its parent go.
  expect(run.lines).toContainEqual(expect.stringMatching(/^\[run\] (npm is gone|SIGTERM): stopping the API and worker, then redis-server/));
  expect(at("redis-server stopped")).toBeGreaterThan(Math.max(at("api stopped"), at("worker stopped")));
  console.log(
    `supervisor: after SIGKILL the worker was started again in ${workerRestarted} ms and ready in ${workerBack} ms, the API in ${apiRestarted} ms and ${apiBack} ms; ` +
      `everything gone ${stopMs} ms after SIGTERM to npm`,
  );
}, 90_000);

const withFixtures = fixturesAvailable ? test : test.skip;

withFixtures("Ctrl-C with jobs in flight: they finish, then Redis stops, and everything is gone well within WORKER_SHUTDOWN_TIMEOUT_MS", async () => {
  const replay: ReplayServer = await startReplayServer({ dir: FIXTURES_DIR });
  try {
    replay.setFaults({ latencyMs: 2_000 });
    const key = "sk_test_supervisor_key_2";
    const timeoutMs = 10_000;
    const run = await npmStart({
      API_KEY: key, UPSTREAM_BASE_URL: replay.url, WORKER_QUEUES: "fast", WORKER_CONCURRENCY: "8", WORKER_SHUTDOWN_TIMEOUT_MS: String(timeoutMs),
    });
    const submitted = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        fetch(`${run.base}/v1/jobs`, {
          method: "POST",
          headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
          body: JSON.stringify({ endpoint: "web-search", params: { query: `coffee ${i}` }, queue: "fast" }),
        }),
      ),
    );
    expect(submitted.map((r) => r.status)).toEqual([202, 202, 202, 202]);
    await waitFor("four jobs in flight upstream", () => replay.requests().length >= 4, 15_000, 20);

    const interruptedAt = Date.now();
    process.kill(-run.child.pid!, "SIGINT");
    const stopMs = await run.allGone(interruptedAt, timeoutMs + 5_000);
    expect(stopMs).toBeLessThan(timeoutMs);
    const worker = run.lines.filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.app === "worker");
    // Redis stayed up while the jobs in flight finished: all four completed, nothing handed back.
    expect(worker.filter((l) => l.msg === "job completed")).toHaveLength(4);
    expect(worker.find((l) => l.msg === "stopped")).toMatchObject({ clean: true });
    expect(worker.some((l) => /handed back|could not/.test(String(l.msg)))).toBe(false);
    const at = (text: string) => run.lines.findIndex((l) => l.startsWith(`[run] ${text}`));
    expect(at("SIGINT: stopping the API and worker, then redis-server")).toBeGreaterThan(-1);
    // Its line can still be in the pipe when the last process is gone.
    await run.waitForLine("redis-server's stop", (l) => l.startsWith("[run] redis-server stopped"), 10_000);
    expect(at("redis-server stopped")).toBeGreaterThan(at("worker stopped"));
    console.log(`supervisor: Ctrl-C with 4 jobs in flight (2 s upstream latency): everything gone after ${stopMs} ms`);
  } finally {
    await replay.close();
  }
}, 60_000);

test("SIGKILL of run.mjs itself: the API and worker stop on their own, then Redis; nothing is left", async () => {
  const run = await npmStart();
  // run.mjs is the API's parent.
  const stat = readFileSync(`/proc/${run.pidOf("api")}/stat`, "utf8");
  const runMjs = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
  expect(readFileSync(`/proc/${runMjs}/cmdline`, "utf8")).toContain("scripts/run.mjs");
  const killedAt = Date.now();
  process.kill(runMjs, "SIGKILL");
  const stopMs = await run.allGone(killedAt, 15_000);
  expect(existsSync(join(run.dir, "redis-url"))).toBe(false);
  await run.waitForLine("the keeper's last word", (l) => l === "[run] run.mjs is gone: redis-server stopped after the API and worker", 10_000);
  console.log(`supervisor: everything gone ${stopMs} ms after SIGKILL of run.mjs`);
}, 60_000);

withFixtures("a second Ctrl-C stops everything at once, without waiting for jobs in flight", async () => {
  const replay: ReplayServer = await startReplayServer({ dir: FIXTURES_DIR });
  try {
    replay.setFaults({ latencyMs: 30_000 });
    const key = "sk_test_supervisor_key_3";
    const run = await npmStart({ API_KEY: key, UPSTREAM_BASE_URL: replay.url, WORKER_QUEUES: "fast", WORKER_SHUTDOWN_TIMEOUT_MS: "20000" });
    const res = await fetch(`${run.base}/v1/jobs`, {
      method: "POST",
      headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
      body: JSON.stringify({ endpoint: "web-search", params: { query: "coffee" }, queue: "fast" }),
    });
    expect(res.status).toBe(202);
    await waitFor("the job in flight upstream", () => replay.requests().length >= 1, 15_000, 20);
    process.kill(-run.child.pid!, "SIGINT");
    await run.waitForLine("the worker waiting on its job", (l) => l.includes('"app":"worker"') && l.includes("finishing jobs in flight"), 5_000);
    const againAt = Date.now();
    process.kill(-run.child.pid!, "SIGINT");
    const stopMs = await run.allGone(againAt, 5_000);
    expect(stopMs).toBeLessThan(3_000);
    expect(run.lines).toContain("[run] SIGINT again: killing the API and worker now");
    console.log(`supervisor: everything gone ${stopMs} ms after a second Ctrl-C`);
  } finally {
    await replay.close();
  }
}, 60_000);

withFixtures("a worker whose Redis is gone still stops on SIGTERM, at most 2 s past WORKER_SHUTDOWN_TIMEOUT_MS", async () => {
  const own = await startOwnRedis();
  const stack = await startStack({ redisUrl: own.url, workerQueues: [], env: { RATE_LIMIT_PER_MINUTE: "0", MAX_JOBS_IN_FLIGHT: "0" } });
  const worker = spawnService("worker", {
    ...stack.settings, WORKER_QUEUES: "fast", WORKER_CONCURRENCY: "4", UPSTREAM_BASE_URL: stack.replay.url, WORKER_SHUTDOWN_TIMEOUT_MS: "1000",
  });
  try {
    stack.replay.setFaults({ latencyMs: 30_000 });
    await worker.waitForLog("workers ready", (l) => l.msg === "workers ready", START_BOUND_MS);
    const { auth } = await stack.account(10);
    for (let i = 0; i < 2; i++) {
      const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: `coffee ${i}` }, queue: "fast" });
      expect(res.status).toBe(202);
    }
    await waitFor("two jobs in flight upstream", () => stack.replay.requests().length >= 2, 15_000, 20);
    await own.stop();
    const termAt = Date.now();
    worker.child.kill("SIGTERM");
    const { code } = await worker.exited;
    const stopMs = Date.now() - termAt;
    // Without the bound it waited on Redis forever: handing the jobs back needs Redis.
    expect(stopMs).toBeLessThan(1_000 + 2_000 + 1_000);
    expect(code).toBe(1);
    expect(worker.logs.find((l) => String(l.msg).startsWith("could not stop cleanly in time"))).toMatchObject({ deadlineMs: 3_000 });
    console.log(`supervisor: worker with Redis gone stopped ${stopMs} ms after SIGTERM (WORKER_SHUTDOWN_TIMEOUT_MS=1000)`);
  } finally {
    await worker.kill();
    await own.start();
    // The stack's connections back before it closes (closing one still reconnecting leaves its timer).
    await waitFor("the stack reconnected", () => stack.redis.status === "ready", 20_000, 20);
    // The API's own connections too (a loaded run closed one still reconnecting: "Connection is closed").
    await waitFor("the API ready again", async () => (await request(stack.api.app).get("/readyz")).status === 200, 20_000, 50);
    await stack.close();
    await own.destroy();
  }
}, 150_000);
