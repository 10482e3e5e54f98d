/**
 * Text that cannot inject (issue 26): a hand-written results page full of markdown links and
 * images, javascript: and data: links, terminal control sequences (ESC/OSC, BEL, BS, DEL, NEL, CSI)
 * and bidi controls (RLO, LRM, RLM, ALM, isolates) goes through the real stack, and every output is
 * checked: the job JSON (POST /v1/jobs), /search.json, /search.md and the MCP tool's text and
 * structuredContent. JSON keeps the page's words but no control or bidi character and no link that
 * is not http(s); markdown, read back by a CommonMark parser, holds no link but http(s) ones, no
 * image, no HTML, no emphasis or code, and no heading but its own.
 */
import { join } from "node:path";
import { Parser, type Node } from "commonmark";
import request from "supertest";
import { fixturesAvailable, startStack, type Stack } from "../support/stack.js";
import { ROOT } from "../ops/support.js";

const d = fixturesAvailable ? describe : describe.skip;
const LIVE = 30_000;
const PAGE = join(ROOT, "packages/upstream/test/fixtures/web-hostile-text.html");
const QUERY = "hostile page";

/** Written here, apart from the code under test: C0 but tab and line feed, DEL, C1, and the bidi controls. */
const UNSAFE = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/;

/** Every string in a JSON value (keys too), with the key it is under. */
function strings(value: unknown, key = ""): [string, string][] {
  if (typeof value === "string") return [[key, value]];
  if (Array.isArray(value)) return value.flatMap((v) => strings(v, key));
  if (value && typeof value === "object") return Object.entries(value).flatMap(([k, v]) => [["(key)", k] as [string, string], ...strings(v, k)]);
  return [];
}

/** The job result's JSON: no control or bidi character anywhere, only http(s) links, the page's words kept. */
function expectSafeJson(result: Record<string, unknown>) {
  const all = strings(result);
  expect(all.filter(([, s]) => UNSAFE.test(s))).toEqual([]);
  const links = all.filter(([k]) => k !== "displayed_link" && (k === "link" || k === "website" || k.endsWith("_link")));
  expect(links.length).toBeGreaterThan(0);
  for (const [, link] of links) expect(link).toMatch(/^https?:\/\//);
  expect(JSON.stringify(result)).not.toMatch(/javascript:alert\(2\)|data:text/i);
  const organic = result.organic_results as { title: string; link: string; snippet?: string; displayed_link?: string }[];
  expect(organic.map((o) => o.link)).toEqual(["https://bikes.example/deals", "https://wiki.example/Bicycle"]);
  expect(organic[0]).toMatchObject({
    title: "Cheap bikes]0;owned [click me](javascript:alert(1)) ![pixel](https://evil.example/t.png)",
    displayed_link: "bikes.example › deals[2J",
    snippet: "Best [31mred[0m deals gnp.exenext 1m line **bold** <img src=x onerror=alert(1)> # not a heading",
  });
  expect((result.related_searches as { query: string }[])[0]!.query).toBe("bikes[1A near me](javascript:x)");
}

/** The markdown as a CommonMark parser reads it: only its own structure, the page's text inert. */
function expectInertMarkdown(md: string) {
  expect(md).not.toMatch(UNSAFE);
  const kinds = new Map<string, number>();
  const links: string[] = [];
  const headings: string[] = [];
  let text = "";
  const walker = new Parser().parse(md).walker();
  for (let event = walker.next(); event; event = walker.next()) {
    if (!event.entering) continue;
    const node: Node = event.node;
    kinds.set(node.type, (kinds.get(node.type) ?? 0) + 1);
    if (node.type === "link") links.push(node.destination ?? "");
    if (node.type === "heading") headings.push(`${node.level} ${node.firstChild?.literal ?? ""}`);
    if (node.type === "text") text += node.literal;
  }
  for (const type of ["image", "html_inline", "html_block", "emph", "strong", "code", "code_block", "block_quote", "thematic_break", "table"]) {
    expect([type, kinds.get(type) ?? 0]).toEqual([type, 0]);
  }
  expect(headings).toEqual([`1 ${QUERY}`, "2 Results", "2 Related searches"]);
  expect(links).toEqual(["https://bikes.example/deals", "https://wiki.example/Bicycle"]);
  // Escaped, not dropped: the reader sees the page's words as they were written.
  expect(text).toContain("Cheap bikes]0;owned [click me](javascript:alert(1)) ![pixel](https://evil.example/t.png)");
  expect(text).toContain("**bold** <img src=x onerror=alert(1)> # not a heading");
  expect(text).toContain("bikes[1A near me](javascript:x)");
}

d("a hostile results page, through every output", () => {
  let stack: Stack;
  let key: string;
  let auth: string;
  beforeAll(async () => {
    stack = await startStack({ env: { LIVE_DEADLINE_MS: "15000" }, workerQueues: ["live"], replay: { routes: [{ kind: "web", q: QUERY, file: PAGE }] } });
    ({ key, auth } = await stack.account(100));
  }, LIVE);
  afterAll(() => stack.close());
  const api = () => request(stack.api.app);

  test("the job JSON (POST /v1/jobs, GET /v1/jobs/{id}) carries no control or bidi character and only http(s) links", async () => {
    const res = await api().post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: QUERY }, queue: "live" });
    expect(res.status).toBe(200);
    expect(res.body.job.status).toBe("completed");
    expectSafeJson(res.body.result);
    const read = await api().get(`/v1/jobs/${res.body.job.id}`).set("Authorization", auth);
    expect(read.text).not.toMatch(/\\u00(?:0[0-8bcef]|1[0-9a-f]|7f|8[0-9a-f]|9[0-9a-f])|\\u(?:061c|200[ef]|202[a-e]|206[6-9])/i);
    expectSafeJson(read.body.result);
  }, LIVE);

  test("/search.json the same, and /search.md is inert markdown", async () => {
    const json = await api().get("/search.json").query({ q: QUERY, no_cache: "true", api_key: key });
    expect(json.status).toBe(200);
    expectSafeJson(json.body);
    const md = await api().get("/search.md").query({ q: QUERY, api_key: key });
    expect(md.status).toBe(200);
    expect(md.headers["content-type"]).toMatch(/^text\/markdown/);
    expectInertMarkdown(md.text);
  }, LIVE);

  test("MCP: the tool's text is inert markdown and its structuredContent safe JSON; an error echoing an argument is clean too", async () => {
    const call = async (name: string, args: Record<string, unknown>) =>
      (
        await api()
          .post("/mcp")
          .set("Authorization", auth)
          .set("Accept", "application/json, text/event-stream")
          .set("MCP-Protocol-Version", "2025-06-18")
          .send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } })
      ).body.result as { isError?: boolean; content: { text: string }[]; structuredContent?: { result: Record<string, unknown> } };
    const res = await call("web_search", { query: QUERY });
    expect(res.isError).toBeFalsy();
    expectInertMarkdown(res.content[0]!.text);
    expectSafeJson(res.structuredContent!.result);

    const missing = await call("get_job", { jobId: "job_\u001b]0;owned\u0007\u202e" });
    expect(missing.isError).toBe(true);
    expect(missing.content[0]!.text).toBe("No job job_]0;owned for this account: the id is unknown, expired, or belongs to another account.");
  }, LIVE);
});
