/**
 * Markdown for agents: the rendering itself (headings per block, numbered results with title, link
 * and snippet; nothing an agent cannot use; nothing unsafe passed through), then end to end on the
 * real stack: `output=md`, `/search.md`, `Accept: text/markdown` and `/searches/{id}.md` on the
 * compatibility endpoint, and the MCP tools, whose text content is this markdown next to
 * structuredContent, and which take `queue` (live by default).
 */
import request from "supertest";
import { envelopeMarkdown, jobMarkdown } from "../../apps/api/src/compat/markdown.js";
import { fixturesAvailable, pollUntilFinal, startStack, type Stack } from "../support/stack.js";

const LIVE = 30_000;

/** A rough token count, as BPE tokenizers split: runs of letters or digits, and each other symbol. */
const tokens = (text: string) => text.match(/[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu)?.length ?? 0;

describe("the markdown rendering", () => {
  const envelope = {
    search_metadata: { id: "job_01JZ8K3Q4V7X9YB2C5D6E7F8G9", status: "Success", json_endpoint: "https://x.test/searches/job_01JZ8K3Q4V7X9YB2C5D6E7F8G9.json" },
    search_parameters: { engine: "web", q: "coffee", hl: "en", gl: "us", location_used: "Austin,Texas,United States" },
    search_information: { organic_results_state: "Results for exact spelling", total_results: 1340000000 },
    organic_results: [
      { position: 1, title: "Coffee [beans] guide", link: "https://example.com/a (b)", snippet: "Coffee is a <script>alert(1)</script>  drink\nbrewed.", thumbnail: "data:image/png;base64,AAAA", source: "Example" },
      { position: 2, title: "Not a link", link: "javascript:alert(1)" },
    ],
    knowledge_graph: { title: "Coffee", type: "Drink", description: "A brewed drink.", attributes: { caffeine: "95 mg" } },
    ai_overview: { text_blocks: [{ type: "paragraph", snippet: "Coffee is popular." }, { type: "list", list: [{ title: "Arabica", snippet: "most grown" }] }], references: [{ title: "Ref", link: "https://ref.test/", index: 0 }] },
    related_questions: [{ question: "Is coffee healthy?", snippet: "In moderation.", link: "https://q.test/" }],
    related_searches: [{ query: "coffee near me", link: "https://www.google.com/search?q=coffee+near+me" }, { query: "espresso", link: "https://www.google.com/search?q=espresso" }],
    local_results: { places: [{ position: 1, title: "Joe's", rating: 4.5, reviews: 1200, address: "1 Main St", website: "https://joes.test/" }] },
    top_stories: [],
    serpapi_pagination: { current: 1, next: "https://x.test/search.json?q=coffee&start=10" },
  };
  const md = envelopeMarkdown(envelope);

  test("a heading, one line about the search, then a heading per non-empty block", () => {
    const lines = md.split("\n");
    expect(lines[0]).toBe("# coffee");
    expect(lines[2]).toBe("engine web · gl us · hl en · location Austin,Texas,United States · about 1,340,000,000 results · search job_01JZ8K3Q4V7X9YB2C5D6E7F8G9 Success");
    const headings = lines.filter((l) => l.startsWith("## "));
    expect(headings).toEqual(["## AI overview", "## Knowledge graph", "## Results", "## Places", "## Related questions", "## Related searches"]);
    expect(md).not.toContain("Top stories");
    expect(md.trimEnd().split("\n").at(-1)).toBe("Next page: https://x.test/search.json?q=coffee&start=10");
  });

  test("results are numbered with their title linked and their snippet under them; nothing unsafe or useless passes", () => {
    expect(md).toContain("1. [Coffee \\[beans\\] guide](<https://example.com/a%20(b)>) · Example\n   Coffee is a &lt;script>alert(1)&lt;/script> drink brewed.");
    // A javascript: link is no link; the title stays.
    expect(md).toContain("2. Not a link\n");
    expect(md).not.toContain("javascript:");
    expect(md).not.toContain("data:image");
    expect(md).not.toMatch(/<script/);
    expect(md).toContain("1. [Joe's](https://joes.test/) · 1 Main St · rated 4.5 (1,200 reviews)");
    expect(md).toContain("1. [Is coffee healthy?](https://q.test/)\n   In moderation.");
    expect(md).toContain("coffee near me; espresso");
    expect(md).toContain("**Coffee** · Drink\nA brewed drink.\n- caffeine: 95 mg");
    expect(md).toContain("Coffee is popular.\n- Arabica: most grown\n\nSources:\n1. [Ref](https://ref.test/)");
  });

  test("page text cannot act as markdown: links, images, emphasis, code, tables and line-starting block markers are escaped; control and bidi characters dropped", () => {
    const titles = ["# not a heading", "> quote", "- item", "---", "1. first", "[x](javascript:y) ![i](https://e.test/t.png) *b* _c_ `d` | e", "\u001b]0;t\u0007\u202egnp.exe"];
    const out = envelopeMarkdown({ search_parameters: { q: "q" }, organic_results: titles.map((title) => ({ title, link: "https://x.test/" })) });
    expect(out.split("\n").filter((l) => /^\d+\. /.test(l))).toEqual([
      "1. [\\# not a heading](https://x.test/)",
      "2. [\\> quote](https://x.test/)",
      "3. [\\- item](https://x.test/)",
      "4. [\\---](https://x.test/)",
      "5. [1\\. first](https://x.test/)",
      "6. [\\[x\\](javascript:y) !\\[i\\](https://e.test/t.png) \\*b\\* \\_c\\_ \\`d\\` \\| e](https://x.test/)",
      "7. [\\]0;tgnp.exe](https://x.test/)",
    ]);
    // Inside a word `_` cannot emphasise: identifiers stay readable.
    expect(envelopeMarkdown({ search_parameters: { q: "web_news get_job" } })).toMatch(/^# web_news get_job\n/);
  });

  test("a job's result, and a queued or failed job, read as markdown too", () => {
    const job = { id: "job_01JZ8K3Q4V7X9YB2C5D6E7F8G9", endpoint: "web-news" as const, queue: "fast" as const, params: { query: "x", country: "us" as const, language: "en" }, credits: 0, latencyMs: null, error: null, attempts: 0, createdAt: "2026-01-01T00:00:00Z", completedAt: null };
    const pending = jobMarkdown({ job: { ...job, status: "pending" }, result: null });
    expect(pending).toMatch(/^# x\n\nengine web-news · country us · language en · job job_01JZ8K3Q4V7X9YB2C5D6E7F8G9 pending\n\n> The job is pending on the fast queue: read it again with get_job/);
    const failed = jobMarkdown({ job: { ...job, status: "failed", error: "upstream blocked the request" }, result: null });
    expect(failed).toContain("> The job failed: upstream blocked the request. No credits were charged.");
    const done = jobMarkdown({
      job: { ...job, status: "completed", credits: 1 },
      result: { search_parameters: { engine: "web_news", query: "x", country: "us", language: "en", page: 1 }, news_results: [{ position: 1, title: "T", link: "https://n.test/", source: "N", date: "1 day ago", snippet: "S" }] },
    });
    expect(done).toBe("# x\n\nengine web_news · page 1 · country us · language en · job job_01JZ8K3Q4V7X9YB2C5D6E7F8G9 completed · 1 credit\n\n## News\n\n1. [T](https://n.test/) · N · 1 day ago\n   S\n");
    // The page layout is no block: a full page says nothing more, a light one says what it lacks.
    const news = { engine: "web_news", query: "x", country: "us", language: "en", page: 1 } as const;
    const item = { position: 1, title: "T", link: "https://n.test/", source: "N", date: "1 day ago", snippet: "S" };
    const full = jobMarkdown({ job: { ...job, status: "completed", credits: 1 }, result: { search_parameters: news, layout: "full", news_results: [item] } });
    expect(full).toBe(done);
    const light = jobMarkdown({ job: { ...job, status: "completed", credits: 1 }, result: { search_parameters: news, layout: "light", news_results: [item] } });
    expect(light).toContain("language en · light page (no AI overview, top stories or knowledge panel) · job");
    expect(light).not.toMatch(/## Layout/);
  });
});

const d = fixturesAvailable ? describe : describe.skip;

d("markdown on the compatibility endpoint and over MCP", () => {
  let stack: Stack;
  let key: string;
  let auth: string;
  beforeAll(async () => {
    stack = await startStack({ env: { LIVE_DEADLINE_MS: "15000" } });
    ({ key, auth } = await stack.account(100));
  }, LIVE);
  afterAll(() => stack.close());
  const api = () => request(stack.api.app);

  test("output=md answers the same search as compact markdown: every result's title, link and snippet, in under half the JSON's tokens", async () => {
    const json = await api().get("/search.json").query({ q: "coffee", api_key: key });
    const md = await api().get("/search.json").query({ q: "coffee", output: "md", api_key: key }).set("Accept", "application/json");
    expect(md.status).toBe(200);
    expect(md.headers["content-type"]).toMatch(/^text\/markdown; charset=utf-8/);
    expect(md.headers.vary).toMatch(/Accept/);
    expect(md.text.startsWith("# coffee\n")).toBe(true);
    expect(md.text).toContain("\n## Results\n");
    const organic = json.body.organic_results as { title: string; link: string; snippet?: string }[];
    expect(organic.length).toBeGreaterThan(3);
    const results = md.text.split("\n## Results\n\n")[1]!.split("\n\n## ")[0]!;
    expect(results.split("\n").filter((l) => /^\d+\. /.test(l))).toHaveLength(organic.length);
    for (const r of organic) {
      const url = new URL(r.link);
      if (url.hash.startsWith("#:~:")) url.hash = "";
      expect(md.text).toContain(`](${url.href})`);
      // As the rendering writes page text: markdown's inline syntax escaped, `<` as `&lt;`.
      const shown = r.snippet?.replace(/\s+/g, " ").trim().slice(0, 40).replace(/[\\`*[\]|~]|(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu, "\\$&").replace(/</g, "&lt;");
      if (shown) expect(md.text).toContain(shown);
    }
    // Measured 0.32 of the tokens and 0.46 of the bytes on this page.
    expect(tokens(md.text) / tokens(JSON.stringify(json.body))).toBeLessThan(0.45);
    expect(Buffer.byteLength(md.text) / Buffer.byteLength(JSON.stringify(json.body))).toBeLessThan(0.55);
  }, LIVE);

  test("/search.md, Accept: text/markdown on /search, and /searches/{id}.md answer markdown; errors stay JSON", async () => {
    const viaPath = await api().get("/search.md").query({ q: "schloss johannisberg", engine: "web_news", api_key: key });
    expect(viaPath.headers["content-type"]).toMatch(/^text\/markdown/);
    expect(viaPath.text).toMatch(/^# schloss johannisberg\n\nengine web_news/);
    expect(viaPath.text).toContain("\n## News\n\n1. [");

    const viaAccept = await api().get("/search").query({ q: "coffee", engine: "web_local", api_key: key }).set("Accept", "text/markdown");
    expect(viaAccept.headers["content-type"]).toMatch(/^text\/markdown/);
    expect(viaAccept.text).toContain("\n## Places\n\n1. ");
    // What the clients send (*/*, or JSON) stays JSON.
    const asJson = await api().get("/search").query({ q: "coffee", engine: "web_local", api_key: key }).set("Accept", "*/*");
    expect(asJson.headers["content-type"]).toMatch(/^application\/json/);

    const archived = await api().get(`/searches/${asJson.body.search_metadata.id}.md`).query({ api_key: key });
    expect(archived.headers["content-type"]).toMatch(/^text\/markdown/);
    expect(archived.text).toContain(`search ${asJson.body.search_metadata.id} Success`);

    const missing = await api().get("/search.md").query({ api_key: key });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: "Missing query `q` parameter." });
  }, LIVE);

  describe("MCP", () => {
    async function callTool(name: string, args: Record<string, unknown>) {
      const res = await api()
        .post("/mcp")
        .set("Authorization", auth)
        .set("Accept", "application/json, text/event-stream")
        .set("MCP-Protocol-Version", "2025-06-18")
        .send({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } });
      expect(res.status).toBe(200);
      return res.body.result as { isError?: boolean; content: { type: string; text: string }[]; structuredContent: { job: { id: string; status: string; queue: string }; result: Record<string, unknown> | null } };
    }

    test("a tool's text content is the markdown rendering; structuredContent is the job and its result", async () => {
      const res = await callTool("web_search", { query: "coffee" });
      expect(res.isError).toBeFalsy();
      expect(res.content).toHaveLength(1);
      const text = res.content[0]!.text;
      expect(text.startsWith("# coffee\n")).toBe(true);
      expect(text).toContain(`job ${res.structuredContent.job.id} completed · 1 credit`);
      const organic = res.structuredContent.result!.organic_results as { link: string }[];
      for (const r of organic) expect(text).toContain(`](${new URL(r.link).href.replace(/#:~:.*$/, "")})`);
      // Against the compact JSON of the same result (no pagination here, unlike the envelope).
      // Measured 0.42 of the tokens.
      expect(tokens(text) / tokens(JSON.stringify(res.structuredContent))).toBeLessThan(0.55);
    }, LIVE);

    test("queue fast returns the pending job at once; get_job later reads its result, in markdown", async () => {
      const queued = await callTool("web_autocomplete", { query: "cheesecake", queue: "fast" });
      expect(queued.isError).toBeFalsy();
      // Answered as submitted, before any worker took it.
      expect(queued.structuredContent.job).toMatchObject({ queue: "fast", status: "pending" });
      expect(queued.structuredContent.result).toBeNull();
      const id = queued.structuredContent.job.id;
      expect(queued.content[0]!.text).toContain(`The job is pending on the fast queue: read it again with get_job (jobId ${id})`);
      await pollUntilFinal(() => api().get(`/v1/jobs/${id}`).set("Authorization", auth));
      const read = await callTool("get_job", { jobId: id });
      expect(read.structuredContent.job.status).toBe("completed");
      expect(read.content[0]!.text).toMatch(/^# cheesecake\n[\s\S]*\n## Suggestions\n\n.*cheesecake/);
    }, LIVE);

    test("queue is live by default and must be one of the three", async () => {
      const listed = await api()
        .post("/mcp")
        .set("Authorization", auth)
        .set("Accept", "application/json, text/event-stream")
        .send({ jsonrpc: "2.0", id: 2, method: "tools/list" });
      const tool = (listed.body.result.tools as { name: string; inputSchema: { properties: Record<string, { enum?: string[]; default?: string }>; required?: string[] } }[]).find((t) => t.name === "web_news")!;
      expect(tool.inputSchema.properties.queue).toMatchObject({ enum: ["live", "fast", "regular"], default: "live" });
      expect(tool.inputSchema.required).toEqual(["query"]);
      const bad = await callTool("web_news", { query: "x", queue: "slow" });
      expect(bad.isError).toBe(true);
      expect(bad.content[0]!.text).toMatch(/queue/);
    }, LIVE);
  });
});
