/**
 * Every command of the operators' CLI, against the real Redis under a key prefix of its own
 * (SERP_PREFIX), read back through the store the API uses.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { runCli } from "../../apps/cli/src/main.js";
import { chooseRedis } from "../../apps/cli/src/redis-url.js";
import { AccountStore, DEFAULT_REDIS_URL, JobStore, keySpace } from "@serp/store";
import { REDIS_URL } from "../support/stack.js";

const prefix = `tcli${randomBytes(5).toString("hex")}`;
const saved = { SERP_PREFIX: process.env.SERP_PREFIX, REDIS_URL: process.env.REDIS_URL, RATE_LIMIT_PER_MINUTE: process.env.RATE_LIMIT_PER_MINUTE, MAX_JOBS_IN_FLIGHT: process.env.MAX_JOBS_IN_FLIGHT };
let redis: Redis;
let accounts: AccountStore;

beforeAll(() => {
  process.env.SERP_PREFIX = prefix;
  process.env.REDIS_URL = REDIS_URL;
  delete process.env.RATE_LIMIT_PER_MINUTE;
  delete process.env.MAX_JOBS_IN_FLIGHT;
  redis = new Redis(REDIS_URL);
  accounts = new AccountStore(redis, keySpace(prefix));
});

afterAll(async () => {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== "0");
  redis.disconnect();
});

/** Runs the CLI and captures what it prints (`notes`: the stderr line naming the Redis it uses). */
async function cli(...argv: string[]): Promise<{ code: number; text: string; notes: string[]; json: () => any }> {
  const lines: string[] = [];
  const notes: string[] = [];
  const code = await runCli(argv, (line) => lines.push(line), (line) => notes.push(line));
  const text = lines.join("\n");
  return { code, text, notes, json: () => JSON.parse(text) };
}

async function newAccount(...extra: string[]): Promise<{ accountId: string; apiKey: string; balance: number }> {
  const out = await cli("account", "create", "--name", "Acme", ...extra);
  expect(out.code).toBe(0);
  return out.json();
}

