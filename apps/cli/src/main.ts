/**
 * Operators' tool: accounts, keys and credits, the upstream's health, and today's parsers over kept
 * pages (`reparse`). Run `npm run cli -- help` (or `--help`).
 * Reads REDIS_URL and SERP_PREFIX like the API (without REDIS_URL, the Redis a running `npm start`
 * recorded; see redis-url.ts), and the upstream settings like the workers.
 *
 * This file parses the command line and answers help on its own; the commands (commands.ts) and
 * what they need (Redis, PostgreSQL, the parsers) are loaded only once a command is known, so a
 * call starts quickly.
 */
import { parseArgs } from "node:util";

export const HELP = `Usage: npm run cli -- <command> [options]

  account create --name NAME [--pack starter|standard|scale|ultimate] [--credits N]
                                 make an account and its first key (the key is printed once)
  account list                   list account ids
  key create --account ID [--label TEXT]   make another key (printed once)
  key list --account ID          list keys (public ids only)
  key revoke --account ID --key KEY_ID     revoke a key by its public id (sk_live_xxxx)
  credits grant --account ID (--pack NAME | --credits N)
  balance --account ID           credits bought minus charged, and credits held by pending jobs
  ledger --account ID [--limit N]          grants, charges and refunds, newest last
  usage --account ID [--from DATE] [--to DATE] [--granularity day|month]
                                 jobs completed and failed and credits per endpoint, in all; with --from, --to or
                                 --granularity per endpoint and day or month (UTC) from the ledger in PostgreSQL
  limits show --account ID       request rate and jobs in flight allowed, and whether each is the default
  limits set --account ID [--rate N [--window SECONDS]] [--concurrency N]
                                 override the account's limits (0 = no limit; "default" removes the override;
                                 --rate counts requests per --window seconds, 60 unless given)
  job show --id JOB_ID           a job as stored, for operators: status, error, credits, attempts, the upstream URL
                                 and how much of its results page the parse understood (coverage; no result)
  upstream proxies [--json]      the proxy pools the workers' settings name (labels only, never credentials), each exit's
                                 state from Redis (ok, resting until, probing), its strikes and why
  upstream status [--json]       each running worker's profile table and breakers (state, rest, last outcome,
                                 success rate), as the workers publish them every few seconds
  canary [--kinds a,b] [--json]  one known query per kind through every profile, from here; prints which work
                                 now and exits 1 when a kind has no working profile (CANARY_PRODUCT_ID: the
                                 product the product kinds ask for)
  reconcile [--json]             every account's balance in Redis against grants − charges in PostgreSQL's ledger
                                 (after draining the ledger stream); lists differences, exit code 1 on any
  rebuild                        after a Redis loss: restores accounts, balances (reserved 0), limits and keys
                                 from PostgreSQL into Redis (run with the workers stopped)
  reparse [--since 1h] [--endpoint web-search] [--limit N] [--json]
                                 today's parsers over the upstream pages the workers kept (RAW_HTML_RETENTION_SECONDS)
                                 since then (s, m, h, d), compared with the results their jobs were sold with: per
                                 job the items per block before → after and the first item that differs

Environment: REDIS_URL (unset: the Redis a running npm start recorded in REDIS_DATA_DIR, default .redis-data/,
else redis://127.0.0.1:6379; stderr says which; REDIS_SENTINELS and REDIS_SENTINEL_NAME: the primary a Sentinel set
names, docs/REDIS.md), DATABASE_URL (unset: the PostgreSQL a running npm start
recorded in PG_DATA_DIR, default .pg-data/, else none), SERP_PREFIX (default serp), and the API's defaults
RATE_LIMIT_PER_MINUTE and MAX_JOBS_IN_FLIGHT (the API's own defaults when unset); the canary reads the
workers' upstream settings (UPSTREAM_BASE_URL, UPSTREAM_PROFILES_FILE, UPSTREAM_PROXIES, UPSTREAM_CA_FILE…; unset: those
of the running npm start), and reparse the workers' page store (RAW_PAGES_DIR, default .raw-pages/, or RAW_PAGES_S3_BUCKET
and its settings: docs/RAW-PAGES.md).`;

const OPTIONS = {
  name: { type: "string" }, pack: { type: "string" }, credits: { type: "string" }, account: { type: "string" },
  label: { type: "string" }, key: { type: "string" }, limit: { type: "string" },
  rate: { type: "string" }, window: { type: "string" }, concurrency: { type: "string" },
  kinds: { type: "string" }, json: { type: "boolean" }, since: { type: "string" }, endpoint: { type: "string" },
  id: { type: "string" }, from: { type: "string" }, to: { type: "string" }, granularity: { type: "string" },
} as const;

export type CliValues = ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: typeof OPTIONS }>>["values"];

/** `out` gets the results (stdout); `note` the line saying which Redis is used (stderr, so stdout stays parseable). */
export async function runCli(argv: string[], out: (line: string) => void = console.log, note: (line: string) => void = console.error): Promise<number> {
  if (argv.includes("--help") || argv.includes("-h")) {
    out(HELP);
    return 0;
  }
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; allowPositionals: true; options: typeof OPTIONS }>>;
  try {
    parsed = parseArgs({ args: argv, allowPositionals: true, options: OPTIONS });
  } catch (err) {
    // An unknown flag or a value that looks like a flag (`--credits -5`) is a usage error too.
    if (!String((err as { code?: unknown }).code).startsWith("ERR_PARSE_ARGS")) throw err;
    out(`error: ${(err as Error).message}\n\n${HELP}`);
    return 2;
  }
  const { positionals, values } = parsed;
  if (!positionals[0] || positionals[0] === "help") {
    out(HELP);
    return 0;
  }
  const { runCommand } = await import("./commands.js");
  return runCommand(positionals, values, out, note);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  runCli(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: Error) => {
      console.error(`error: ${err.message}`);
      process.exit(1);
    },
  );
}
