/**
 * Operators' tool: accounts, keys and credits, the upstream's health, and today's parsers over kept
 * pages (`reparse`). Run `npm run cli -- help`.
 * Reads REDIS_URL and SERP_PREFIX like the API (without REDIS_URL, the Redis a running `npm start`
 * recorded; see redis-url.ts), and the upstream settings like the workers.
 */
import { parseArgs } from "node:util";
import { CREDIT_PACKS, ENDPOINTS, type CreditPack } from "@serp/shared";
import {
  AccountStore,
  DEFAULT_MAX_JOBS_IN_FLIGHT,
  DEFAULT_RATE_LIMIT_PER_MINUTE,
  DEFAULT_RATE_WINDOW_SECONDS,
  connectPostgres,
  createRedis,
  DEFAULT_JOB_HOT_SECONDS,
  JobArchive,
  JobStore,
  keySpace,
  RawPageStore,
  openPageBlobs,
  rebuild,
  reconcile,
  resolveLimits,
  UpstreamStatusBoard,
  usageByPeriod,
  usageQuery,
  waitReady,
  type EffectiveLimits,
  type LimitOverridesChange,
  RedisExitHealth,
} from "@serp/store";
import { EXIT_HEALTH_DEFAULTS } from "@serp/upstream";
import { chooseDatabase } from "./database-url.js";
import { loadCliEnv, type CliEnv } from "./env.js";
import { chooseRedis } from "./redis-url.js";
import { durationMs, endpointNamed, formatReparse, reparse } from "./reparse.js";
import { canaryCommand, configuredPools, exitRows, formatExitRows, formatStatuses, type WorkerUpstreamStatus } from "./upstream.js";

const HELP = `Usage: npm run cli -- <command> [options]

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
RATE_LIMIT_PER_MINUTE (default ${DEFAULT_RATE_LIMIT_PER_MINUTE}) and MAX_JOBS_IN_FLIGHT (default ${DEFAULT_MAX_JOBS_IN_FLIGHT}); the canary reads the
workers' upstream settings (UPSTREAM_BASE_URL, UPSTREAM_PROFILES_FILE, UPSTREAM_PROXIES, UPSTREAM_CA_FILE…), and reparse
the workers' page store (RAW_PAGES_DIR, default .raw-pages/, or RAW_PAGES_S3_BUCKET and its settings: docs/RAW-PAGES.md).`;

const OPTIONS = {
  name: { type: "string" }, pack: { type: "string" }, credits: { type: "string" }, account: { type: "string" },
  label: { type: "string" }, key: { type: "string" }, limit: { type: "string" },
  rate: { type: "string" }, window: { type: "string" }, concurrency: { type: "string" },
  kinds: { type: "string" }, json: { type: "boolean" }, since: { type: "string" }, endpoint: { type: "string" },
  id: { type: "string" }, from: { type: "string" }, to: { type: "string" }, granularity: { type: "string" },
} as const;

