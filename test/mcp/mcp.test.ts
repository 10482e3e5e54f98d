/**
 * POST /mcp through the SDK's own client over real HTTP on loopback: the tool list, every job tool
 * against the replay upstream, get_job, billing, tool errors, and the HTTP surface (401, 405, 400).
 */
import { unlinkSync } from "node:fs";
import { connect as tcpConnect, type AddressInfo } from "node:net";
import { join } from "node:path";
import { createServer, type Server } from "node:http";
import { Writable } from "node:stream";
import { gzipSync } from "node:zlib";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { pino } from "pino";
import request from "supertest";
import { fixturesAvailable, startStack, type Stack } from "../support/stack.js";

const d = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) console.warn("mcp: captured pages not found; set SERP_FIXTURES_DIR. Skipping.");

interface JobBody {
  job: { id: string; status: string; credits: number; endpoint: string; queue: string; error: string | null };
  result: Record<string, unknown> | null;
}

const JOB_TOOLS: [tool: string, args: Record<string, unknown>, block: string][] = [
  ["web_search", { query: "coffee" }, "organic_results"],
  ["web_news", { query: "schloss johannisberg" }, "news_results"],
  ["web_images", { query: "初音ミク" }, "images_results"],
  ["web_local", { query: "coffee" }, "local_results"],
  ["web_shopping_search", { query: "889894929969" }, "shopping_results"],
  ["web_shopping_product", { product_id: "13239497633151178800" }, "sellers"],
  ["web_shopping_product_info", { product_id: "13239497633151178800" }, "product_results"],
  ["web_autocomplete", { query: "cheesecake" }, "suggestions"],
];

function text(result: CallToolResult): string {
  return result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
}

