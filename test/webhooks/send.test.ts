/** One delivery attempt (send) and the retry schedule, without the rest of the service. */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { WEBHOOK_RETRY_DELAYS_MS } from "@serp/store";
import { createTargetAgents, parseRetryAfter, retryDelayMs, send } from "../../apps/worker/src/webhooks/index.js";

describe("send", () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    // Never answers: reads the request and leaves it hanging.
    server = createServer((req) => req.resume());
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  test("a receiver that does not answer in time is a failed attempt that says so", async () => {
    const started = Date.now();
    const r = await send(new URL(`http://127.0.0.1:${port}/slow`), "{}", {}, createTargetAgents(true), 300);
    expect(r).toMatchObject({ kind: "error", refused: false, error: "timed out after 300 ms without a response" });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  test("only http and https are delivered to", async () => {
    const r = await send(new URL("ftp://example.com/hook"), "{}", {}, createTargetAgents(true), 300);
    expect(r).toMatchObject({ kind: "error", refused: true, error: expect.stringMatching(/only http and https/) });
  });
});

describe("retry schedule", () => {
  test("the default schedule is DECISIONS.md's, about a day over 10 attempts", () => {
    expect(WEBHOOK_RETRY_DELAYS_MS).toEqual([5e3, 30e3, 120e3, 600e3, 1_800e3, 3_600e3, 10_800e3, 21_600e3, 43_200e3]);
    const total = WEBHOOK_RETRY_DELAYS_MS.reduce((a, b) => a + b, 0) / 3_600_000;
    expect(total).toBeGreaterThan(20);
    expect(total).toBeLessThan(26);
  });

  test("the n-th failure waits the n-th delay", () => {
    expect([1, 2, 3, 9].map((n) => retryDelayMs(WEBHOOK_RETRY_DELAYS_MS, n, null))).toEqual([5e3, 30e3, 120e3, 43_200e3]);
  });

  test("Retry-After lengthens a delay up to the schedule's longest, and never shortens one", () => {
    expect(retryDelayMs(WEBHOOK_RETRY_DELAYS_MS, 1, 60_000)).toBe(60_000);
    expect(retryDelayMs(WEBHOOK_RETRY_DELAYS_MS, 1, 1_000)).toBe(5_000);
    expect(retryDelayMs(WEBHOOK_RETRY_DELAYS_MS, 1, 7 * 86_400_000)).toBe(43_200e3);
  });

  test("Retry-After is read as seconds or an HTTP date", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("120", now)).toBe(120_000);
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:01:00 GMT", now)).toBe(60_000);
    expect(parseRetryAfter("soon", now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });
});
