/**
 * Operators' account tool. Run `npm run cli -- help`.
 * Reads REDIS_URL and SERP_PREFIX like the API.
 */
import { parseArgs } from "node:util";
import { CREDIT_PACKS, type CreditPack } from "@serp/shared";
import { AccountStore, createRedis, keySpace, waitReady } from "@serp/store";

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
  usage --account ID             jobs and credits per endpoint

Environment: REDIS_URL (default redis://127.0.0.1:6379), SERP_PREFIX (default serp).`;

export async function runCli(argv: string[], out: (line: string) => void = console.log): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: "string" }, pack: { type: "string" }, credits: { type: "string" }, account: { type: "string" },
      label: { type: "string" }, key: { type: "string" }, limit: { type: "string" },
    },
  });
  const [noun, verb] = positionals;
  if (!noun || noun === "help") {
    out(HELP);
    return 0;
  }
  const redis = createRedis(process.env.REDIS_URL ?? "redis://127.0.0.1:6379", "command", "cli");
  redis.on("error", () => undefined);
  try {
    await waitReady(redis, 5_000);
    const accounts = new AccountStore(redis, keySpace(process.env.SERP_PREFIX ?? "serp"));
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
      case "usage":
        out(JSON.stringify(await accounts.usage(await account()), null, 2));
        return 0;
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
  }
}

class UsageError extends Error {}

if (import.meta.url === `file://${process.argv[1]}`) {
  runCli(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: Error) => {
      console.error(`error: ${err.message}`);
      process.exit(1);
    },
  );
}
