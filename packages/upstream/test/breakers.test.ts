/**
 * Profiles that notice when they die: a stand-in upstream on 127.0.0.1 kills one recipe mid-run
 * and revives it later, and the test counts the requests the dead recipe still gets. Rests are
 * shortened to a few hundred milliseconds; the defaults (30 s, doubling to 30 min) are the same code.
 */
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { JobParams, WebSearchBlocks } from "@serp/shared";
import { PROFILE_SETS, profileTable } from "../src/profiles.js";
import { createUpstream, UpstreamFailure } from "../src/scrape.js";
import { readUpstreamEnv } from "../src/env.js";

const fixtures = join(dirname(fileURLToPath(import.meta.url)), "fixtures");
const RESULTS = readFileSync(join(fixtures, "classify-results.html"), "utf8");
const ENABLEJS = readFileSync(join(fixtures, "classify-enablejs.html"), "utf8");

/** Plain-HTTP rungs told apart by their agents, the same list for every kind. */
const tableOf = (names: string[]) =>
  profileTable({
    version: "test",
    profiles: Object.fromEntries(names.map((n) => [n, { transport: "http", form: "search", userAgent: `${n}-agent` }])),
    kinds: Object.fromEntries(PROFILE_SETS.map((k) => [k, names])),
  });
/** `first` is tried first, `second` is the fallback. */
const table = tableOf(["first", "second"]);

let server: Server;
let base = "";
/** What `first` gets: its results page, or the JS wall once the recipe "dies". */
let firstDead = false;
let firstDelayMs = 0;
let hits = { first: 0, second: 0 };

beforeAll(async () => {
  server = createServer((req, res) => {
    const who = req.headers["user-agent"] === "first-agent" ? "first" : "second";
    hits[who]++;
    const body = who === "first" && firstDead ? ENABLEJS : RESULTS;
    const delay = who === "first" ? firstDelayMs : 0;
    setTimeout(() => res.writeHead(200, { "content-type": "text/html" }).end(body), delay);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});
beforeEach(() => {
  firstDead = false;
  firstDelayMs = 0;
  hits = { first: 0, second: 0 };
});

const parse = (body: string): WebSearchBlocks => ({
  organic_results: [...body.matchAll(/<a href="(https?:[^"]+)">([^<]+)/g)].map((m, i) => ({ position: i + 1, title: m[2]!, link: m[1]! })),
});
const job: JobParams = { query: "coffee", country: "us", language: "en", page: 1, device: "desktop" };
// Long enough that the scrapes between two checks (a few local requests) fit well inside one rest,
// on a machine kept busy by other test files: at 400 ms a loaded run saw a probe come early.
const REST = 1_500;
const make = () =>
  createUpstream(readUpstreamEnv({ UPSTREAM_BASE_URL: base, PARSE_THREADS: 0, UPSTREAM_BREAKER_THRESHOLD: 3, UPSTREAM_BREAKER_REST_MS: REST, UPSTREAM_BREAKER_MAX_REST_MS: 4 * REST }), { profiles: table, parsers: { "web-search": parse } });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("breakers", () => {
  test("a recipe that dies is skipped after 3 walls, probed once per rest, and used again once it works", async () => {
    const up = make();
    try {
      for (let i = 0; i < 3; i++) expect((await up.scrape("web-search", job)).tries.map((t) => t.profile)).toEqual(["first"]);
      firstDead = true;
      hits = { first: 0, second: 0 };

      // Every job still completes (through `second`); `first` is asked only until its breaker opens.
      for (let i = 0; i < 10; i++) {
        const out = await up.scrape("web-search", job);
        expect(out.pageClass).toBe("results");
      }
      expect(hits.first).toBe(3);
      expect(hits.second).toBe(10);
      const skippedRun = await up.scrape("web-search", job);
      expect(skippedRun.tries.map((t) => t.profile)).toEqual(["second"]);
      expect(skippedRun.skipped).toEqual([expect.objectContaining({ profile: "first", key: "first", state: "open", lastOutcome: "wall" })]);
      const own = up.status().breakers.find((b) => b.key === "first")!;
      expect(own).toMatchObject({ state: "open", restMs: REST, lastOutcome: "wall" });
      expect(own.restUntil! - Date.now()).toBeLessThanOrEqual(REST);

      // The rest ends: exactly one probe, which fails, so the next rest is twice as long.
      await sleep(REST + 50);
      for (let i = 0; i < 5; i++) await up.scrape("web-search", job);
      expect(hits.first).toBe(4);
      expect(up.status().breakers.find((b) => b.key === "first")).toMatchObject({ state: "open", restMs: 2 * REST });
      await sleep(REST + 50); // past the first rest's length, within the second's
      await up.scrape("web-search", job);
      expect(hits.first).toBe(4);

      // The recipe comes back: the probe at the end of the rest succeeds and `first` is first again.
      firstDead = false;
      await sleep(REST + 50);
      const probe = await up.scrape("web-search", job);
      expect(probe.tries.map((t) => [t.profile, t.outcome])).toEqual([["first", "results"]]);
      expect(hits.first).toBe(5);
      const after = await up.scrape("web-search", job);
      expect(after.tries.map((t) => t.profile)).toEqual(["first"]);
      expect(up.status().breakers.find((b) => b.key === "first")).toMatchObject({ state: "closed" });
    } finally {
      await up.close();
    }
  });

  test("jobs never wait on a probe in flight: they skip the probing rung", async () => {
    const up = make();
    try {
      firstDead = true;
      for (let i = 0; i < 3; i++) await up.scrape("web-search", job);
      await sleep(REST + 50);
      firstDelayMs = 1_000; // the probe hangs on a slow answer
      const probe = up.scrape("web-search", job);
      await sleep(20);
      const started = performance.now();
      const other = await up.scrape("web-search", job);
      expect(performance.now() - started).toBeLessThan(500);
      expect(other.tries.map((t) => t.profile)).toEqual(["second"]);
      expect(other.skipped).toEqual([expect.objectContaining({ profile: "first", state: "probing" })]);
      await probe;
    } finally {
      await up.close();
    }
  });

  test("when every rung rests, the job fails at once, naming each rung for operators", async () => {
    const up = createUpstream(
      readUpstreamEnv({ UPSTREAM_BASE_URL: base, PARSE_THREADS: 0, UPSTREAM_BREAKER_THRESHOLD: 2, UPSTREAM_BREAKER_REST_MS: 60_000 }),
      { profiles: tableOf(["first"]), parsers: { "web-search": parse } },
    );
    try {
      firstDead = true;
      for (let i = 0; i < 2; i++) await expect(up.scrape("web-search", job)).rejects.toBeInstanceOf(UpstreamFailure);
      hits = { first: 0, second: 0 };
      const failure = (await up.scrape("web-search", job).catch((e: unknown) => e)) as UpstreamFailure;
      expect(hits.first).toBe(0);
      expect(failure).toMatchObject({ kind: "js_wall", retryable: false, tries: [] });
      expect(failure.message).toBe("upstream required JavaScript and no profile could pass it");
      expect(failure.rungs).toMatch(/^first: skipped, resting until \d\d:\d\d:\d\dZ after wall \(first\)$/);
    } finally {
      await up.close();
    }
  });
});
