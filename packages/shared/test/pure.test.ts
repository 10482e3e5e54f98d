import {
  JOB_ID_PATTERN, buildResult, countryOfLocationName, creditsFor, jobRequestSchema, newApiKey, newJobId, withDefaults,
} from "../src/index.js";

describe("credit calculator", () => {
  test.each([
    ["web-search", "completed", undefined, 1],
    ["web-search", "failed", undefined, 0],
    ["web-shopping-product", "completed", { sellers: [] }, 1],
    ["web-shopping-product", "completed", { sellers: Array(10).fill({}) }, 1],
    ["web-shopping-product", "completed", { sellers: Array(11).fill({}) }, 2],
    ["web-shopping-product", "completed", { sellers: Array(16).fill({}) }, 2],
    ["web-shopping-product", "completed", { sellers: Array(30).fill({}) }, 3],
    ["web-shopping-product", "failed", { sellers: Array(30).fill({}) }, 0],
    ["web-autocomplete", "completed", { suggestions: [] }, 1],
  ] as const)("%s %s with %j costs %i", (endpoint, status, result, credits) => {
    expect(creditsFor(endpoint, status, result)).toBe(credits);
  });
});

test("job ids are job_ + a time-sortable ULID without colons", async () => {
  const a = newJobId();
  await new Promise((r) => setTimeout(r, 2));
  const b = newJobId();
  expect(a).toMatch(JOB_ID_PATTERN);
  expect(a.includes(":")).toBe(false);
  expect(a < b).toBe(true);
});

test("API keys are sk_live_ + 32 base62 characters, all different", () => {
  const keys = new Set(Array.from({ length: 1000 }, newApiKey));
  expect(keys.size).toBe(1000);
  for (const k of keys) expect(k).toMatch(/^sk_live_[0-9A-Za-z]{32}$/);
});

test("a location's country comes from its last segment", () => {
  expect(countryOfLocationName("Austin,Texas,United States")).toBe("us");
  expect(countryOfLocationName("London,England,United Kingdom")).toBe("gb");
  expect(countryOfLocationName("Kabul,Kabul,Afghanistan")).toBeUndefined();
});

test("defaults: unsupported location countries fall back to us", () => {
  const req = jobRequestSchema.parse({ endpoint: "web-news", params: { query: "x", location: "Kabul,Kabul,Afghanistan" } });
  expect(withDefaults(req)).toEqual({ query: "x", location: "Kabul,Kabul,Afghanistan", country: "us", language: "en", page: 1 });
});

test("results carry search_parameters then the blocks", () => {
  const req = jobRequestSchema.parse({ endpoint: "web-shopping-product", params: { product_id: "42" } });
  const r = buildResult("web-shopping-product", withDefaults(req), { sellers: [] });
  expect(r).toEqual({
    search_parameters: { engine: "web_shopping_product", query: "42", country: "us", language: "en", page: 1, product_id: "42" },
    sellers: [],
  });
});
