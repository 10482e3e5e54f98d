/**
 * Parsing on threads gives exactly what parsing on the event loop gives: every captured page that
 * has a parser, through a real thread pool, and one scrape end to end over HTTP. A parser that
 * fails in a thread comes back as that failure.
 */
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Endpoint, JobParams } from "@serp/shared";
import { readUpstreamEnv } from "../src/env.js";
import { parsePage } from "../src/coverage.js";
import { createParsePool, type ParsePool } from "../src/parse-pool.js";
import { PARSERS } from "../src/kinds/index.js";
import { createUpstream } from "../src/scrape.js";
import { FIXTURES_DIR, fixturesAvailable } from "./fixtures-dir.js";

const here = dirname(fileURLToPath(import.meta.url));
const expectationDir = join(here, "conformance", "expectations");
/** Up to three captured pages per parser, from those the conformance suite parses. */
const parsedPages: { fixture: string; parser: Endpoint }[] = [];
for (const file of readdirSync(expectationDir).filter((f) => f.endsWith(".json")).sort()) {
  for (const e of JSON.parse(readFileSync(join(expectationDir, file), "utf8")) as { fixture: string; parser?: Endpoint }[]) {
    const parser = e.parser;
    if (parser && parsedPages.filter((p) => p.parser === parser).length < 3) parsedPages.push({ fixture: e.fixture, parser });
  }
}

let pool: ParsePool;
beforeAll(() => {
  pool = createParsePool(2);
});
afterAll(() => pool.close());

const describeIfFixtures = fixturesAvailable ? describe : describe.skip;

describeIfFixtures("a thread parses captured pages as the event loop does", () => {
  test("the captured pages cover every kind of parser", () => {
    expect(new Set(parsedPages.map((p) => p.parser))).toEqual(new Set(Object.keys(PARSERS)));
  });

  test.each(parsedPages.map((p) => [p.fixture, p.parser] as const))("%s (%s)", async (fixture, parser) => {
    const body = readFileSync(join(FIXTURES_DIR, fixture), "utf8");
    let inline: unknown;
    try {
      // The blocks and the page's coverage figure, as the thread sends them back.
      inline = parsePage(parser, body);
    } catch (error) {
      // Pages that are not what the parser reads (an error page, a DOM dump) fail the same way.
      await expect(pool.parse(parser, body)).rejects.toThrow((error as Error).message);
      return;
    }
    await expect(pool.parse(parser, body)).resolves.toEqual(inline);
  });
});

describe("parse pool", () => {
  test("many pages at once on two threads each come back to their own caller", async () => {
    const web = readFileSync(join(here, "fixtures", "web-basic.html"), "utf8");
    const news = readFileSync(join(here, "fixtures", "news-basic-layout-written-after-docs.html"), "utf8");
    const tasks: [Endpoint, string][] = Array.from({ length: 40 }, (_, i) => (i % 2 ? ["web-news", news] : ["web-search", web]));
    const results = await Promise.all(tasks.map(([endpoint, body]) => pool.parse(endpoint, body)));
    results.forEach((blocks, i) => {
      const [endpoint, body] = tasks[i]!;
      expect(blocks).toEqual(parsePage(endpoint, body));
    });
  });

  test("a parser failing in a thread rejects with its error, and the thread goes on", async () => {
    await expect(pool.parse("no-such-kind" as Endpoint, "<html></html>")).rejects.toThrow("is not a function");
    const web = readFileSync(join(here, "fixtures", "web-basic.html"), "utf8");
    await expect(pool.parse("web-search", web)).resolves.toEqual(parsePage("web-search", web));
  });

  test("the thread count is checked", () => {
    // The deployed default (PARSE_THREADS, docs/DEFAULTS.md): one thread beside the event loop.
    expect(readUpstreamEnv({}).PARSE_THREADS).toBe(1);
    expect(readUpstreamEnv({ PARSE_THREADS: "0" }).PARSE_THREADS).toBe(0);
    expect(() => readUpstreamEnv({ PARSE_THREADS: -1 })).toThrow("PARSE_THREADS");
    expect(() => readUpstreamEnv({ PARSE_THREADS: 1.5 })).toThrow("PARSE_THREADS");
  });
});

describe("scrape with parse threads", () => {
  let server: Server;
  let base = "";
  const page = readFileSync(join(here, "fixtures", "web-desktop.html"), "utf8");
  beforeAll(async () => {
    server = createServer((_req, res) => res.writeHead(200, { "content-type": "text/html; charset=utf-8" }).end(page));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const params: JobParams = { query: "coffee", country: "us", language: "en", page: 1, device: "desktop" };

  test("a job's blocks are the same with and without threads", async () => {
    const threaded = createUpstream(readUpstreamEnv({ UPSTREAM_BASE_URL: base, PARSE_THREADS: 1 }));
    const inline = createUpstream(readUpstreamEnv({ UPSTREAM_BASE_URL: base, PARSE_THREADS: 0 }));
    try {
      const together = await Promise.all(Array.from({ length: 6 }, () => threaded.scrape("web-search", params)));
      const alone = await inline.scrape("web-search", params);
      expect(alone.pageClass).toBe("results");
      expect(alone.blocks.organic_results?.length).toBeGreaterThan(0);
      for (const a of together) expect([a.blocks, a.coverage]).toEqual([alone.blocks, alone.coverage]);
      // Scrapes in progress together parse on the thread (the last ones may find themselves alone).
      expect(threaded.parses().threads).toBeGreaterThanOrEqual(1);
      expect(threaded.parses().inline + threaded.parses().threads).toBe(6);
      expect(inline.parses()).toEqual({ inline: 1, threads: 0 });
    } finally {
      await Promise.all([threaded.close(), inline.close()]);
    }
  });

  test("a scrape alone parses on the event loop even with threads, sparing the hand-over", async () => {
    const threaded = createUpstream(readUpstreamEnv({ UPSTREAM_BASE_URL: base, PARSE_THREADS: 1 }));
    try {
      for (let i = 0; i < 3; i++) await threaded.scrape("web-search", params);
      expect(threaded.parses()).toEqual({ inline: 3, threads: 0 });
    } finally {
      await threaded.close();
    }
  });
});