describe("operators' CLI", () => {
  test("help, --help, -h (after any command) and no command print the usage, naming every command", async () => {
    for (const argv of [["help"], [], ["--help"], ["-h"], ["account", "create", "--help"]]) {
      const out = await cli(...argv);
      expect(out.code).toBe(0);
      for (const command of ["account create", "account list", "key create", "key list", "key revoke", "credits grant", "balance", "ledger", "usage", "limits show", "limits set", "job show", "reparse"]) {
        expect(out.text).toContain(command);
      }
    }
  });

  test("account create makes an account and a first key that authenticates, shown once", async () => {
    const acct = await newAccount();
    expect(acct.accountId).toMatch(/^acct_/);
    expect(acct.apiKey).toMatch(/^sk_live_[A-Za-z0-9]{32}$/);
    expect(acct.balance).toBe(0);
    expect(await accounts.authenticate(acct.apiKey)).toBe(acct.accountId);
    expect(await accounts.get(acct.accountId)).toMatchObject({ name: "Acme", balance: 0 });
  });

  test("account create --pack grants the pack, --credits grants a number", async () => {
    expect((await newAccount("--pack", "starter")).balance).toBe(50_000);
    expect((await newAccount("--pack", "Ultimate")).balance).toBe(12_500_000);
    expect((await newAccount("--credits", "250")).balance).toBe(250);
  });

  test("account create needs --name, and refuses an unknown pack", async () => {
    expect((await cli("account", "create")).code).toBe(2);
    const bad = await cli("account", "create", "--name", "x", "--pack", "gigantic");
    expect(bad.code).toBe(2);
    expect(bad.text).toMatch(/unknown pack gigantic; packs: starter, standard, scale, ultimate/);
  });

  test("account list lists the account ids", async () => {
    const a = await newAccount();
    const out = await cli("account", "list");
    expect(out.code).toBe(0);
    expect(out.text.split("\n")).toContain(a.accountId);
  });

  test("key create makes another key for the account; key list shows public ids only", async () => {
    const a = await newAccount();
    const made = await cli("key", "create", "--account", a.accountId, "--label", "ci");
    expect(made.code).toBe(0);
    const { apiKey, keyId } = made.json();
    expect(keyId).toBe(apiKey.slice(0, 12));
    expect(await accounts.authenticate(apiKey)).toBe(a.accountId);

    const list = await cli("key", "list", "--account", a.accountId);
    expect(list.code).toBe(0);
    const keys = list.json() as { id: string; label: string; revokedAt: string | null }[];
    expect(keys.map((k) => k.id).sort()).toEqual([a.apiKey.slice(0, 12), keyId].sort());
    expect(keys.find((k) => k.id === keyId)).toMatchObject({ label: "ci", revokedAt: null });
    expect(list.text).not.toContain(apiKey);
    expect(list.text).not.toContain(a.apiKey);
  });

  test("key revoke revokes by public id: the key stops authenticating, the others keep working", async () => {
    const a = await newAccount();
    const { apiKey, keyId } = (await cli("key", "create", "--account", a.accountId)).json();
    const out = await cli("key", "revoke", "--account", a.accountId, "--key", keyId);
    expect(out).toMatchObject({ code: 0, text: `revoked ${keyId}` });
    expect(await accounts.authenticate(apiKey)).toBeNull();
    expect(await accounts.authenticate(a.apiKey)).toBe(a.accountId);
    const listed = (await cli("key", "list", "--account", a.accountId)).json() as { id: string; revokedAt: string | null }[];
    expect(listed.find((k) => k.id === keyId)!.revokedAt).toEqual(expect.any(String));
  });

  test("key revoke answers a usage error for a key of another account or an unknown one", async () => {
    const a = await newAccount();
    const b = await newAccount();
    expect((await cli("key", "revoke", "--account", a.accountId, "--key", b.apiKey.slice(0, 12))).code).toBe(2);
    expect(await accounts.authenticate(b.apiKey)).toBe(b.accountId);
    expect((await cli("key", "revoke", "--account", a.accountId, "--key", "sk_live_zzzz")).code).toBe(2);
  });

  test("credits grant adds a pack by name or a number of credits, each written to the ledger", async () => {
    const a = await newAccount();
    const pack = await cli("credits", "grant", "--account", a.accountId, "--pack", "standard");
    expect(pack.code).toBe(0);
    expect(pack.json()).toEqual({ accountId: a.accountId, granted: 500_000, pack: "standard", balance: 500_000 });
    const some = await cli("credits", "grant", "--account", a.accountId, "--credits", "7");
    expect(some.json()).toEqual({ accountId: a.accountId, granted: 7, pack: null, balance: 500_007 });
    expect(await accounts.ledger(a.accountId)).toEqual([
      expect.objectContaining({ type: "grant", credits: 500_000, pack: "standard" }),
      expect.objectContaining({ type: "grant", credits: 7 }),
    ]);
  });

  test("credits grant refuses a missing amount, a bad number and an unknown account", async () => {
    const a = await newAccount();
    expect((await cli("credits", "grant", "--account", a.accountId)).code).toBe(2);
    expect((await cli("credits", "grant", "--account", a.accountId, "--credits", "-5")).code).toBe(2);
    expect((await cli("credits", "grant", "--account", a.accountId, "--credits", "1.5")).code).toBe(2);
    const none = await cli("credits", "grant", "--account", "acct_NOPE", "--credits", "5");
    expect(none.code).toBe(2);
    expect(none.text).toMatch(/no account acct_NOPE/);
    expect((await accounts.get(a.accountId))!.balance).toBe(0);
  });

  describe("with a job billed and one refunded", () => {
    let a: { accountId: string; apiKey: string };
    beforeAll(async () => {
      a = await newAccount("--credits", "10");
      const jobs = new JobStore(redis, keySpace(prefix), 3600);
      const now = new Date().toISOString();
      const params = { query: "coffee", country: "us" as const, language: "en", page: 1 };
      for (const [id, status] of [["job_01JZ0000000000000000000001", "completed"], ["job_01JZ0000000000000000000002", "failed"]] as const) {
        expect(await jobs.create({ id, accountId: a.accountId, endpoint: "web-news", queue: "fast", params, createdAt: now }, 1)).toMatchObject({ outcome: "created" });
        await jobs.finalize(id, a.accountId, {
          status, credits: status === "completed" ? 1 : 0, latencyMs: 5, error: status === "failed" ? "upstream timed out" : null,
          result: null, completedAt: now,
        });
      }
      // One more job still in flight holds a credit.
      await jobs.create({ id: "job_01JZ0000000000000000000003", accountId: a.accountId, endpoint: "web-search", queue: "fast", params, createdAt: now }, 1);
    });

    test("balance shows the balance, the credits held by jobs in flight and what is available", async () => {
      const out = await cli("balance", "--account", a.accountId);
      expect(out.code).toBe(0);
      expect(out.json()).toEqual({ accountId: a.accountId, balance: 9, reserved: 1, available: 8 });
    });

    test("ledger lists the grant, the charge and the refund, newest last, and --limit keeps the newest", async () => {
      const out = await cli("ledger", "--account", a.accountId);
      expect(out.code).toBe(0);
      expect(out.json()).toEqual([
        expect.objectContaining({ type: "grant", credits: 10 }),
        expect.objectContaining({ type: "charge", credits: 1, jobId: "job_01JZ0000000000000000000001", endpoint: "web-news" }),
        expect.objectContaining({ type: "refund", credits: 0, jobId: "job_01JZ0000000000000000000002" }),
      ]);
      const last = (await cli("ledger", "--account", a.accountId, "--limit", "1")).json();
      expect(last).toEqual([expect.objectContaining({ type: "refund" })]);
    });

    test("usage shows jobs completed, failed and credits per endpoint", async () => {
      const out = await cli("usage", "--account", a.accountId);
      expect(out.code).toBe(0);
      expect(out.json()).toEqual({ "web-news": { completed: 1, failed: 1, credits: 1 } });
    });

    test("job show prints the stored record with the parse's coverage figure, never the result; an unknown job is a usage error", async () => {
      const jobs = new JobStore(redis, keySpace(prefix), 3600);
      const id = "job_01JZ0000000000000000000004";
      const params = { query: "coffee", country: "us" as const, language: "en", page: 1 };
      await jobs.create({ id, accountId: a.accountId, endpoint: "web-news", queue: "fast", params, createdAt: new Date().toISOString() }, 1);
      const coverage = { ratio: 0.4, links: 10, accounted: 4, layout: "full" as const };
      await jobs.finalize(id, a.accountId, {
        status: "failed", credits: 0, latencyMs: 7, error: "the results page was not understood in full", result: null, completedAt: new Date().toISOString(), coverage,
      });
      const out = await cli("job", "show", "--id", id);
      expect(out.code).toBe(0);
      expect(out.json()).toMatchObject({ id, status: "failed", credits: 0, accountId: a.accountId, coverage });
      expect(out.json()).not.toHaveProperty("result");
      expect((await cli("job", "show", "--id", "job_NOPE")).text).toMatch(/no job job_NOPE/);
      expect((await cli("job", "show")).code).toBe(2);
    });
  });

  test("balance, ledger and usage need an existing --account", async () => {
    for (const command of ["balance", "ledger", "usage"]) {
      const missing = await cli(command);
      expect(missing.code).toBe(2);
      expect(missing.text).toMatch(/--account is required/);
      expect((await cli(command, "--account", "acct_NOPE")).code).toBe(2);
    }
  });

  test("limits show gives the defaults with their source", async () => {
    const a = await newAccount();
    const out = await cli("limits", "show", "--account", a.accountId);
    expect(out.code).toBe(0);
    expect(out.json()).toEqual({
      accountId: a.accountId,
      rate: { limit: 600, windowSeconds: 60, source: "default" },
      concurrency: { limit: 100, source: "default" },
    });
  });

  test("limits show reads the API's defaults from the same environment variables", async () => {
    const a = await newAccount();
    process.env.RATE_LIMIT_PER_MINUTE = "120";
    process.env.MAX_JOBS_IN_FLIGHT = "0";
    try {
      expect((await cli("limits", "show", "--account", a.accountId)).json()).toMatchObject({
        rate: { limit: 120, source: "default" },
        concurrency: { limit: null, source: "default" },
      });
    } finally {
      delete process.env.RATE_LIMIT_PER_MINUTE;
      delete process.env.MAX_JOBS_IN_FLIGHT;
    }
  });

  test("limits set overrides rate (with its window) and concurrency; \"default\" removes an override", async () => {
    const a = await newAccount();
    const set = await cli("limits", "set", "--account", a.accountId, "--rate", "30", "--window", "10", "--concurrency", "5");
    expect(set.code).toBe(0);
    expect(set.json()).toEqual({
      accountId: a.accountId,
      rate: { limit: 30, windowSeconds: 10, source: "override" },
      concurrency: { limit: 5, source: "override" },
    });
    expect((await accounts.get(a.accountId))!.limits).toEqual({ rateLimit: 30, rateWindowSeconds: 10, maxInFlight: 5 });

    // A rate without a window counts per minute; the concurrency override is left as it was.
    expect((await cli("limits", "set", "--account", a.accountId, "--rate", "90")).json()).toMatchObject({
      rate: { limit: 90, windowSeconds: 60, source: "override" },
      concurrency: { limit: 5, source: "override" },
    });
    // 0 means no limit.
    expect((await cli("limits", "set", "--account", a.accountId, "--concurrency", "0")).json().concurrency).toEqual({ limit: null, source: "override" });

    const reset = await cli("limits", "set", "--account", a.accountId, "--rate", "default", "--concurrency", "default");
    expect(reset.json()).toEqual({
      accountId: a.accountId,
      rate: { limit: 600, windowSeconds: 60, source: "default" },
      concurrency: { limit: 100, source: "default" },
    });
    expect((await accounts.get(a.accountId))!.limits).toEqual({});
    expect((await cli("limits", "show", "--account", a.accountId)).json().rate.source).toBe("default");
  });

  test.each([
    [["limits", "set", "--account", "ACCOUNT"], /give --rate/],
    [["limits", "set", "--account", "ACCOUNT", "--rate=-1"], /--rate must be a whole number/],
    [["limits", "set", "--account", "ACCOUNT", "--rate", "-1"], /--rate.*ambiguous/],
    [["limits", "set", "--account", "ACCOUNT", "--burst", "3"], /Unknown option/],
    [["limits", "set", "--account", "ACCOUNT", "--rate", "ten"], /--rate must be a whole number/],
    [["limits", "set", "--account", "ACCOUNT", "--concurrency", "2.5"], /--concurrency must be a whole number/],
    [["limits", "set", "--account", "ACCOUNT", "--window", "10"], /--window goes with --rate/],
    [["limits", "set", "--account", "ACCOUNT", "--rate", "5", "--window", "0"], /--window must be a whole number from 1/],
    [["limits", "set", "--account", "acct_NOPE", "--rate", "5"], /no account acct_NOPE/],
    [["limits", "show"], /--account is required/],
  ])("limits refuses %j with a usage error and changes nothing", async (argv, message) => {
    const a = await newAccount();
    const out = await cli(...argv.map((x) => (x === "ACCOUNT" ? a.accountId : x)));
    expect(out.code).toBe(2);
    expect(out.text).toMatch(message);
    expect((await accounts.get(a.accountId))!.limits).toEqual({});
  });

  test("an unknown command is a usage error", async () => {
    const out = await cli("frobnicate", "now");
    expect(out.code).toBe(2);
    expect(out.text).toMatch(/unknown command: frobnicate now/);
  });
});

