/**
 * CLI: npx tsx packages/replay/src/main.ts --dir ../shared/fixtures/google --port 4010
 *        [--page web/coffee-desktop-2023.html] [--routes routes.json] [--default web=web/coffee-desktop-2023.html]
 *        [--latency 50] [--jitter 20] [--fault captcha] [--times 3] [--kinds web,news] [--host 127.0.0.1]
 *        [--https] [--guard 2026-11] [--cert-out cert.pem] [--fallback] [--exits exits.json]
 * Each flag also reads from the environment: REPLAY_DIR, REPLAY_PAGE, REPLAY_ROUTES, REPLAY_PORT, REPLAY_HOST,
 * REPLAY_LATENCY, REPLAY_JITTER, REPLAY_FAULT, REPLAY_TIMES, REPLAY_KINDS, REPLAY_HTTPS=true, REPLAY_GUARD,
 * REPLAY_CERT_OUT, REPLAY_EXITS. Flags win over the environment.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { Closers, onShutdown } from "@serp/shared";
import { parseExits } from "./exits.js";
import { parseFaults } from "./faults.js";
import { guardPreset, type GuardPresetName } from "./guard.js";
import { startReplayServer, type ReplayOptions, type ReplayRoute } from "./server.js";
import { isReplayKind, type ReplayKind } from "./target.js";

const USAGE = `usage: main.ts [--dir DIR] [--page FILE] [--routes FILE.json] [--default KIND=FILE]... [--port 4010] [--host 127.0.0.1]
               [--latency MS] [--jitter MS] [--fault MODE] [--times N] [--kinds KIND,KIND]
               [--https] [--guard PRESET] [--cert-out FILE] [--fallback] [--exits FILE.json]`;

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

function integer(text: string | undefined, name: string): number | undefined {
  if (text === undefined || text === "") return undefined;
  if (!/^\d+$/.test(text)) throw new Error(`${name} must be a whole number, got "${text}"`);
  return Number(text);
}

function defaultsOf(pairs: string[]): Partial<Record<ReplayKind, string>> {
  const defaults: Partial<Record<ReplayKind, string>> = {};
  for (const pair of pairs) {
    const [kind, file] = pair.split("=", 2);
    if (!isReplayKind(kind) || !file) throw new Error(`--default takes KIND=FILE, got "${pair}"`);
    defaults[kind] = file;
  }
  return defaults;
}

function optionsFrom(argv: string[], env: NodeJS.ProcessEnv): ReplayOptions & { certOut?: string } {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      dir: { type: "string" },
      page: { type: "string" },
      routes: { type: "string" },
      default: { type: "string", multiple: true },
      port: { type: "string" },
      host: { type: "string" },
      latency: { type: "string" },
      jitter: { type: "string" },
      fault: { type: "string" },
      times: { type: "string" },
      kinds: { type: "string" },
      https: { type: "boolean" },
      guard: { type: "string" },
      "cert-out": { type: "string" },
      fallback: { type: "boolean" },
      exits: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const pick = (flag: string | undefined, name: string) => flag ?? (env[name] || undefined);
  const page = pick(values.page, "REPLAY_PAGE");
  const fallbackDir = resolve(repoRoot, "../shared/fixtures/google");
  const dir = pick(values.dir, "REPLAY_DIR") ?? (page === undefined && existsSync(fallbackDir) ? fallbackDir : undefined);
  const routesFile = pick(values.routes, "REPLAY_ROUTES");
  const kinds = pick(values.kinds, "REPLAY_KINDS");
  const rawFaults = {
    latencyMs: integer(pick(values.latency, "REPLAY_LATENCY"), "latency"),
    jitterMs: integer(pick(values.jitter, "REPLAY_JITTER"), "jitter"),
    mode: pick(values.fault, "REPLAY_FAULT"),
    times: integer(pick(values.times, "REPLAY_TIMES"), "times"),
    kinds: kinds?.split(",").map((k) => k.trim()),
  };
  const faults = parseFaults(Object.fromEntries(Object.entries(rawFaults).filter(([, v]) => v !== undefined)));
  const guard = pick(values.guard, "REPLAY_GUARD");
  // Checked here, so that a bad name stops it before it opens a port.
  if (guard !== undefined) guardPreset(guard);
  const exitsFile = pick(values.exits, "REPLAY_EXITS");
  // Validated here too, so that a bad file stops it before it opens a port.
  const exits = exitsFile === undefined ? undefined : parseExits(JSON.parse(readFileSync(exitsFile, "utf8")));
  const httpsEnv = env.REPLAY_HTTPS;
  if (httpsEnv && httpsEnv !== "true" && httpsEnv !== "false") throw new Error(`REPLAY_HTTPS must be true or false, got "${httpsEnv}"`);
  return {
    dir: dir === undefined ? undefined : resolve(dir),
    page,
    routes: routesFile ? (JSON.parse(readFileSync(routesFile, "utf8")) as ReplayRoute[]) : undefined,
    defaults: defaultsOf(values.default ?? []),
    fallback: values.fallback ?? false,
    host: pick(values.host, "REPLAY_HOST") ?? "127.0.0.1",
    port: integer(pick(values.port, "REPLAY_PORT"), "port") ?? 4010,
    faults: Object.keys(faults).length > 0 ? faults : undefined,
    https: values.https ?? httpsEnv === "true",
    guard: guard as GuardPresetName | undefined,
    exits,
    certOut: pick(values["cert-out"], "REPLAY_CERT_OUT"),
  };
}

async function main(): Promise<void> {
  const options = optionsFrom(process.argv.slice(2), process.env);
  const server = await startReplayServer(options);
  const mode = options.page ? `page ${options.page}` : `dir ${options.dir}`;
  const extras = [options.faults && `faults ${JSON.stringify(options.faults)}`, options.guard && `guard ${options.guard}`, options.exits && "exit model"].filter(Boolean);
  console.log(`replay upstream listening on ${server.url} (${[mode, ...extras].join(", ")})`);
  if (server.certPem) {
    const certFile = resolve(options.certOut ?? join(tmpdir(), `replay-${server.port}-cert.pem`));
    writeFileSync(certFile, server.certPem);
    console.log(`self-signed certificate (PEM) written to ${certFile}: start a worker with UPSTREAM_CA_FILE=${certFile}`);
  }
  const closers = new Closers();
  closers.add("replay server", () => server.close());
  // A second Ctrl-C: stop now.
  onShutdown(closers, { deadlineMs: 10_000, onError: (name, err) => console.error(`${name}: ${String(err)}`), again: () => process.exit(1) });
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  console.error(USAGE);
  process.exit(1);
});
