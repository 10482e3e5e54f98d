/**
 * Each of the eight endpoints completes through the API, a queue and a real worker against the
 * replay upstream serving captured pages, and is billed by the credit calculator.
 */
import request from "supertest";
import { fixturesAvailable, startStack, type Stack } from "../support/stack.js";

const d = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) console.warn("e2e: captured pages not found; set SERP_FIXTURES_DIR. Skipping.");

const PRODUCT = "13239497633151178800";

/** endpoint, params, the block that must be non-empty, and a field check on its first item. */
const CASES: [string, Record<string, unknown>, string, (first: Record<string, unknown>) => void][] = [
  ["web-search", { query: "coffee" }, "organic_results", (f) => expect(f).toMatchObject({ position: 1, title: expect.any(String), link: expect.stringMatching(/^https?:\/\//) })],
  ["web-news", { query: "schloss johannisberg" }, "news_results", (f) => expect(Object.keys(f).sort()).toEqual(expect.arrayContaining(["date", "link", "position", "snippet", "source", "title"]))],
  ["web-images", { query: "初音ミク" }, "images_results", (f) => expect(f).toMatchObject({ position: 1 })],
  ["web-local", { query: "coffee" }, "local_results", (f) => expect(f).toMatchObject({ position: 1, title: expect.any(String) })],
  ["web-shopping-search", { query: "889894929969", country: "br", language: "pt" }, "shopping_results", (f) => expect(f).toMatchObject({ title: expect.any(String), extracted_price: expect.any(Number) })],
  ["web-shopping-product", { product_id: PRODUCT, country: "br" }, "sellers", (f) => expect(f).toMatchObject({ name: expect.any(String), extracted_base_price: expect.any(Number) })],
  ["web-shopping-product-info", { product_id: PRODUCT, country: "br" }, "product_results", (f) => expect(f).toMatchObject({ title: expect.any(String) })],
  ["web-autocomplete", { query: "cheesecake" }, "suggestions", (f) => expect(f).toMatchObject({ value: expect.stringContaining("cheesecake") })],
];

d("every endpoint end to end", () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({});
  });
  afterAll(() => stack.close());

  test.each(CASES)("%s completes with its blocks and is billed", async (endpoint, params, block, checkFirst) => {
    const { auth, accountId } = await stack.account(10);
    const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint, params, queue: "live" });
    expect(res.status).toBe(200);
    expect(res.body.job).toMatchObject({ endpoint, status: "completed", error: null });
    const result = res.body.result;
    expect(result.search_parameters.engine).toBe(endpoint.replaceAll("-", "_"));
    const value = result[block];
    const first = Array.isArray(value) ? value[0] : value;
    expect(first).toBeTruthy();
    checkFirst(first);
    const expected = endpoint === "web-shopping-product" ? Math.max(1, Math.ceil(value.length / 10)) : 1;
    expect(res.body.job.credits).toBe(expected);
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 10 - expected, reserved: 0 });
  });

  test("the sellers endpoint is billed 1 credit per 10 sellers (16 sellers → 2 credits)", async () => {
    const { auth } = await stack.account(10);
    const res = await request(stack.api.app)
      .post("/v1/jobs")
      .set("Authorization", auth)
      .send({ endpoint: "web-shopping-product", params: { product_id: PRODUCT }, queue: "live" });
    expect(res.body.result.sellers).toHaveLength(16);
    expect(res.body.job.credits).toBe(2);
  });

  test.each([
    ["web-search", "organic_results"],
    ["web-images", "images_results"],
    ["web-news", "news_results"],
    ["web-shopping-search", "shopping_results"],
  ])("%s for a query nothing was captured for completes with no results, never another query's page", async (endpoint, block) => {
    const { auth } = await stack.account(10);
    const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint, params: { query: "zzqx nothing captured" }, queue: "live" });
    expect(res.status).toBe(200);
    expect(res.body.job).toMatchObject({ status: "completed", error: null });
    expect(res.body.result[block] ?? []).toEqual([]);
  });

  test.each(["web-shopping-product", "web-shopping-product-info"])("%s for a product nothing was captured for fails at 0 credits", async (endpoint) => {
    const { auth, accountId } = await stack.account(10);
    const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint, params: { product_id: "123" }, queue: "live" });
    expect(res.status).toBe(200);
    expect(res.body.job).toMatchObject({ status: "failed", credits: 0 });
    expect(res.body.result).toBeNull();
    expect(await stack.api.accounts.get(accountId)).toMatchObject({ balance: 10, reserved: 0 });
  });

  test("the worker asked the upstream's own URL forms", () => {
    const paths = stack.replay.requests().map((r) => `${r.path}?${new URLSearchParams(r.query as Record<string, string>)}`);
    expect(paths.some((p) => p.startsWith("/search?") && p.includes("q=coffee"))).toBe(true);
    expect(paths.some((p) => p.startsWith("/complete/search?"))).toBe(true);
    expect(paths.some((p) => p.includes(`/shopping/product/${PRODUCT}`))).toBe(true);
  });
});
