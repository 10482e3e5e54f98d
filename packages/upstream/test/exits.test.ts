/** The proxy pools file, gateway templates, the cooldown arithmetic and the router's choices (in-process health). */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  claimOf, cooldownMs, EXIT_HEALTH_DEFAULTS, ExitRouter, exitsSource, fillGateway, HEALTHY, isLease, MemoryExitHealth, parseExitsConfig, poolsOfList, step,
  type ExitsConfig, type Lease,
} from "../src/index.js";

const FILE = {
  pools: [
    { name: "dc", tier: 1, proxies: ["http://user:pw@10.0.0.1:8080", "socks5://10.0.0.2:1080"], countries: ["us"] },
    { name: "resi", tier: 2, gateway: "http://cust-acme-cc-{country}-sessid-{session}:secret@gw.example:7777", countries: ["us", "de", "fr", "UK", "jp"], sessionTtlSeconds: 600, maxUsesPerSession: 3 },
  ],
};

describe("the pools file", () => {
  test("takes the issue's shape, with defaults and uk read as gb", () => {
    const c = parseExitsConfig(JSON.stringify(FILE));
    expect(c.pools.map((p) => [p.name, p.tier])).toEqual([["dc", 1], ["resi", 2]]);
    expect(c.pools[0]).toMatchObject({ sessionTtlSeconds: 600, maxUsesPerSession: 50 });
    expect(c.pools[1]!.countries).toEqual(["us", "de", "fr", "gb", "jp"]);
  });

  test.each([
    [{ pools: [{ name: "a", proxies: ["ftp://h:1"] }] }, /pools\[0\]\.proxies\[0\]: proxy URL protocol is not one of/],
    [{ pools: [{ name: "a" }] }, /pools\[0\]: a pool has either proxies or a gateway/],
    [{ pools: [{ name: "a", proxies: ["http://h:1"], gateway: "http://g:2" }] }, /either proxies or a gateway/],
    [{ pools: [{ name: "a", gateway: "gw.example:{session}" }] }, /pools\[0\]\.gateway: gateway URL/],
    [{ pools: [{ name: "a", proxies: ["http://h:1"], countries: ["deu"] }] }, /pools\[0\]\.countries\[0\]: a two-letter country code/],
    [{ pools: [{ name: "a", proxies: ["http://h:1"] }, { name: "a", proxies: ["http://h:2"] }] }, /pool name a is used twice/],
    [{ pools: [{ name: "a", proxies: ["http://h:1"], tier: 0 }] }, /pools\[0\]\.tier/],
    [{ pools: [{ name: "a", proxies: ["http://h:1"], color: "red" }] }, /color/],
    [{ pools: [] }, /pools/],
  ])("refuses a bad file naming the field: %j", (file, problem) => {
    expect(() => parseExitsConfig(JSON.stringify(file))).toThrow(problem);
  });

  test("a refusal never echoes a password", () => {
    for (const bad of [{ pools: [{ name: "a", proxies: ["ftp://user:hunter2@h:1"] }] }, { pools: [{ name: "a", proxies: ["http://user:hunter2@h"] }] }]) {
      expect(() => parseExitsConfig(JSON.stringify(bad))).toThrow();
      expect(() => parseExitsConfig(JSON.stringify(bad))).not.toThrow(/hunter2/);
    }
    expect(() => poolsOfList(["http://u:hunter2@h"])).toThrow(/UPSTREAM_PROXIES\[0\]/);
    expect(() => poolsOfList(["http://u:hunter2@h"])).not.toThrow(/hunter2/);
  });

  test("UPSTREAM_PROXIES is one tier-1 pool without countries", () => {
    const c = poolsOfList(["http://10.0.0.1:8080", "socks5://10.0.0.2:1080"]);
    expect(c.pools).toEqual([expect.objectContaining({ name: "default", tier: 1, proxies: ["http://10.0.0.1:8080", "socks5://10.0.0.2:1080"] })]);
    expect(c.pools[0]!.countries).toBeUndefined();
    expect(poolsOfList([]).pools).toEqual([]);
  });

  test("a gateway template takes the country (either case) and the session; either may be absent", () => {
    expect(fillGateway("http://cust-cc-{country}-sessid-{session}:pw@gw:7777", { country: "DE", session: "ab12" })).toBe("http://cust-cc-de-sessid-ab12:pw@gw:7777");
    expect(fillGateway("http://u-country-{COUNTRY}:pw@gw:1", { country: "de", session: "x" })).toBe("http://u-country-DE:pw@gw:1");
    expect(fillGateway("http://rotating:pw@gw:1", { country: "de", session: "x" })).toBe("http://rotating:pw@gw:1");
  });

  test("a watched file is re-read on change; a bad one is refused with one line naming the field, the last good one stays", async () => {
    const dir = mkdtempSync(join(tmpdir(), "exits-"));
    const file = join(dir, "pools.json");
    writeFileSync(file, JSON.stringify(FILE));
    const lines: string[] = [];
    const src = exitsSource({ file, watchIntervalMs: 20, log: (level, msg) => lines.push(`${level} ${msg}`) });
    const seen: ExitsConfig[] = [];
    src.onChange((c) => seen.push(c));
    try {
      writeFileSync(file, JSON.stringify({ pools: [{ name: "only", proxies: ["http://10.9.9.9:1"] }] }));
      await waitFor(() => seen.length === 1);
      expect(src.current().pools.map((p) => p.name)).toEqual(["only"]);
      writeFileSync(file, JSON.stringify({ pools: [{ name: "only", proxies: ["http://user:hunter2@10.9.9.9"] }] }));
      await waitFor(() => lines.some((l) => l.startsWith("error")));
      const refusal = lines.find((l) => l.startsWith("error"))!;
      expect(refusal).toMatch(/pools\[0\]\.proxies\[0\]/);
      expect(refusal).not.toMatch(/hunter2/);
      expect(refusal).not.toContain("\n");
      expect(src.current().pools.map((p) => p.name)).toEqual(["only"]);
    } finally {
      src.close();
    }
  });
});

