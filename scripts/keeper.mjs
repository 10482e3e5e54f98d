/**
 * What scripts/redis-keeper.mjs and scripts/postgres-keeper.mjs share: a small process, in a session
 * of its own, that holds one private server of `npm start` (a terminal's Ctrl-C does not reach it),
 * records its URL for the CLI, and stops it last, after the API and worker.
 *
 *   node scripts/<name>-keeper.mjs DATA_DIR APPS_GRACE_MS     (with an IPC channel to run.mjs)
 *
 * - Once the server answers: sends `{ url, tookOver, waitedMs, pid }` to run.mjs and writes
 *   DATA_DIR/<urlFile>, which the CLI reads when the URL variable is unset; the file goes when the
 *   server stops. DATA_DIR/<ownerFile> names the keeper, its run.mjs, the server and the apps.
 * - run.mjs sends `{ apps: [pid…] }` whenever it (re)starts one. On `{ stop: true }`, on SIGTERM/
 *   SIGINT/SIGHUP, or when run.mjs is gone (its channel closed, even after a SIGKILL), the keeper
 *   waits until those processes have exited (at most APPS_GRACE_MS), then stops the server and exits.
 *   From then on a server that dies is not started again: its apps are gone or going.
 * - A server that dies on its own while run.mjs runs is started again (Supervised), with the apps'
 *   back-off, on the same port.
 * - A restart at once (npm start again while the previous one is still stopping, or after it was
 *   killed): a server the previous run left running is taken over (its keeper, told with SIGUSR2,
 *   leaves it running and exits), with the previous apps still to wait for; one that is stopping is
 *   waited for. Only a server whose keeper still serves a live npm start is refused.
 * Plain JavaScript with Node's standard library only: it runs before dependencies are installed.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { commandOf, isRunning, surviveLostOutput } from "./supervise.mjs";

const say = (msg) => console.log(`[run] ${msg}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** The command line of `pid`, "" when it is gone. */
function cmdlineOf(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}

/** Resolves true once `done()` holds, false after `timeoutMs`. */
async function until(done, timeoutMs, everyMs = 50) {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (await done()) return true;
    if (Date.now() >= end) return false;
    await sleep(everyMs);
  }
}

/** A server this keeper did not start (a previous keeper's), held by its pid like a Supervised child. */
class Adopted {
  constructor(pid, onGone) {
    this.pid = pid;
    this.stopping = false;
    this.watch = setInterval(() => {
      if (isRunning(pid) || this.stopping) return;
      clearInterval(this.watch);
      onGone();
    }, 250);
  }

  async stop(signal, graceMs) {
    this.stopping = true;
    clearInterval(this.watch);
    if (!isRunning(this.pid)) return;
    process.kill(this.pid, signal);
    if (await until(() => !isRunning(this.pid), graceMs)) return;
    process.kill(this.pid, "SIGKILL");
    await until(() => !isRunning(this.pid), 5_000);
  }
}

/**
 * @param {{
 *   label: string,
 *   command: string,
 *   urlFile: string,
 *   ownerFile: string,
 *   answers: (url: string) => Promise<boolean> | boolean,
 *   start: (dir: string, say: (msg: string) => void, port?: number) => Promise<{ url: string, server: import("./supervise.mjs").Supervised }>,
 *   stopSignal: NodeJS.Signals,
 *   stopGraceMs: number,
 * }} server
 */
