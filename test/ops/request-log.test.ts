/**
 * One log line per request, with its id, method, path and status, and never the caller's API key:
 * not from the Authorization header, not from the compatibility endpoint's `api_key` query.
 */
import { Writable } from "node:stream";
import { pino } from "pino";
import request from "supertest";
import { startStack, type Stack } from "../support/stack.js";

let stack: Stack;
const lines: Record<string, unknown>[] = [];
const raw: string[] = [];

beforeAll(async () => {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) {
        raw.push(line);
        lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  stack = await startStack({ workerQueues: [], apiLogger: pino({ level: "debug" }, sink) });
});
afterAll(() => stack.close());

test("requests are logged by method, path and status, without keys or query strings", async () => {
  const { key } = await stack.account(5);
  const app = stack.api.app;
  const submitted = await request(app).post("/v1/jobs").set("authorization", `Bearer ${key}`).send({ endpoint: "web-search", params: { query: "coffee" }, queue: "fast" });
  expect(submitted.status).toBe(202);
  // An engine the service does not have: a 400 (no worker runs here), logged without the key.
  const compat = await request(app).get("/search.json").query({ engine: "bing", q: "coffee", api_key: key, no_such_param: "x" });
  expect(compat.status).toBe(400);
  const denied = await request(app).get("/v1/account").set("authorization", "Bearer sk_live_not-a-real-key-00000000000000");
  expect(denied.status).toBe(401);

  const requestLines = lines.filter((l) => (l.req as { path?: string } | undefined)?.path !== undefined);
  expect(requestLines.map((l) => [(l.req as { method: string }).method, (l.req as { path: string }).path, (l.res as { statusCode: number }).statusCode])).toEqual(
    expect.arrayContaining([["POST", "/v1/jobs", 202], ["GET", "/search.json", 400], ["GET", "/v1/account", 401]]),
  );
  for (const l of requestLines) expect((l.req as { id?: unknown }).id).toEqual(expect.any(String));
  const all = raw.join("\n");
  expect(all).not.toContain(key);
  expect(all).not.toContain("sk_live_not-a-real-key");
  expect(all).not.toContain("api_key");
  expect(all.toLowerCase()).not.toContain("authorization");
});
