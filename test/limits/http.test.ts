/**
 * Bounds on what one request may cost the server: body size (BODY_LIMIT), header size
 * (MAX_HEADER_SIZE) and slow clients (HEADERS_TIMEOUT_MS), applied as index.ts applies them.
 */
import { createServer, type Server } from "node:http";
import { connect } from "node:net";
import request from "supertest";
import { httpServerSettings, loadEnv } from "@serp/api/env";
import { startStack, type Stack } from "../support/stack.js";

describe("request size and slow clients", () => {
  let stack: Stack;
  let server: Server;
  let port: number;
  beforeAll(async () => {
    stack = await startStack({ workerQueues: [], env: { BODY_LIMIT: "1kb", MAX_HEADER_SIZE: "4096", HEADERS_TIMEOUT_MS: "1000" } });
    const http = httpServerSettings(stack.api.ctx.env);
    server = createServer({ maxHeaderSize: http.maxHeaderSize, connectionsCheckingInterval: http.connectionsCheckingInterval }, stack.api.app);
    server.headersTimeout = http.headersTimeout;
    server.requestTimeout = http.requestTimeout;
    server.keepAliveTimeout = http.keepAliveTimeout;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await stack.close();
  });

  test("the settings have the documented defaults", async () => {
    const env = loadEnv({});
    expect(httpServerSettings(env)).toEqual({
      maxHeaderSize: 16_384, connectionsCheckingInterval: 1_000, headersTimeout: 15_000, requestTimeout: 70_000, keepAliveTimeout: 5_000,
    });
    expect(env).toMatchObject({ BODY_LIMIT: "64kb", RATE_LIMIT_PER_MINUTE: 600, MAX_JOBS_IN_FLIGHT: 100 });
    expect(() => loadEnv({ BODY_LIMIT: "lots" })).toThrow(/BODY_LIMIT/);
    expect(() => loadEnv({ RATE_LIMIT_PER_MINUTE: "-1" })).toThrow(/RATE_LIMIT_PER_MINUTE/);
  });

  test("a body over BODY_LIMIT is refused with 413 payload_too_large", async () => {
    const { auth } = await stack.account(5);
    const body = { endpoint: "web-news", params: { query: "x".repeat(400) }, pad: "y".repeat(1200) };
    const res = await request(`http://127.0.0.1:${port}`).post("/v1/jobs").set("Authorization", auth).send(body);
    expect(res.status).toBe(413);
    expect(res.body.error.code).toBe("payload_too_large");
  });

  test("headers over MAX_HEADER_SIZE are refused with 431 before any route runs", async () => {
    const res = await request(`http://127.0.0.1:${port}`).get("/healthz").set("X-Padding", "z".repeat(8_000));
    expect(res.status).toBe(431);
  });

  test("a client that does not finish its headers within HEADERS_TIMEOUT_MS is answered 408 and cut off", async () => {
    const started = Date.now();
    const reply = await new Promise<string>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\nX-Slow: "));
      let data = "";
      socket.on("data", (chunk) => (data += chunk.toString()));
      socket.on("close", () => resolve(data));
      socket.on("error", reject);
      setTimeout(() => reject(new Error("the server kept a stalled client for 6 s")), 6_000).unref();
    });
    expect(reply).toMatch(/^HTTP\/1\.1 408/);
    expect(Date.now() - started).toBeLessThan(3_500);
  }, 15_000);
});