describe("cooldown arithmetic", () => {
  const o = { ...EXIT_HEALTH_DEFAULTS, blockCooldownMs: 1_000, errorCooldownMs: 100, maxCooldownMs: 5_000, probeMs: 300 };

  test("the rest doubles per strike in a row, up to the cap", () => {
    expect([0, 1, 2, 3, 4, 5, 60].map((n) => cooldownMs(n, 1_000, 5_000))).toEqual([0, 1_000, 2_000, 4_000, 5_000, 5_000, 5_000]);
  });

  test("a block rests the exit; reports while it rests change nothing; a success after it heals", () => {
    let s = step(HEALTHY, "blocked", 10_000, o);
    expect(s).toMatchObject({ strikes: 1, until: 11_000, reason: "blocked" });
    // Answers of requests sent before the block: neither a second strike nor a heal.
    expect(step(s, "blocked", 10_500, o)).toBe(s);
    expect(step(s, "success", 10_500, o)).toBe(s);
    s = step(s, "blocked", 11_000, o);
    expect(s).toMatchObject({ strikes: 2, until: 13_000 });
    s = step(s, "proxy_error", 13_000, o);
    expect(s).toMatchObject({ strikes: 3, until: 13_400, reason: "proxy_error" });
    expect(step(s, "success", 13_400, o)).toEqual(HEALTHY);
  });

  test("when a rest ends one caller wins the probe; the others wait for its answer or its lapse", () => {
    const s = step(HEALTHY, "blocked", 0, o);
    expect(claimOf(HEALTHY, 0, o).verdict).toBe("free");
    expect(claimOf(s, 999, o).verdict).toBe("resting");
    const won = claimOf(s, 1_000, o);
    expect(won.verdict).toBe("probe");
    expect(claimOf(won.state, 1_001, o).verdict).toBe("resting");
    expect(claimOf(won.state, 1_300, o).verdict).toBe("probe");
  });
});