/** `out` gets the results (stdout); `note` the line saying which Redis is used (stderr, so stdout stays parseable). */
export async function runCli(argv: string[], out: (line: string) => void = console.log, note: (line: string) => void = console.error): Promise<number> {
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
  const [noun, verb] = positionals;
  if (!noun || noun === "help") {
    out(HELP);
    return 0;
  }
  // The canary asks the upstream, not Redis.
  if (noun === "canary") return canaryCommand(values.kinds, values.json ?? false, out);
  let env: CliEnv;
  try {
    env = loadCliEnv();
  } catch (err) {
    out(`error: ${(err as Error).message}\n\n${HELP}`);
    return 2;
  }
  const keys = keySpace(env.SERP_PREFIX);
  /** The API's defaults, read from the same variables the API reads. */
  const limitDefaults = { ratePerMinute: env.RATE_LIMIT_PER_MINUTE, maxInFlight: env.MAX_JOBS_IN_FLIGHT };
  const chosen = await chooseRedis({ ...env, REDIS_URL: process.env.REDIS_URL, REDIS_DATA_DIR: process.env.REDIS_DATA_DIR });
  note(chosen.note);
  const redis = createRedis(chosen.url, "command", "cli");
  redis.on("error", () => undefined);
  let pg: Awaited<ReturnType<typeof connectPostgres>> | undefined;
  try {
    await waitReady(redis, 5_000);
    const database = await chooseDatabase({ DATABASE_URL: process.env.DATABASE_URL, PG_DATA_DIR: process.env.PG_DATA_DIR });
    note(database.note);
    pg = database.url ? await connectPostgres(database.url, "cli") : undefined;
    const accounts = new AccountStore(redis, keys, 0, pg);
    const needPg = () => {
      if (!pg) throw new UsageError("this command needs PostgreSQL: set DATABASE_URL");
      return pg;
    };
    const need = (v: string | undefined, flag: string): string => {
      if (!v) throw new UsageError(`--${flag} is required`);
      return v;
    };
    const amount = (): { credits: number; pack?: string } => {
      if (values.pack) {
        const pack = values.pack.toLowerCase();
        if (!(pack in CREDIT_PACKS)) throw new UsageError(`unknown pack ${values.pack}; packs: ${Object.keys(CREDIT_PACKS).join(", ")}`);
        return { credits: CREDIT_PACKS[pack as CreditPack], pack };
      }
      const credits = Number(values.credits);
      if (!Number.isInteger(credits) || credits <= 0) throw new UsageError("give --pack NAME or --credits N (a positive integer)");
      return { credits };
    };
    const account = async (): Promise<string> => {
      const id = need(values.account, "account");
      if (!(await accounts.get(id))) throw new UsageError(`no account ${id}`);
      return id;
    };

    switch (`${noun} ${verb ?? ""}`.trim()) {
      case "account create": {
        const acct = await accounts.create(need(values.name, "name"));
        const { key } = await accounts.createKey(acct.id, "first key");
        if (values.pack || values.credits) {
          const a = amount();
          await accounts.grant(acct.id, a.credits, a.pack);
        }
        const bal = await accounts.get(acct.id);
        out(JSON.stringify({ accountId: acct.id, apiKey: key, balance: bal?.balance ?? 0, note: "the key is shown once" }, null, 2));
        return 0;
      }
      case "account list":
        for (const id of await accounts.list()) out(id);
        return 0;
      case "key create": {
        const { key, info } = await accounts.createKey(await account(), values.label ?? "key");
        out(JSON.stringify({ apiKey: key, keyId: info.id, note: "the key is shown once" }, null, 2));
        return 0;
      }
      case "key list":
        out(JSON.stringify(await accounts.listKeys(await account()), null, 2));
        return 0;
      case "key revoke": {
        const ok = await accounts.revokeKey(await account(), need(values.key, "key"));
        if (!ok) throw new UsageError(`no key ${values.key} on that account`);
        out(`revoked ${values.key}`);
        return 0;
      }
      case "credits grant": {
        const id = await account();
        const a = amount();
        await accounts.grant(id, a.credits, a.pack);
        out(JSON.stringify({ accountId: id, granted: a.credits, pack: a.pack ?? null, balance: (await accounts.get(id))?.balance }, null, 2));
        return 0;
      }
      case "balance": {
        const a = (await accounts.get(await account()))!;
        out(JSON.stringify({ accountId: a.id, balance: a.balance, reserved: a.reserved, available: a.balance - a.reserved }, null, 2));
        return 0;
      }
      case "ledger":
        out(JSON.stringify(await accounts.ledger(await account(), Number(values.limit ?? 100)), null, 2));
        return 0;
      case "usage": {
        const id = await account();
        // The running totals; with a range or a granularity, by day or month from the ledger (GET /v1/account/usage).
        if (values.from === undefined && values.to === undefined && values.granularity === undefined) {
          out(JSON.stringify(await accounts.usage(id), null, 2));
          return 0;
        }
        const range = usageQuery.safeParse({ from: values.from, to: values.to, granularity: values.granularity });
        if (!range.success) throw new UsageError(range.error.issues.map((i) => `--${i.path.join(".")}: ${i.message}`).join("; "));
        const { from, to, granularity } = range.data;
        out(JSON.stringify({ accountId: id, from, to, granularity, usage: await usageByPeriod(needPg(), id, { from, to }, granularity) }, null, 2));
        return 0;
      }
      case "limits show": {
        const a = (await accounts.get(await account()))!;
        out(JSON.stringify(limitsView(a.id, resolveLimits(a.limits, limitDefaults)), null, 2));
        return 0;
      }
      case "limits set": {
        const id = await account();
        const change = limitChange(values);
        if (!Object.keys(change).length) throw new UsageError("give --rate N [--window SECONDS] and/or --concurrency N");
        await accounts.setLimits(id, change);
        const a = (await accounts.get(id))!;
        out(JSON.stringify(limitsView(id, resolveLimits(a.limits, limitDefaults)), null, 2));
        return 0;
      }
      case "reparse": {
        const window = durationMs(values.since ?? "1h");
        if (window === undefined) throw new UsageError("--since is a duration such as 90s, 30m, 1h or 2d");
        const endpoint = values.endpoint === undefined ? undefined : endpointNamed(values.endpoint);
        if (values.endpoint !== undefined && !endpoint) throw new UsageError(`unknown endpoint ${values.endpoint}; endpoints: ${ENDPOINTS.join(", ")}`);
        const limit = values.limit === undefined ? undefined : Number(values.limit);
        if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) throw new UsageError("--limit must be a whole number from 1 up");
        const sinceMs = Date.now() - window;
        // A job past its hot window in Redis is read from the PostgreSQL archive, as the API reads it (read only: the windows go unused).
        const jobs = new JobStore(redis, keys, 1);
        if (pg) jobs.readFromArchive(new JobArchive(pg, redis, keys, DEFAULT_JOB_HOT_SECONDS, 1));
        const blobs = openPageBlobs(env);
        const rows = await reparse(new RawPageStore(redis, keys, blobs), jobs, { sinceMs, endpoint, limit }).finally(() => blobs.close());
        out(values.json ? JSON.stringify(rows, null, 2) : formatReparse(rows, sinceMs));
        return 0;
      }
      case "job show": {
        const id = need(values.id, "id");
        const record = await new JobStore(redis, keys, 1).get(id);
        if (!record) throw new UsageError(`no job ${id} (unknown, or past its retention)`);
        const { job, accountId, upstreamUrl, coverage, cachedFrom, exit } = record;
        out(JSON.stringify({ ...job, accountId, upstreamUrl, coverage: coverage ?? null, exit: exit ?? null, ...(cachedFrom ? { cachedFrom } : {}) }, null, 2));
        return 0;
      }
      case "reconcile": {
        const report = await reconcile(redis, keys, needPg());
        if (values.json) out(JSON.stringify(report, null, 2));
        else {
          for (const d of report.differences) out(`${d.accountId}: ${d.problem} (Redis ${d.redisBalance ?? "-"}, ledger ${d.ledgerBalance ?? "-"})`);
          out(`${report.accounts} accounts, ${report.differences.length} with a difference`);
        }
        return report.differences.length ? 1 : 0;
      }
      case "rebuild": {
        const restored = await rebuild(redis, keys, needPg());
        out(JSON.stringify({ restored }, null, 2));
        return 0;
      }
      case "upstream proxies": {
        let pools: ReturnType<typeof configuredPools>;
        try {
          pools = configuredPools();
        } catch (err) {
          throw new UsageError((err as Error).message);
        }
        // Read only: the cooldown settings do not matter for a listing.
        const states = await new RedisExitHealth(redis, keys, EXIT_HEALTH_DEFAULTS).statuses();
        const rows = exitRows(pools, states);
        out(values.json ? JSON.stringify({ source: pools.source, exits: rows }, null, 2) : formatExitRows(rows, pools.source));
        return 0;
      }
      case "upstream status": {
        const entries = await new UpstreamStatusBoard(redis, keys).list<WorkerUpstreamStatus>();
        out(values.json ? JSON.stringify(entries, null, 2) : formatStatuses(entries));
        return 0;
      }
      default:
        throw new UsageError(`unknown command: ${positionals.join(" ")}`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      out(`error: ${err.message}\n\n${HELP}`);
      return 2;
    }
    throw err;
  } finally {
    redis.disconnect();
    await pg?.end();
  }
}

