/**
 * The CLI's commands (main.ts parses the command line and loads this file once a command is known).
 */
import { CREDIT_PACKS, ENDPOINTS, type CreditPack } from "@serp/shared";
import {
  AccountStore,
  DEFAULT_RATE_WINDOW_SECONDS,
  connectPostgres,
  createRedis,
  DEFAULT_JOB_HOT_SECONDS,
  JobArchive,
  JobStore,
  keySpace,
  RawPageStore,
  openPageBlobs,
  openJobResults,
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
import { chooseDatabase } from "./database-url.js";
import { loadCliEnv, type CliEnv } from "./env.js";
import { chooseRedis } from "./redis-url.js";
import { HELP, type CliValues } from "./main.js";
import type { WorkerUpstreamStatus } from "./upstream.js";

/** The upstream's code (parsers, transports) is loaded only by the commands that use it. */
const upstream = () => import("./upstream.js");

export async function runCommand(positionals: string[], values: CliValues, out: (line: string) => void, note: (line: string) => void): Promise<number> {
  const [noun, verb] = positionals;
  // The canary asks the upstream, not Redis.
  if (noun === "canary") return (await upstream()).canaryCommand(values.kinds, values.json ?? false, out, note);
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
  const chosen = await chooseRedis(env);
  note(chosen.note);
  const redis = createRedis(chosen.url, "command", "cli");
  redis.on("error", () => undefined);
  let pg: Awaited<ReturnType<typeof connectPostgres>> | undefined;
  try {
    await waitReady(redis, 5_000);
    const database = await chooseDatabase(env);
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
        const { durationMs, endpointNamed, formatReparse, reparse } = await import("./reparse.js");
        const window = durationMs(values.since ?? "1h");
        if (window === undefined) throw new UsageError("--since is a duration such as 90s, 30m, 1h or 2d");
        const endpoint = values.endpoint === undefined ? undefined : endpointNamed(values.endpoint);
        if (values.endpoint !== undefined && !endpoint) throw new UsageError(`unknown endpoint ${values.endpoint}; endpoints: ${ENDPOINTS.join(", ")}`);
        const limit = values.limit === undefined ? undefined : Number(values.limit);
        if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) throw new UsageError("--limit must be a whole number from 1 up");
        const sinceMs = Date.now() - window;
        // A job past its hot window in Redis is read from the PostgreSQL archive, as the API reads it (read only: the windows go unused).
        const results = openJobResults(env, 1);
        const jobs = new JobStore(redis, keys, 1).keepResultsIn(results);
        if (pg) jobs.readFromArchive(new JobArchive(pg, redis, keys, DEFAULT_JOB_HOT_SECONDS, 1));
        const blobs = openPageBlobs(env);
        const rows = await reparse(new RawPageStore(redis, keys, blobs), jobs, { sinceMs, endpoint, limit }).finally(() => {
          blobs.close();
          results?.blobs.close();
        });
        out(values.json ? JSON.stringify(rows, null, 2) : formatReparse(rows, sinceMs));
        return 0;
      }
      case "job show": {
        const id = need(values.id, "id");
        const results = openJobResults(env, 1);
        const record = await new JobStore(redis, keys, 1).keepResultsIn(results).get(id).finally(() => results?.blobs.close());
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
        const { configuredPools, exitRows, formatExitRows } = await upstream();
        const { EXIT_HEALTH_DEFAULTS } = await import("@serp/upstream");
        let pools: ReturnType<typeof configuredPools>;
        try {
          pools = configuredPools(note);
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
        out(values.json ? JSON.stringify(entries, null, 2) : (await upstream()).formatStatuses(entries));
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