describe("the router", () => {
  const config = parseExitsConfig(JSON.stringify(FILE));
  const lease = async (r: ExitRouter, country: string, avoid?: Set<string>): Promise<Lease> => {
    const l = await r.lease(country, avoid);
    if (!isLease(l)) throw new Error(`no lease: ${JSON.stringify(l)}`);
    return l;
  };

  test("a country picks the pools listing it, lowest tier first; an unlisted one falls back to a pool without countries", async () => {
    const r = new ExitRouter(config, new MemoryExitHealth());
    const us = await lease(r, "us");
    expect([us.pool, us.tier, us.fallback]).toEqual(["dc", 1, false]);
    const de = await lease(r, "de");
    expect([de.pool, de.session.country]).toEqual(["resi", "de"]);
    expect(de.session.proxy.url).toMatch(new RegExp(`cc-de-sessid-${de.session.id}:`));
    expect(de.session.proxy.label).not.toMatch(/secret|cust-acme/);
    // No pool without countries: nothing may serve Brazil.
    expect(await r.lease("br")).toEqual({ resting: "blocked" });
    const withAny = new ExitRouter(parseExitsConfig(JSON.stringify({ pools: [...FILE.pools, { name: "any", tier: 3, proxies: ["http://10.0.0.9:1"] }] })), new MemoryExitHealth());
    const br = await lease(withAny, "br");
    expect([br.pool, br.fallback]).toEqual(["any", true]);
    for (const x of [r, withAny]) x.shutdown();
  });

  test("a session is reused by later searches until its use cap, then a fresh id; concurrent searches get their own", async () => {
    const r = new ExitRouter(config, new MemoryExitHealth());
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const l = await lease(r, "fr");
      ids.push(l.session.id);
      r.release(l);
    }
    // maxUsesPerSession 3.
    expect(ids[0]).toBe(ids[1]);
    expect(ids[1]).toBe(ids[2]);
    expect(ids[3]).not.toBe(ids[0]);
    const a = await lease(r, "fr");
    const b = await lease(r, "fr");
    expect(a.session.id).not.toBe(b.session.id);
    r.shutdown();
  });

  test("a block drops the session and rests a static exit fleet-wide; when every exit of a tier rests, the next tier serves", async () => {
    let now = 0;
    const health = new MemoryExitHealth({ blockCooldownMs: 1_000, probeMs: 500 }, () => now);
    const r = new ExitRouter(config, health, {}, () => now);
    const other = new ExitRouter(config, health, {}, () => now);
    const first = await lease(r, "us");
    await r.report(first, "blocked");
    r.release(first);
    // Another worker sharing the health does not ask the blocked exit.
    const second = await lease(other, "us");
    expect(second.session.exit).not.toBe(first.session.exit);
    await other.report(second, "blocked");
    other.release(second);
    const third = await lease(r, "us");
    expect([third.pool, third.tier]).toEqual(["resi", 2]);
    r.release(third);
    // The rest ends: one probe, from one of the two.
    now = 1_000;
    const probe = await lease(r, "us");
    expect([probe.pool, probe.probe]).toEqual(["dc", true]);
    const meanwhile = await lease(other, "us");
    expect(meanwhile.session.exit).not.toBe(probe.session.exit);
    await r.report(probe, "success");
    expect((await health.statuses()).map((s) => s.exit)).not.toContain(probe.session.exit);
    for (const x of [r, other]) x.shutdown();
  });

  test("a search's next try avoids the exits that failed it", async () => {
    const r = new ExitRouter(config, new MemoryExitHealth());
    const a = await lease(r, "us");
    r.release(a);
    const b = await lease(r, "us", new Set([a.session.exit]));
    expect(b.session.exit).not.toBe(a.session.exit);
    r.shutdown();
  });

  test("a gateway session's failure drops only that session; the gateway's own refusal rests the pool", async () => {
    const r = new ExitRouter(config, new MemoryExitHealth());
    const first = await lease(r, "de");
    await r.report(first, "proxy_error");
    r.release(first);
    const de = await lease(r, "de");
    expect(de.session.id).not.toBe(first.session.id);
    await r.report(de, "proxy_error", true);
    r.release(de);
    expect(await r.lease("de")).toEqual({ resting: "proxy_error" });
    r.shutdown();
  });
});

async function waitFor(check: () => boolean, ms = 5_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 10));
  }
}
