import { createServer, type Server } from "node:http";
import { pino } from "pino";
import { ConfigError, LogOutput, onShutdown } from "@serp/shared";
import { ConfigFileError, Locations } from "@serp/upstream";
import { createMetricsApp } from "./app.js";
import { publicBaseUrl } from "./compat/links.js";
import { httpServerSettings, loadEnv, type ApiEnv } from "./env.js";
import { apiShutdownBounds, drainable } from "./ops/http-shutdown.js";
import { startDraining } from "./ops/readiness.js";
import { createApiRuntime, ensureApiKeyAccount } from "./runtime.js";

/** Log lines go to standard output; a reader that stalls or is gone never holds the process up. */
const output = new LogOutput();

/**
 * Every setting is checked before anything connects (the geotargets files too): a bad one is a
 * single fatal log line naming the setting and its rule, then exit 78 (EX_CONFIG: npm start's
 * supervisor does not restart it, scripts/supervise.mjs).
 */
function configuration(): { env: ApiEnv; locations: Locations } {
  try {
    const env = loadEnv();
    // With a location list configured, unknown locations are refused and look-ups work.
    const locations = env.GEOTARGETS_DIR ? Locations.fromDirectory(env.GEOTARGETS_DIR) : Locations.empty();
    return { env, locations };
  } catch (err) {
    if (!(err instanceof ConfigError || err instanceof ConfigFileError)) throw err;
    pino({ base: { app: "api" } }, output).fatal(err.message);
    process.exit(78);
  }
}

const { env, locations } = configuration();
const logger = pino({ level: env.LOG_LEVEL, base: { app: "api" } }, output);
if (!env.PUBLIC_BASE_URL) {
  logger.warn({ base: publicBaseUrl(env) }, "PUBLIC_BASE_URL is not set: links in responses reach this machine only");
}
const rt = await createApiRuntime(env, logger, locations);

if (env.API_KEY) await ensureApiKeyAccount(rt, env.API_KEY, env.API_KEY_CREDITS, logger);

const http = httpServerSettings(env);
const server = createServer({ maxHeaderSize: http.maxHeaderSize, connectionsCheckingInterval: http.connectionsCheckingInterval }, rt.app);
server.headersTimeout = http.headersTimeout;
server.requestTimeout = http.requestTimeout;
server.keepAliveTimeout = http.keepAliveTimeout;
const httpDrain = drainable(server);
server.once("error", (err) => {
  logger.fatal({ err }, "cannot listen");
  process.exit(1);
});
server.listen(env.PORT, env.HOST, () => {
  const { address, port } = listeningOn(server, env.PORT);
  logger.info({ address, port }, `API listening on ${urlOf(address, port)}`);
  if (!env.METRICS_TOKEN && env.METRICS_PORT === undefined && !isLoopback(address)) {
    logger.warn("GET /metrics is open to whoever reaches this address: set METRICS_TOKEN, or METRICS_PORT to serve it elsewhere");
  }
});

// METRICS_PORT: /metrics on a port of its own (same HOST), off the API's port.
if (env.METRICS_PORT !== undefined) {
  const metricsServer = createServer(createMetricsApp(rt.ctx, env.METRICS_TOKEN));
  metricsServer.once("error", (err) => {
    logger.fatal({ err }, "cannot listen (METRICS_PORT)");
    process.exit(1);
  });
  metricsServer.listen(env.METRICS_PORT, env.HOST, () => {
    const { address, port } = listeningOn(metricsServer, env.METRICS_PORT!);
    logger.info({ address, port }, `metrics on ${urlOf(address, port)}/metrics${env.METRICS_TOKEN ? " (behind METRICS_TOKEN)" : ""}`);
  });
  rt.closers.add("metrics server", () => new Promise<void>((resolve) => {
    metricsServer.close(() => resolve());
    metricsServer.closeAllConnections();
  }));
}

/** The address a server really listens on (HOST as the system resolved it), for the log. */
function listeningOn(s: Server, fallbackPort: number): { address: string; port: number } {
  const addr = s.address();
  return typeof addr === "object" && addr ? { address: addr.address, port: addr.port } : { address: env.HOST, port: fallbackPort };
}

function urlOf(address: string, port: number): string {
  return `http://${address.includes(":") ? `[${address}]` : address}:${port}`;
}

function isLoopback(address: string): boolean {
  return /^127\./.test(address) || address === "::1" || address === "::ffff:127.0.0.1";
}

// A live request may wait up to the live deadline for its job: in-flight requests get that long
// (plus a margin to settle a timed-out job) before their connections are cut.
const { drainMs, deadlineMs, exitAfterMs } = apiShutdownBounds(env.LIVE_DEADLINE_MS);
// Registered last, so closed first: queues and Redis stay open for the requests still being answered.
rt.closers.add("http server", () => httpDrain.close(drainMs));

// Whatever Redis, PostgreSQL or the log's reader do, the process is gone a little after the drain.
onShutdown(rt.closers, {
  deadlineMs,
  exitAfterMs,
  begin: (signal) => {
    startDraining(rt.ctx);
    logger.info({ signal, drainMs }, "shutting down: no new connections, answering requests in flight");
  },
  onError: (name, err) => logger.error({ err, name }, "close failed"),
  end: (clean) => logger.info({ clean }, "stopped"),
  late: (exitAfterMs) => logger.error({ exitAfterMs }, "could not stop cleanly in time: exiting now"),
  again: (signal) => logger.warn({ signal }, "second signal: stopping now, without answering requests in flight"),
});
