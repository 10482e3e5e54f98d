/**
 * Preloaded (`node --import`) into the API and worker that `npm start` runs. They run in process
 * groups of their own, so a terminal's Ctrl-C reaches only run.mjs, which stops them in order; when
 * run.mjs is gone without doing so (killed with SIGKILL), this stops the process as SIGTERM does
 * (jobs in flight finish or are handed back), so nothing outlives `npm start`. Not when the app is
 * stopping already (run.mjs signalled it before it went): a second SIGTERM would cut its drain short
 * (packages/shared/src/closers.ts names the mark).
 */
import { watchParent } from "./supervise.mjs";

watchParent(() => {
  if (!process[Symbol.for("serp.shutdown.started")]) process.kill(process.pid, "SIGTERM");
});
