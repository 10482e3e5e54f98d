/**
 * A process for log-output.test.ts: an app's logger (pino into LogOutput) and shutdown wiring, as the
 * API has them. Says "ready", and on SIGTERM logs LINES lines before it stops.
 */
import { pino } from "pino";
import { Closers, onShutdown } from "../src/closers.js";
import { LogOutput } from "../src/log-output.js";

const logger = pino({ base: { app: "fixture" } }, new LogOutput());
const lines = Number(process.env.LINES ?? 1_000);
onShutdown(new Closers(), {
  deadlineMs: 1_000,
  begin: (signal) => {
    for (let i = 0; i < lines; i++) logger.info({ signal, i }, "shutting down: a line of the drain");
  },
  end: (clean) => logger.info({ clean }, "stopped"),
});
logger.info("ready");
setInterval(() => undefined, 1_000);