export async function keep(server) {
  surviveLostOutput();
  const [dir, graceArg] = process.argv.slice(2);
  const appsGraceMs = Number(graceArg) || 60_000;
  const urlFile = join(dir, server.urlFile);
  const ownerFile = join(dir, server.ownerFile);
  const send = (msg) => process.connected && process.send(msg);
  const fail = (message) => {
    send({ error: message });
    process.exit(1);
  };
  mkdirSync(dir, { recursive: true });

  const previous = await endPrevious(server, dir, ownerFile, urlFile).catch((err) => fail(err.message));
  let url;
  let held;
  let apps = previous.apps;
  if (previous.server) {
    url = previous.url;
    held = adopt(previous.server);
  } else {
    const started = await server.start(dir, say).catch((err) => fail(err.message));
    ({ url, server: held } = started);
  }
  const port = Number(new URL(url).port);
  /** The adopted server died on its own: a fresh one on its port, so the apps' URL stays right. */
  function adopt(pid) {
    return new Adopted(pid, async () => {
      say(`the ${server.label} taken over (pid ${pid}) ended on its own: starting one on port ${port}`);
      held = (await server.start(dir, say, port).catch((err) => fail(err.message))).server;
      record();
    });
  }

  let stopping = false;
  const record = () =>
    writeFileSync(ownerFile, `${JSON.stringify({ keeper: process.pid, run: process.ppid, server: held.pid ?? held.child?.pid, url, apps, stopping })}\n`);
  writeFileSync(urlFile, `${url}\n`);
  record();
  send({ url, tookOver: Boolean(previous.server), waitedMs: previous.waitedMs, pid: held.pid ?? held.child?.pid });

  let stoppingServer = false;
  const stop = async (why) => {
    if (stopping) return;
    stopping = true;
    // The apps are gone or going: a server that dies now is not started again for them.
    held.stopping = true;
    clearTimeout(held.timer);
    record();
    await until(() => !apps.some(isRunning), appsGraceMs);
    const left = apps.filter(isRunning);
    if (left.length) say(`pids ${left.join(", ")} still run after ${appsGraceMs} ms: stopping ${server.label} anyway`);
    stoppingServer = true;
    await held.stop(server.stopSignal, server.stopGraceMs);
    // Only our own files: ones another run wrote since are not ours to remove.
    for (const [file, mine] of [[urlFile, url], [ownerFile, `"keeper":${process.pid},`]]) {
      try {
        if (readFileSync(file, "utf8").includes(mine)) rmSync(file);
      } catch {
        // already gone
      }
    }
    if (why) say(why);
    process.exit(0);
  };

  process.on("message", (msg) => {
    if (Array.isArray(msg?.apps)) {
      // The previous run's apps, when its server was taken over, are waited for too.
      apps = [...new Set([...apps.filter(isRunning), ...msg.apps.filter(Number.isInteger)])];
      record();
    }
    if (msg?.stop) void stop();
  });
  process.on("disconnect", () => void stop(`run.mjs is gone: ${server.label} stopped after the API and worker`));
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => void stop(`${signal}: ${server.label} stopped`));
  // A new npm start takes the server over: leave it running (its files are the new keeper's now).
  process.on("SIGUSR2", () => {
    if (stoppingServer || !stopping) return;
    held.stopping = true;
    clearTimeout(held.timer);
    clearInterval(held.watch);
    say(`${server.label} handed over to a new npm start, still running`);
    process.exit(0);
  });
}

/**
 * What a previous run left on this data dir, ended or taken over: `{ server, url, apps, waitedMs }`,
 * `server` being the pid of a running server to take over (undefined: start one). Throws when a live
 * npm start holds it.
 */
async function endPrevious(server, dir, ownerFile, urlFile) {
  const none = { server: undefined, url: undefined, apps: [], waitedMs: 0 };
  let owner;
  try {
    owner = JSON.parse(readFileSync(ownerFile, "utf8"));
  } catch {
    // No owner recorded: a server from elsewhere on this data would be corrupted by a second one.
    let recorded;
    try {
      recorded = readFileSync(urlFile, "utf8").trim();
    } catch {
      return none;
    }
    if (recorded && (await server.answers(recorded))) {
      throw new Error(`a ${server.label} that npm start did not record already runs on ${dir} at ${recorded}: stop it, or give npm start another data dir`);
    }
    return none;
  }
  const serverRuns = () => Number.isInteger(owner.server) && isRunning(owner.server) && commandOf(owner.server) === server.command;
  // Still a keeper like this one (not a pid reused since): SIGUSR2 would end another process.
  const script = basename(process.argv[1]);
  const keeperRuns = () => Number.isInteger(owner.keeper) && owner.keeper !== process.pid && isRunning(owner.keeper) && cmdlineOf(owner.keeper).includes(script);
  const startedAt = Date.now();
  if (keeperRuns()) {
    if (!owner.stopping && isRunning(owner.run)) {
      throw new Error(`a ${server.label} already runs on ${dir} at ${owner.url} for another npm start (run.mjs pid ${owner.run}): stop that one first, or give this one another data dir`);
    }
    // Stopping: it hands its server over at once, or, stopping that server already, exits once it
    // has. Told again until it has gone (it may not have seen its run.mjs go yet).
    const tell = () => {
      try {
        process.kill(owner.keeper, "SIGUSR2");
      } catch {
        // gone meanwhile
      }
      return !keeperRuns();
    };
    if (!(await until(tell, server.stopGraceMs + 5_000, 100))) {
      throw new Error(`the keeper of the previous npm start (pid ${owner.keeper}) did not hand its ${server.label} over nor stop it`);
    }
  }
  // A server starting or stopping: wait until it answers or is gone.
  await until(async () => !serverRuns() || (await server.answers(owner.url)), server.stopGraceMs);
  const apps = Array.isArray(owner.apps) ? owner.apps.filter((pid) => Number.isInteger(pid) && isRunning(pid)) : [];
  if (serverRuns()) {
    if (!(await server.answers(owner.url))) throw new Error(`the ${server.label} of a previous npm start (pid ${owner.server}) neither answers nor stops`);
    return { server: owner.server, url: owner.url, apps, waitedMs: Date.now() - startedAt };
  }
  return { ...none, waitedMs: Date.now() - startedAt };
}
