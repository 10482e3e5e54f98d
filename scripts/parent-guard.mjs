/**
 * Preloaded (`node --import`) into the API and worker that `npm start` runs. They run in process
 * groups of their own, so a terminal's Ctrl-C reaches only run.mjs, which stops them in order; when
 * run.mjs is gone without doing so (killed with SIGKILL), this stops the process as SIGTERM does
 * (jobs in flight finish or are handed back), so nothing outlives `npm start`.
 */
import { watchParent } from "./supervise.mjs";

watchParent(() => process.kill(process.pid, "SIGTERM"));
