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
  expect(withDefaults(req)).toEqual({ query: "x", location: "Kabul,Kabul,Afghanistan", country: "us", language: "en", page: 1, layout: "full" });
});

test("results carry search_parameters then the blocks", () => {
  const req = jobRequestSchema.parse({ endpoint: "web-shopping-product", params: { product_id: "42" } });
  const r = buildResult("web-shopping-product", withDefaults(req), { sellers: [] });
  expect(r).toEqual({
    search_parameters: { engine: "web_shopping_product", query: "42", country: "us", language: "en", page: 1, product_id: "42" },
    sellers: [],
  });
});

test("the page layout: full by default, light or any when asked, nothing else; the result says the layout it came from", () => {
  const parse = (params: object) => jobRequestSchema.safeParse({ endpoint: "web-search", params: { query: "x", ...params } });
  expect(withDefaults(parse({ layout: "light" }).data!).layout).toBe("light");
  expect(withDefaults(parse({ layout: "any" }).data!).layout).toBe("any");
  expect(parse({ layout: "lite" }).error?.issues[0]?.message).toBe("must be full, light or any");
  // Kinds with no light page take no layout.
  expect(jobRequestSchema.safeParse({ endpoint: "web-local", params: { query: "x", layout: "full" } }).success).toBe(false);
  const r = buildResult("web-search", withDefaults(parse({ layout: "any" }).data!), { organic_results: [] }, "light");
  expect(r).toEqual({
    search_parameters: { engine: "web_search", query: "x", country: "us", language: "en", page: 1, device: "desktop", layout: "any" },
    layout: "light",
    organic_results: [],
  });
});

describe("each kind's own rules (packages/shared/src/kinds)", () => {
  const defaultsOf = (endpoint: string, params: object) => withDefaults(jobRequestSchema.parse({ endpoint, params }));

  test("web-search defaults page 1 and the desktop device, after the params given", () => {
    expect(Object.entries(defaultsOf("web-search", { query: "x" }))).toEqual([
      ["query", "x"], ["country", "us"], ["language", "en"], ["page", 1], ["device", "desktop"], ["layout", "full"],
    ]);
    expect(defaultsOf("web-search", { query: "x", page: 3, device: "mobile" })).toMatchObject({ page: 3, device: "mobile" });
  });

  test("paged kinds default page 1; the others take no page", () => {
    for (const endpoint of ["web-local", "web-shopping-search"]) {
      expect(defaultsOf(endpoint, { query: "x" })).toEqual({ query: "x", country: "us", language: "en", page: 1 });
    }
    // News and images also take the page layout, full unless asked (docs/LAYOUTS.md).
    for (const endpoint of ["web-news", "web-images"]) {
      expect(defaultsOf(endpoint, { query: "x" })).toEqual({ query: "x", country: "us", language: "en", page: 1, layout: "full" });
    }
    expect(defaultsOf("web-autocomplete", { query: "x" })).toEqual({ query: "x", country: "us", language: "en" });
    expect(defaultsOf("web-shopping-product-info", { product_id: "1" })).toEqual({ product_id: "1", country: "us", language: "en" });
  });

  test.each([
    ["web-search", "organic_results", 11],
    ["web-news", "news_results", 11],
    ["web-local", "local_results", 21],
  ] as const)("page 2 of %s continues the positions of %s at %i", (endpoint, list, first) => {
    const params = withDefaults(jobRequestSchema.parse({ endpoint, params: { query: "x", page: 2 } }));
    const blocks = { [list]: [{ position: 1, title: "a" }] } as never;
    expect(buildResult(endpoint, params, blocks)[list]).toEqual([{ position: first, title: "a" }]);
  });

  test("page 2 of web-images keeps the positions the page gives", () => {
    const params = withDefaults(jobRequestSchema.parse({ endpoint: "web-images", params: { query: "x", page: 2 } }));
    expect(buildResult("web-images", params, { images_results: [{ position: 1 }] }).images_results).toEqual([{ position: 1 }]);
  });
});
