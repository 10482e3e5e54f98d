/**
 * What scripts/redis-keeper.mjs and scripts/postgres-keeper.mjs share: a small process, in a session
 * of its own, that holds one private server of `npm start` (a terminal's Ctrl-C does not reach it),
 * records its URL for the CLI, and stops it last, after the API and worker.
 *
 *   node scripts/<name>-keeper.mjs DATA_DIR APPS_GRACE_MS     (with an IPC channel to run.mjs)
 *
 * - Refuses to start a second server on a data dir whose recorded server still answers.
 * - Once the server answers: sends `{ url }` to run.mjs and writes DATA_DIR/<urlFile>, which the CLI
 *   reads when the URL variable is unset; the file goes when the server stops.
 * - run.mjs sends `{ apps: [pid…] }` whenever it (re)starts one. On `{ stop: true }`, on SIGTERM/
 *   SIGINT/SIGHUP, or when run.mjs is gone (its channel closed, even after a SIGKILL), the keeper
 *   waits until those processes have exited (at most APPS_GRACE_MS), then stops the server and exits.
 * - A server that dies on its own is started again (Supervised), with the apps' back-off.
 * Plain JavaScript with Node's standard library only: it runs before dependencies are installed.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isRunning } from "./supervise.mjs";

const say = (msg) => console.log(`[run] ${msg}`);

/**
 * @param {{
 *   label: string,
 *   urlFile: string,
 *   answers: (url: string) => Promise<boolean> | boolean,
 *   howToStop: (url: string, dir: string) => string,
 *   start: (dir: string, say: (msg: string) => void) => Promise<{ url: string, server: import("./supervise.mjs").Supervised }>,
 *   stopSignal: NodeJS.Signals,
 *   stopGraceMs: number,
 * }} server
 */
export async function keep(server) {
  const [dir, graceArg] = process.argv.slice(2);
  const appsGraceMs = Number(graceArg) || 60_000;
  const urlFile = join(dir, server.urlFile);
  const send = (msg) => process.connected && process.send(msg);
  const fail = (message) => {
    send({ error: message });
    process.exit(1);
  };

  mkdirSync(dir, { recursive: true });
  let recorded;
  try {
    recorded = readFileSync(urlFile, "utf8").trim();
  } catch {
    // nothing recorded: no other server on this data
  }
  if (recorded && (await server.answers(recorded))) {
    fail(`a ${server.label} already runs on ${dir} at ${recorded} (another npm start, or one left behind: ${server.howToStop(recorded, dir)})`);
  }
  const started = await server.start(dir, say).catch((err) => fail(err.message));
  const { url, server: held } = started;
  writeFileSync(urlFile, `${url}\n`);
  send({ url });

  let apps = [];
  let stopping = false;
  const stop = async (why) => {
    if (stopping) return;
    stopping = true;
    const until = Date.now() + appsGraceMs;
    while (apps.some(isRunning) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    const left = apps.filter(isRunning);
    if (left.length) say(`pids ${left.join(", ")} still run after ${appsGraceMs} ms: stopping ${server.label} anyway`);
    await held.stop(server.stopSignal, server.stopGraceMs);
    // Only our own URL: a file another run wrote since is not ours to remove.
    try {
      if (readFileSync(urlFile, "utf8").trim() === url) rmSync(urlFile);
    } catch {
      // already gone
    }
    if (why) say(why);
    process.exit(0);
  };

  process.on("message", (msg) => {
    if (Array.isArray(msg?.apps)) apps = msg.apps.filter(Number.isInteger);
    if (msg?.stop) void stop();
  });
  process.on("disconnect", () => void stop(`run.mjs is gone: ${server.label} stopped after the API and worker`));
  for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(signal, () => void stop(`${signal}: ${server.label} stopped`));
}