class UsageError extends Error {}

/** A count flag: a whole number from 0, "default" (null: remove the override) or absent. */
function countFlag(raw: string | undefined, flag: string, min = 0): number | null | undefined {
  if (raw === undefined) return undefined;
  if (raw === "default") return null;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || n < min || n > 1_000_000_000) throw new UsageError(`--${flag} must be a whole number from ${min} up, or "default"`);
  return n;
}

function limitChange(v: { rate?: string; window?: string; concurrency?: string }): LimitOverridesChange {
  const change: LimitOverridesChange = {};
  const rate = countFlag(v.rate, "rate");
  const window = countFlag(v.window, "window", 1);
  if (window !== undefined && rate === undefined) throw new UsageError("--window goes with --rate");
  if (window !== undefined && window !== null && window > 86_400) throw new UsageError("--window is at most 86400 seconds");
  if (rate !== undefined) {
    change.rateLimit = rate;
    // A rate override always states its window, so a later default change cannot alter it.
    change.rateWindowSeconds = rate === null ? null : (window ?? DEFAULT_RATE_WINDOW_SECONDS);
  }
  const concurrency = countFlag(v.concurrency, "concurrency");
  if (concurrency !== undefined) change.maxInFlight = concurrency;
  return change;
}

/** Limits as GET /v1/account shows them: null = no limit. */
function limitsView(accountId: string, l: EffectiveLimits) {
  return {
    accountId,
    rate: { limit: l.rate.limit || null, windowSeconds: l.rate.windowSeconds, source: l.rate.source },
    concurrency: { limit: l.concurrency.limit || null, source: l.concurrency.source },
  };
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
