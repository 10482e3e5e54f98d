/**
 * The browser rung through exits, under the 2026-11 guard (the JavaScript challenge) and the replay's
 * exit model, which ties the challenge cookie to the address that earned it: each search's challenge
 * and results page leave through one session (one address), in the search's country, and no cookie
 * is ever presented from another exit, across a static pool and a gateway's sessions.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import request from "supertest";
import { BROWSER_DEFAULTS } from "@serp/upstream";
import { caFileOf, fixturesAvailable, startStack, type Stack } from "../support/stack.js";
import { browserOnlyTable, startExitFleet, type ExitFleet } from "../support/exits.js";

const CHROMIUM = process.env.BROWSER_EXECUTABLE_PATH ?? BROWSER_DEFAULTS.executablePath;
const d = fixturesAvailable && existsSync(CHROMIUM) ? describe : describe.skip;

const BROWSER_ONLY = browserOnlyTable();

d("the browser rung through exits under the challenge", () => {
  let fleet: ExitFleet;
  let stack: Stack;
  let dir: string;

  beforeAll(async () => {
    fleet = await startExitFleet({ staticExits: [{ country: "us", auth: true }], gatewayCountries: ["de", "fr"] });
    dir = mkdtempSync(join(tmpdir(), "exits-browser-"));
    const pools = join(dir, "pools.json");
    writeFileSync(
      pools,
      JSON.stringify({
        pools: [
          { name: "dc", tier: 1, proxies: [fleet.static[0]!.url], countries: ["us"] },
          { name: "resi", tier: 2, gateway: fleet.gateway!.template, countries: ["de", "fr"], maxUsesPerSession: 2 },
        ],
      }),
    );
    stack = await startStack({
      replay: { https: true, guard: "2026-11", fallback: true, exits: fleet.exits },
      upstreamTimeoutMs: 20_000,
      upstream: (replay) => ({ UPSTREAM_CA_FILE: caFileOf(replay), UPSTREAM_PROXIES_FILE: pools, BROWSER_CONCURRENCY: 2 }),
      upstreamDeps: { profiles: BROWSER_ONLY },
      workerQueues: ["live"],
    });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
    await fleet?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("challenge and results of each search leave through one session in its country; no cookie crosses exits", async () => {
    const { auth } = await stack.account(100);
    const searches = ["us", "de", "fr", "de", "us", "fr", "de"].map((country, i) => ({ country, query: `coffee ${country} ${i}` }));
    for (const s of searches) {
      const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: s.query, country: s.country }, queue: "live" });
      expect(res.body.job).toMatchObject({ status: "completed", credits: 1 });
    }
    const log = stack.replay.requests().filter((r) => r.path === "/search");
    for (const s of searches) {
      const mine = log.filter((r) => r.query.q === s.query);
      expect(mine.length).toBeGreaterThan(0);
      // The challenge page and the results page: one address, in the search's country.
      expect(new Set(mine.map((r) => r.address)).size).toBe(1);
      expect(mine[0]!.exitCountry).toBe(s.country);
    }
    // The challenge really ran (some search was challenged before its results), and no cookie crossed exits.
    expect(stack.replay.stats().challenged).toBeGreaterThan(0);
    expect(stack.replay.stats().challengePassed).toBeGreaterThan(0);
    expect(stack.replay.exitStats().totals.foreignCookies).toBe(0);
    // The gateway's sessions rotated (use cap 2) and each kept its own cookies.
    expect(fleet.gateway!.sessions().length).toBeGreaterThanOrEqual(3);
  }, 120_000);
});