d("MCP over Streamable HTTP", () => {
  let stack: Stack;
  let http: Server;
  let url: string;
  const clients: Client[] = [];
  /** The API's log lines at info and above: refusals must not log at error. */
  const logLines: { level: number; msg: string; reqId?: string; req?: { id?: string } }[] = [];
  const linesOf = (id: string) => logLines.filter((l) => l.reqId === id || l.req?.id === id);

  beforeAll(async () => {
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split("\n").filter(Boolean)) logLines.push(JSON.parse(line) as (typeof logLines)[number]);
        done();
      },
    });
    stack = await startStack({ env: { LIVE_DEADLINE_MS: "15000" }, apiLogger: pino({ level: "info" }, sink) });
    http = createServer(stack.api.app);
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    // Keep-alive sockets from fetch and the SDK client would hold the test process open.
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
    await stack.close();
  });
  afterEach(() => stack.replay.clearFaults());

  async function connect(key: string): Promise<Client> {
    const client = new Client({ name: "mcp-test", version: "1.0.0" });
    const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${key}` } } });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
    return (await client.callTool({ name, arguments: args }, undefined, { timeout: 30_000 })) as CallToolResult;
  }

  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream", ...headers },
      body,
    });

  describe("happy path", () => {
    test("initializes statelessly and lists the nine tools with input and output schemas", async () => {
      const { key } = await stack.account(1);
      const client = await connect(key);
      expect(client.getServerVersion()).toMatchObject({ name: "serp" });
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([...JOB_TOOLS.map(([name]) => name), "get_job"].sort());
      for (const tool of tools) {
        expect(tool.description).toEqual(expect.any(String));
        expect(tool.inputSchema.type).toBe("object");
        expect(tool.outputSchema?.properties).toHaveProperty("job");
      }
      const search = tools.find((t) => t.name === "web_search")!;
      expect(search.inputSchema.required).toEqual(["query"]);
      expect(search.inputSchema.properties).toMatchObject({ page: { type: "integer", minimum: 1, maximum: 10 } });
      expect((search.inputSchema as { additionalProperties?: unknown }).additionalProperties).toBe(false);
      expect(tools.find((t) => t.name === "web_shopping_product")!.inputSchema.required).toEqual(["product_id"]);
      expect(tools.find((t) => t.name === "web_shopping_product")!.description).toMatch(/1 credit per 10 sellers/);
      expect(tools.find((t) => t.name === "get_job")!.inputSchema.required).toEqual(["jobId"]);
    });

    test("every job tool runs a live job against the upstream and bills it like POST /v1/jobs", async () => {
      const { key, accountId } = await stack.account(100);
      const client = await connect(key);
      let charged = 0;
      for (const [tool, args, block] of JOB_TOOLS) {
        const res = await call(client, tool, args);
        expect({ tool, isError: res.isError ?? false, text: res.isError ? text(res) : "" }).toEqual({ tool, isError: false, text: "" });
        const body = res.structuredContent as unknown as JobBody;
        expect(body.job).toMatchObject({ status: "completed", queue: "live", endpoint: tool.replace(/^web_/, "web-").replaceAll("_", "-") });
        expect(body.job.credits).toBeGreaterThanOrEqual(1);
        expect(body.result).toHaveProperty(block);
        expect(body.result).toHaveProperty("search_parameters");
        // The text is the markdown rendering of the same result (test/compat/markdown.test.ts).
        expect(text(res)).toMatch(new RegExp(`^# .*\\n[\\s\\S]*job ${body.job.id} completed`));
        charged += body.job.credits;
      }
      expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 100 - charged, reserved: 0 });
    }, 60_000);

    test("get_job reads the caller's job, and not another account's", async () => {
      const owner = await stack.account(5);
      const client = await connect(owner.key);
      const ran = (await call(client, "web_autocomplete", { query: "cheesecake" })).structuredContent as unknown as JobBody;
      const read = await call(client, "get_job", { jobId: ran.job.id });
      expect(read.isError).toBeFalsy();
      expect(read.structuredContent).toEqual(ran);

      const other = await connect((await stack.account(5)).key);
      const foreign = await call(other, "get_job", { jobId: ran.job.id });
      expect(foreign.isError).toBe(true);
      expect(text(foreign)).toMatch(new RegExp(`No job ${ran.job.id}`));
      const unknown = await call(client, "get_job", { jobId: "job_01JZZZZZZZZZZZZZZZZZZZZZZZ" });
      expect(unknown.isError).toBe(true);
    });

    test("get_job on a job whose result is gone from the result store is a tool error that says so, not an internal error", async () => {
      const owner = await stack.account(5);
      const client = await connect(owner.key);
      const ran = (await call(client, "web_autocomplete", { query: "cheesecake" })).structuredContent as unknown as JobBody;
      const loc = (await stack.redis.hget(`${stack.prefix}:job:${ran.job.id}`, "resultLoc"))!;
      unlinkSync(join(stack.rawPagesDir!, "results", loc));
      const read = await call(client, "get_job", { jobId: ran.job.id });
      expect(read.isError).toBe(true);
      expect(text(read)).toMatch(new RegExp(`^The result of job ${ran.job.id} is gone from the result store, so it cannot be served .*\\(not_found\\)\\.$`));
    });

    test("a tool call works without the initialize handshake, as a newer protocol revision sends it", async () => {
      const { key, accountId } = await stack.account(3);
      const res = await post(
        JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "web_autocomplete", arguments: { query: "cheesecake" } } }),
        { Authorization: `Bearer ${key}`, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "web_autocomplete" },
      );
      expect(res.status).toBe(200);
      const body = (await res.json()) as { id: number; result: CallToolResult };
      expect(body.id).toBe(7);
      expect((body.result.structuredContent as unknown as JobBody).job.status).toBe("completed");
      expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 2 });
    });
  });

  describe("tool errors", () => {
    test("a failed job is an isError result carrying the job, and costs nothing", async () => {
      const { key, accountId } = await stack.account(5);
      const client = await connect(key);
      stack.replay.setFaults({ mode: "server-error" });
      const res = await call(client, "web_search", { query: "coffee" });
      expect(res.isError).toBe(true);
      expect(text(res)).toMatch(/failed: upstream/);
      expect((res.structuredContent as unknown as JobBody).job).toMatchObject({ status: "failed", credits: 0 });
      expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 5, reserved: 0 });
    });

    test.each([
      ["a missing required field", "web_search", {}, /query/],
      ["a query of only control characters", "web_search", { query: " \u0000\u0001\t" }, /(?=.*control characters)(?=.*query)/],
      ["a page out of bounds", "web_news", { query: "x", page: 11 }, /page/],
      ["an unknown field", "web_search", { query: "x", foo: 1 }, /foo/],
      ["a wrong type", "web_shopping_product", { product_id: 42 }, /product_id/],
      ["location together with uule", "web_local", { query: "x", location: "Austin,Texas,United States", uule: "w+CAIQICIFQXVzdGlu" }, /uule/],
    ])("invalid input (%s) is an isError result naming the field, and runs no job", async (_why, tool, args, field) => {
      const { key, accountId } = await stack.account(2);
      const client = await connect(key);
      const res = await call(client, tool, args);
      expect(res.isError).toBe(true);
      expect(text(res)).toMatch(field);
      expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 2, reserved: 0 });
      expect((await stack.api.accounts.ledger(accountId)).filter((e) => e.jobId !== undefined)).toEqual([]);
    });

    test("with no credits left a tool call is an isError result about credits", async () => {
      const client = await connect((await stack.account(0)).key);
      const res = await call(client, "web_search", { query: "coffee" });
      expect(res.isError).toBe(true);
      expect(text(res)).toMatch(/credits/);
      expect(text(res)).toMatch(/insufficient_credits/);
    });

    test("an unknown tool is a protocol error (-32602), not a tool result", async () => {
      const client = await connect((await stack.account(1)).key);
      const err = await client.callTool({ name: "web_videos", arguments: { query: "x" } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(McpError);
      expect((err as McpError).code).toBe(-32602);
      expect((err as McpError).message).toMatch(/web_videos/);
    });
  });

  describe("HTTP surface", () => {
    const initialize = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
    });

    test.each([
      ["no key", undefined, 'Bearer realm="mcp"'],
      ["an unknown key", "Bearer sk_live_00000000000000000000000000000000", 'Bearer realm="mcp", error="invalid_token"'],
      ["a malformed header", "Token abc", 'Bearer realm="mcp", error="invalid_token"'],
    ])("answers 401 with a Bearer challenge for %s", async (_why, authorization, challenge) => {
      const res = await post(initialize, authorization ? { Authorization: authorization } : {});
      expect(res.status).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe(challenge);
      expect(await res.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32000, data: { code: "unauthorized" } } });
    });

    test("the SDK client cannot connect with a bad key", async () => {
      const client = new Client({ name: "mcp-test", version: "1.0.0" });
      const transport = new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { Authorization: "Bearer sk_live_00000000000000000000000000000000" } },
      });
      await expect(client.connect(transport)).rejects.toThrow(/401|Invalid or revoked/);
    });

    test.each(["GET", "DELETE", "PUT"])("answers %s with 405 and Allow: POST", async (method) => {
      const { key } = await stack.account(0);
      const res = await fetch(url, { method, headers: { Authorization: `Bearer ${key}`, Accept: "text/event-stream" } });
      expect(res.status).toBe(405);
      expect(res.headers.get("allow")).toBe("POST");
      expect(await res.json()).toMatchObject({ jsonrpc: "2.0", error: { data: { code: "method_not_allowed" } } });
    });

    test("answers invalid JSON with 400 and a JSON-RPC parse error", async () => {
      const { key } = await stack.account(0);
      const res = await post("{not json", { Authorization: `Bearer ${key}` });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    });

    test("answers a corrupt gzip body with 400, logged as a refusal", async () => {
      const { key } = await stack.account(0);
      const id = `gzip-${Date.now()}`;
      const res = await fetch(url, {
        method: "POST",
        headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json", "Content-Encoding": "gzip", Accept: "application/json, text/event-stream", "X-Request-Id": id },
        body: Buffer.concat([gzipSync(initialize).subarray(0, 10), Buffer.from("garbage, not deflate data")]),
      });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600, message: expect.stringMatching(/decompress/), data: { code: "invalid_request" } } });
      const lines = linesOf(id);
      expect(lines.map((l) => l.msg)).toContain("request completed");
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
    });

    test("an upload the client aborts (less body than its Content-Length) is logged as a refusal, not an error", async () => {
      const { key } = await stack.account(0);
      const id = `aborted-${Date.now()}`;
      const socket = tcpConnect(Number(new URL(url).port), "127.0.0.1");
      await new Promise<void>((resolve) => socket.once("connect", resolve));
      socket.write(
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n` +
          `Accept: application/json, text/event-stream\r\nX-Request-Id: ${id}\r\nContent-Length: 10000\r\n\r\n${initialize.slice(0, 20)}`,
      );
      // Past authentication and the rate limit, into reading the body; then the client goes away.
      await new Promise((r) => setTimeout(r, 300));
      socket.destroy();
      const until = Date.now() + 30_000;
      while (!linesOf(id).some((l) => l.req?.id === id) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 100));
      const lines = linesOf(id);
      // The request's line: "request aborted", or "completed" with the 400 when it was written before the close was seen.
      const requestLine = lines.find((l) => l.req?.id === id) as { level: number; res: { statusCode: number } } | undefined;
      expect(requestLine).toMatchObject({ level: 30, res: { statusCode: 400 } });
      expect(lines.filter((l) => l.level >= 50)).toEqual([]);
    });

    test("answers a body over the size limit with 413", async () => {
      const { key } = await stack.account(0);
      const big = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: { pad: "x".repeat(200_000) } });
      const res = await post(big, { Authorization: `Bearer ${key}` });
      expect(res.status).toBe(413);
      expect(await res.json()).toMatchObject({ error: { data: { code: "payload_too_large" } } });
    });

    test("refuses JSON-RPC batches with 400", async () => {
      const { key } = await stack.account(0);
      const list = { jsonrpc: "2.0", method: "tools/list", params: {} };
      const res = await post(JSON.stringify([{ ...list, id: 1 }, { ...list, id: 2 }]), { Authorization: `Bearer ${key}` });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ error: { code: -32600 } });
    });

    test("answers a raw initialize with plain JSON and no session id", async () => {
      const { key } = await stack.account(0);
      const res = await post(initialize, { Authorization: `Bearer ${key}` });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      expect(res.headers.get("mcp-session-id")).toBeNull();
      // Headers set by the service's middleware survive the SDK writing the response.
      expect(res.headers.get("x-request-id")).toEqual(expect.any(String));
      expect(res.headers.get("ratelimit-policy")).toEqual(expect.any(String));
      expect(await res.json()).toMatchObject({ id: 1, result: { protocolVersion: "2025-06-18", capabilities: { tools: {} } } });
    });
  });
});

d("MCP limits", () => {
  let stack: Stack;
  beforeAll(async () => {
    // No workers: a queued job stays pending and holds the account's one in-flight slot.
    stack = await startStack({ env: { RATE_LIMIT_PER_MINUTE: "2", MAX_JOBS_IN_FLIGHT: "1" }, workerQueues: [] });
  });
  afterAll(() => stack.close());

  test("counts every POST of the account and answers past the limit with 429, Retry-After and a JSON-RPC error", async () => {
    const { auth } = await stack.account(0);
    const list = { jsonrpc: "2.0", id: 1, method: "tools/list", params: {} };
    const send = () =>
      request(stack.api.app).post("/mcp").set("Authorization", auth).set("Accept", "application/json, text/event-stream").send(list);
    expect((await send()).status).toBe(200);
    expect((await send()).status).toBe(200);
    const refused = await send();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers["retry-after"])).toBeGreaterThan(0);
    expect(refused.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32000, data: { code: "rate_limited" } } });
  });

  test("a tool call past the account's jobs in flight is an isError result saying so, and costs nothing", async () => {
    const { auth, accountId } = await stack.account(5);
    const queued = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: "coffee" }, queue: "regular" });
    expect(queued.status).toBe(202);
    const call = { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "web_search", arguments: { query: "coffee" } } };
    const res = await request(stack.api.app).post("/mcp").set("Authorization", auth).set("Accept", "application/json, text/event-stream").send(call);
    expect(res.status).toBe(200);
    expect(res.body.result.isError).toBe(true);
    expect(res.body.result.content[0].text).toMatch(/concurrency_limited.*Retry after \d+ s/);
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 5, reserved: 1 });
  });
});