describe("which Redis the CLI uses", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "serp-cli-redis-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const file = () => join(dir, "redis-url");

  test("says which, on its own line apart from the output", async () => {
    const out = await cli("account", "list");
    expect(out.code).toBe(0);
    // Then which PostgreSQL (or none), on a line of its own too.
    expect(out.notes).toEqual([`using Redis ${REDIS_URL} (REDIS_URL)`, expect.stringMatching(/PostgreSQL/)]);
    expect(out.text).not.toContain("using Redis");
  });

  test("REDIS_URL wins over the file npm start writes; a password is not shown", async () => {
    writeFileSync(file(), "redis://127.0.0.1:1\n");
    expect(await chooseRedis({ REDIS_URL: "redis://:s3cret@10.0.0.5:6380", REDIS_DATA_DIR: dir })).toEqual({
      url: "redis://:s3cret@10.0.0.5:6380",
      note: "using Redis redis://:***@10.0.0.5:6380 (REDIS_URL)",
    });
  });

  test("REDIS_SENTINELS: the primary the sentinels name, with REDIS_URL's password, whatever the file says", async () => {
    writeFileSync(file(), `${REDIS_URL}\n`);
    const chosen = await chooseRedis({
      REDIS_URL: "redis://:s3cret@unused:6379", REDIS_DATA_DIR: dir, REDIS_SENTINELS: [{ host: "10.0.0.1", port: 26379 }], REDIS_SENTINEL_NAME: "cache",
    });
    expect(chosen).toEqual({
      url: { url: "redis://:s3cret@unused:6379", sentinels: [{ host: "10.0.0.1", port: 26379 }], name: "cache" },
      note: 'using Redis primary "cache" of sentinels 10.0.0.1:26379 (REDIS_SENTINELS)',
    });
  });

  test("without REDIS_URL: the Redis npm start named in REDIS_DATA_DIR/redis-url, when it answers", async () => {
    writeFileSync(file(), `${REDIS_URL}\n`);
    const chosen = await chooseRedis({ REDIS_DATA_DIR: dir });
    expect(chosen).toEqual({ url: REDIS_URL, note: `using Redis ${REDIS_URL}, the one npm start runs (named in ${file()}; REDIS_URL is unset)` });
  });

  test("a Redis named there that does not answer: the default, saying so; no file: the default", async () => {
    writeFileSync(file(), "redis://127.0.0.1:1\n");
    const stale = await chooseRedis({ REDIS_DATA_DIR: dir });
    expect(stale.url).toBe(DEFAULT_REDIS_URL);
    expect(stale.note).toBe(`the Redis named in ${file()} (redis://127.0.0.1:1) does not answer (npm start stopped?): using ${DEFAULT_REDIS_URL} instead`);
    rmSync(file());
    expect(await chooseRedis({ REDIS_DATA_DIR: dir })).toEqual({
      url: DEFAULT_REDIS_URL,
      note: `using Redis ${DEFAULT_REDIS_URL} (REDIS_URL is unset, and ${file()} names no Redis of npm start)`,
    });
    // Relative to the folder the CLI runs in (npm runs scripts in the repository's root).
    expect((await chooseRedis({}, dir)).note).toContain(join(dir, ".redis-data", "redis-url"));
  });
});
