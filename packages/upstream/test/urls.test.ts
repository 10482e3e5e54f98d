import type { Endpoint, JobParams } from "@serp/shared";
import type { Profile, UrlForm } from "../src/profiles.js";
import { buildUrl, DEFAULT_BASE_URL } from "../src/urls.js";

const form = (f: UrlForm): Pick<Profile, "form"> => ({ form: f });
const params = (p: Partial<JobParams> = {}): JobParams => ({ country: "us", language: "en", ...p });
const query = (url: string) => Object.fromEntries(new URL(url).searchParams);

describe("buildUrl: web search", () => {
  test("asks the real host by default with q, hl and gl", () => {
    const url = buildUrl("web-search", params({ query: "coffee beans", page: 1 }), form("search"));
    expect(url).toBe(`${DEFAULT_BASE_URL}/search?q=coffee+beans&hl=en&gl=us`);
  });

  test("turns page into start in steps of 10", () => {
    expect(query(buildUrl("web-search", params({ query: "q", page: 3 }), form("search"))).start).toBe("20");
    expect(query(buildUrl("web-news", params({ query: "q", page: 2 }), form("search"))).start).toBe("10");
  });

  test("encodes a location's uule with its plus sign escaped, and sends a raw uule as is", () => {
    const url = buildUrl("web-search", params({ query: "pizza", location: "Austin, Texas, United States" }), form("search"));
    expect(url).toContain("uule=w%2BCAIQICIaQXVzdGluLFRleGFzLFVuaXRlZCBTdGF0ZXM");
    expect(query(url).uule).toBe("w+CAIQICIaQXVzdGluLFRleGFzLFVuaXRlZCBTdGF0ZXM");

    const raw = buildUrl("web-search", params({ query: "pizza", uule: "w+CAIQICINVW5pdGVkIFN0YXRlcw", location: "Ignored,Place" }), form("search"));
    expect(query(raw).uule).toBe("w+CAIQICINVW5pdGVkIFN0YXRlcw");
  });

  test("uses the location service's encoder when given one", () => {
    const url = buildUrl("web-search", params({ query: "q", location: "austin,texas,united states" }), form("search"), {
      uuleFor: () => "w+FROM-SERVICE",
    });
    expect(query(url).uule).toBe("w+FROM-SERVICE");
  });

  test("basic-HTML form keeps /search and asks for UTF-8; the feature-phone form goes to /wml/search", () => {
    const basic = buildUrl("web-search", params({ query: "q" }), form("search-basic"));
    expect(new URL(basic).pathname).toBe("/search");
    expect(query(basic)).toMatchObject({ q: "q", ie: "UTF-8", oe: "UTF-8" });
    const wml = buildUrl("web-search", params({ query: "q", page: 2 }), form("wml"));
    expect(new URL(wml).pathname).toBe("/wml/search");
    expect(query(wml)).toMatchObject({ q: "q", hl: "en", gl: "us", start: "10", ie: "utf8", oe: "utf8", sca_esv: "1" });
  });
});

describe("buildUrl: a configured base takes every request, path and query kept", () => {
  const base = "http://127.0.0.1:4010";
  test.each<[Endpoint, UrlForm, string]>([
    ["web-search", "search", "/search?q=coffee&hl=de&gl=de"],
    ["web-search", "wml", "/wml/search?q=coffee&hl=de&gl=de&ie=utf8&oe=utf8&sca_esv=1"],
    ["web-autocomplete", "complete-chrome", "/complete/search?client=chrome&q=coffee&hl=de&gl=de"],
    ["web-shopping-product", "product-legacy", "/shopping/product/123/online?hl=de&gl=de"],
  ])("%s (%s)", (endpoint, f, pathAndQuery) => {
    const p = params({ query: "coffee", product_id: "123", country: "de", language: "de" });
    expect(buildUrl(endpoint, p, form(f), { baseUrl: base })).toBe(base + pathAndQuery);
    expect(buildUrl(endpoint, p, form(f), { baseUrl: `${base}/` })).toBe(base + pathAndQuery);
  });

  test("a base with a path prefixes it", () => {
    expect(buildUrl("web-search", params({ query: "q" }), form("search"), { baseUrl: "http://mirror.test/google" })).toBe(
      "http://mirror.test/google/search?q=q&hl=en&gl=us",
    );
  });
});

describe("buildUrl: kinds", () => {
  const q = params({ query: "boots", page: 1 });
  test.each<[Endpoint, UrlForm, Record<string, string>]>([
    ["web-news", "search", { tbm: "nws" }],
    ["web-news", "wml", { tbm: "nws" }],
    ["web-images", "search", { udm: "2" }],
    ["web-images", "search-basic", { tbm: "isch" }],
    ["web-images", "wml", { tbm: "isch" }],
    ["web-local", "search", { tbm: "lcl" }],
    ["web-shopping-search", "search", { udm: "28" }],
    ["web-shopping-search", "search-basic", { tbm: "shop" }],
  ])("%s in the %s form", (endpoint, f, expected) => {
    expect(query(buildUrl(endpoint, q, form(f)))).toMatchObject({ q: "boots", ...expected });
  });

  test("web search sends no kind switch", () => {
    const got = query(buildUrl("web-search", q, form("search")));
    expect(got.tbm).toBeUndefined();
    expect(got.udm).toBeUndefined();
  });

  test("the local list pages in steps of 20", () => {
    expect(query(buildUrl("web-local", params({ query: "plumber", page: 3 }), form("search"))).start).toBe("40");
  });
});

describe("buildUrl: products and suggestions", () => {
  const p = params({ product_id: "4887235756540435899", country: "gb", language: "en" });

  test("the product panel in its current form", () => {
    const url = buildUrl("web-shopping-product-info", p, form("product-panel"));
    expect(url).toBe(
      "https://www.google.com/search?ibp=oshop&q=4887235756540435899&prds=catalogid:4887235756540435899,pvt:hg&hl=en&gl=gb",
    );
    expect(buildUrl("web-shopping-product", p, form("product-panel"))).toBe(url);
  });

  test("the legacy product pages: info and sellers", () => {
    expect(buildUrl("web-shopping-product-info", p, form("product-legacy"))).toBe(
      "https://www.google.com/shopping/product/4887235756540435899?hl=en&gl=gb",
    );
    expect(buildUrl("web-shopping-product", p, form("product-legacy"))).toBe(
      "https://www.google.com/shopping/product/4887235756540435899/online?hl=en&gl=gb",
    );
  });

  test("suggestions per client", () => {
    const s = params({ query: "caf\u00e9 au", language: "fr", country: "fr" });
    expect(buildUrl("web-autocomplete", s, form("complete-chrome"))).toBe(
      "https://www.google.com/complete/search?client=chrome&q=caf%C3%A9+au&hl=fr&gl=fr",
    );
    expect(query(buildUrl("web-autocomplete", s, form("complete-firefox"))).client).toBe("firefox");
    expect(query(buildUrl("web-autocomplete", s, form("complete-toolbar")))).toMatchObject({ output: "toolbar", q: "café au" });
  });
});
