/**
 * The operators' queue dashboard at /admin/queues and the upstream status at /admin/upstream:
 * absent without ADMIN_TOKEN (404), and behind it when set (401 without or with a wrong token, 200
 * with the right one, by Bearer or basic auth).
 */
import request from "supertest";
import { keySpace, UpstreamStatusBoard } from "@serp/store";
import { loadEnv } from "@serp/api/env";
import { startStack, type Stack } from "../support/stack.js";

const TOKEN = "adm_0123456789abcdef0123456789";
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;

/** Builds a stack whose API settings hold ADMIN_TOKEN=`token` (read with the rest of the API's settings). */
function stackWithAdminToken(token: string | undefined): Promise<Stack> {
  return startStack({ workerQueues: [], ...(token === undefined ? {} : { env: { ADMIN_TOKEN: token } }) });
}

describe("queue dashboard without ADMIN_TOKEN", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await stackWithAdminToken(undefined);
  });
  afterAll(() => stack.close());

  test.each(["/admin/queues", "/admin/queues/api/queues", "/admin/upstream"])("%s answers 404, even with a token", async (path) => {
    const res = await request(stack.api.app).get(path).set("Authorization", `Bearer ${TOKEN}`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe("not_found");
  });
});

describe("queue dashboard with ADMIN_TOKEN", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await stackWithAdminToken(TOKEN);
  });
  afterAll(() => stack.close());

  test.each([
    ["no credentials", undefined],
    ["a wrong bearer token", "Bearer adm_wrong_wrong_wrong_wrong_wrong"],
    ["the token with a suffix", `Bearer ${TOKEN}x`],
    ["a wrong basic password", basic("admin", "not-the-token-at-all")],
    ["the token as basic user name", basic(TOKEN, "")],
    ["an API key", "Bearer sk_live_00000000000000000000000000000000"],
  ])("answers 401 with %s, asking browsers for basic auth", async (_why, header) => {
    let r = request(stack.api.app).get("/admin/queues");
    if (header) r = r.set("Authorization", header);
    const res = await r;
    expect(res.status).toBe(401);
    expect(res.body.error.code).toBe("unauthorized");
    expect(res.headers["www-authenticate"]).toMatch(/^Basic realm=/);
  });

  test("answers 200 with the dashboard page for the right Bearer token", async () => {
    const res = await request(stack.api.app).get("/admin/queues").set("Authorization", `Bearer ${TOKEN}`);
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/text\/html/);
    expect(res.text).toContain("/admin/queues");
  });

  test("answers 200 for the right token as basic auth password, and lists the three queues read-only", async () => {
    const res = await request(stack.api.app).get("/admin/queues/api/queues").set("Authorization", basic("ops", TOKEN));
    expect(res.status).toBe(200);
    const queues = (res.body.queues as { name: string; readOnlyMode: boolean }[]).map((q) => [q.name, q.readOnlyMode]);
    expect(queues.sort()).toEqual([["fast", true], ["live", true], ["regular", true]]);
  });

  test("/admin/upstream lists what the workers publish about their profiles, behind the same token", async () => {
    const board = new UpstreamStatusBoard(stack.redis, keySpace(stack.prefix));
    const breaker = { key: "wml-chrome", profile: "wml-chrome", state: "closed", lastOutcome: "results", outcomes: { results: 3 }, successRate: 1 };
    await board.publish("host-1", { tableVersion: "2026-11", breakers: [breaker] }, 30);
    expect((await request(stack.api.app).get("/admin/upstream")).status).toBe(401);
    const res = await request(stack.api.app).get("/admin/upstream").set("Authorization", `Bearer ${TOKEN}`);
    expect(res.status).toBe(200);
    expect(res.body.workers).toEqual([{ instance: "host-1", at: expect.any(String), status: { tableVersion: "2026-11", breakers: [breaker] } }]);
  });

  test("a read-only dashboard refuses to empty a queue", async () => {
    const res = await request(stack.api.app).put("/admin/queues/api/queues/fast/empty").set("Authorization", `Bearer ${TOKEN}`);
    expect(res.status).toBe(405);
  });
});

describe("ADMIN_TOKEN setting", () => {
  test("a token shorter than 16 characters is refused (the API stops at boot)", () => {
    expect(() => loadEnv({ ADMIN_TOKEN: "short" })).toThrow(/ADMIN_TOKEN must be at least 16 characters/);
  });

  test("an empty or blank token counts as unset", () => {
    expect(loadEnv({ ADMIN_TOKEN: "" }).ADMIN_TOKEN).toBeUndefined();
    expect(loadEnv({ ADMIN_TOKEN: "   " }).ADMIN_TOKEN).toBeUndefined();
    expect(loadEnv({}).ADMIN_TOKEN).toBeUndefined();
    expect(loadEnv({ ADMIN_TOKEN: TOKEN }).ADMIN_TOKEN).toBe(TOKEN);
  });
});
