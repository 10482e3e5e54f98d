import { pino } from "pino";
import { Locations } from "@serp/upstream";
import { loadEnv } from "./env.js";
import { createApiRuntime } from "./runtime.js";

const env = loadEnv();
const logger = pino({ level: env.LOG_LEVEL, base: { app: "api" } });
// With a location list configured, unknown locations are refused and look-ups work.
const locations = env.GEOTARGETS_DIR ? Locations.fromDirectory(env.GEOTARGETS_DIR) : Locations.empty();
const rt = await createApiRuntime(env, logger, locations);

if (env.API_KEY) {
  const { accountId, created } = await rt.accounts.ensureKey(env.API_KEY, env.API_KEY_CREDITS, "API_KEY account");
  logger.info({ accountId, created, credits: created ? env.API_KEY_CREDITS : undefined }, "API_KEY account ready");
}

const server = rt.app.listen(env.PORT, env.HOST, () => {
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : env.PORT;
  logger.info({ port }, `API listening on http://127.0.0.1:${port}`);
});
server.headersTimeout = 15_000;
server.requestTimeout = Math.max(env.LIVE_DEADLINE_MS + 10_000, 30_000);
rt.closers.add("http server", () => new Promise<void>((resolve) => server.close(() => resolve())));

let stopping = false;
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, async () => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, "shutting down");
    await rt.closers.closeAll(Math.max(env.LIVE_DEADLINE_MS, 10_000), (name, err) => logger.error({ err, name }, "close failed"));
    process.exit(0);
  });
}
