/**
 * The parameter rules of GET /search.json (SPEC §4.3) as a pure function: query → search → the
 * live job it runs, with and without a location list. The HTTP tests prove the same rules end to end.
 */
import { ApiError } from "@serp/shared";
import { Locations } from "@serp/upstream";
import { compatSearchQuery, jobRequest, parseSearch, searchOfJob, searchParameters, linkParams } from "../../apps/api/src/compat/params.js";
import { sortedQuery, paginationBlocks } from "../../apps/api/src/compat/links.js";
import { GEOTARGETS_DIR, geotargetsAvailable } from "../../packages/upstream/test/fixtures-dir.js";

const noList = Locations.empty();
const list = Locations.fromRows([
  { name: "United States", canonical_name: "United States", country_code: "US", target_type: "Country" },
  { name: "Ukraine", canonical_name: "Ukraine", country_code: "UA", target_type: "Country" },
  { name: "Austin", canonical_name: "Austin,Texas,United States", country_code: "US", target_type: "City" },
  { name: "Toronto", canonical_name: "Toronto,Ontario,Canada", country_code: "CA", target_type: "City" },
  { name: "London", canonical_name: "London,England,United Kingdom", country_code: "GB", target_type: "City" },
  { name: "Kyiv", canonical_name: "Kyiv,Kyiv city,Ukraine", country_code: "UA", target_type: "City" },
]);

/** What the error for an unknown engine lists. */
const SUPPORTED = "Supported engines: web, web_light, web_shopping, web_news, web_images, web_local, web_autocomplete, google, google_light, google_news, google_images, google_shopping, google_local, google_autocomplete, web_product, google_product.";

function rejects(query: Record<string, unknown>, locations = noList): string {
  try {
    parseSearch(query, locations);
  } catch (err) {
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(400);
    return (err as ApiError).message;
  }
  throw new Error(`accepted ${JSON.stringify(query)}`);
}

describe("compat parameters", () => {
  test.each([
    ["missing q", {}, "Missing query `q` parameter."],
    ["empty q", { q: "" }, "Missing query `q` parameter."],
    ["blank q", { q: "   " }, "Missing query `q` parameter."],
    ["q over 500 characters", { q: "a".repeat(501) }, "`q` parameter must be at most 500 characters."],
    ["q of only a NUL", { q: "\u0000" }, "`q` parameter must not contain control characters."],
    ["q of only control characters", { q: "\u0001\u001b\u007f" }, "`q` parameter must not contain control characters."],
    ["q of whitespace and control characters", { q: " \t\u0000 " }, "`q` parameter must not contain control characters."],
    ["q with a NUL inside", { q: "coffee\u0000shop" }, "`q` parameter must not contain control characters."],
    ["location with a control character", { q: "x", location: "Austin\u0007" }, "`location` parameter must not contain control characters."],
    ["repeated q", { q: ["a", "b"] }, "`q` parameter must be given once."],
    ["unknown engine", { q: "x", engine: "bing" }, `Unsupported \`bing\` search engine. ${SUPPORTED}`],
    ["an alias in another case", { q: "x", engine: "Google" }, `Unsupported \`Google\` search engine. ${SUPPORTED}`],
    ["bad device", { q: "x", device: "tablet" }, "Unsupported `tablet` device."],
    ["bad gl", { q: "x", gl: "xx" }, "Unsupported `xx` country - gl parameter."],
    ["bad hl", { q: "x", hl: "english" }, "Unsupported `english` interface language - hl parameter."],
    ["three-letter hl", { q: "x", hl: "fil" }, "Unsupported `fil` interface language - hl parameter."],
    ["start not a number", { q: "x", start: "ten" }, "`start` parameter must be an integer from 0 to 180."],
    ["negative start", { q: "x", start: "-10" }, "`start` parameter must be an integer from 0 to 180."],
    ["start over 180", { q: "x", start: "200" }, "`start` parameter must be an integer from 0 to 180."],
    ["start off the web step", { q: "x", start: "5" }, "`start` parameter must be a multiple of 10 from 0 to 90 for engine `web`."],
    ["start past web page 10", { q: "x", start: "100" }, "`start` parameter must be a multiple of 10 from 0 to 90 for engine `web`."],
    ["start off the news step", { q: "x", engine: "web_news", start: "15" }, "`start` parameter must be a multiple of 10 from 0 to 90 for engine `web_news`."],
    ["start off the local step", { q: "x", engine: "web_local", start: "30" }, "`start` parameter must be a multiple of 20 from 0 to 180 for engine `web_local`."],
    ["start off the local step via tbm", { q: "x", tbm: "lcl", start: "10" }, "`start` parameter must be a multiple of 20 from 0 to 180 for engine `web` with tbm=lcl."],
    ["video results", { q: "x", tbm: "vid" }, "Video results (`tbm=vid`) are not supported - tbm parameter (use nws (news), isch (images), shop (shopping) or lcl (local))."],
    ["video results on the google alias", { q: "x", engine: "google", tbm: "vid" }, "Video results (`tbm=vid`) are not supported - tbm parameter (use nws (news), isch (images), shop (shopping) or lcl (local))."],
    ["unsupported tbm", { q: "x", tbm: "pts" }, "Unsupported `pts` value - tbm parameter (use nws (news), isch (images), shop (shopping) or lcl (local))."],
    ["tbm naming an Object member", { q: "x", tbm: "toString" }, "Unsupported `toString` value - tbm parameter (use nws (news), isch (images), shop (shopping) or lcl (local))."],
    ["location with uule", { q: "x", location: "Austin", uule: "w+CAIQICIaQXVzdGlu" }, "`location` and `uule` parameters can't be used together."],
    ["malformed uule", { q: "x", uule: "nope" }, "Unsupported `nope` value - uule parameter."],
    ["one-letter location", { q: "x", location: "A" }, "`location` parameter must be 2 to 200 characters long."],
  ])("refuses %s", (_what, query, message) => {
    expect(rejects(query)).toBe(message);
  });

  // The schema reports every rule a request breaks; the answer is the first in the reference's order,
  // which is not the order the parameters are documented in.
  test.each([
    ["the engine before a repeated q", { q: ["a", "b"], engine: "bing" }, `Unsupported \`bing\` search engine. ${SUPPORTED}`],
    ["a missing q before gl", { gl: "xx" }, "Missing query `q` parameter."],
    ["a repeated q before its absence", { q: ["", ""] }, "`q` parameter must be given once."],
    ["tbm before gl", { q: "x", tbm: "pts", gl: "xx" }, "Unsupported `pts` value - tbm parameter (use nws (news), isch (images), shop (shopping) or lcl (local))."],
    ["gl before hl", { q: "x", hl: "english", gl: "xx" }, "Unsupported `xx` country - gl parameter."],
    ["hl before device", { q: "x", device: "tablet", hl: "english" }, "Unsupported `english` interface language - hl parameter."],
    ["a repeated location before a repeated uule", { q: "x", location: ["a", "b"], uule: ["c", "d"] }, "`location` parameter must be given once."],
    ["a repeated uule before the pair", { q: "x", location: "A", uule: ["c", "d"] }, "`uule` parameter must be given once."],
    ["the pair before either's value", { q: "x", location: "A", uule: "nope" }, "`location` and `uule` parameters can't be used together."],
    ["a blank location counts in the pair", { q: "x", location: "  ", uule: "w+CAIQICIaQXVzdGlu" }, "`location` and `uule` parameters can't be used together."],
    ["a blank location is too short", { q: "x", location: "  " }, "`location` parameter must be 2 to 200 characters long."],
    ["uule before start and the flags", { q: "x", uule: "nope", start: "5", async: "x" }, "Unsupported `nope` value - uule parameter."],
    ["the location before start", { q: "x", location: "x\u0007y", start: "-10" }, "`location` parameter must not contain control characters."],
    ["start before async", { q: "x", start: "5", async: "maybe" }, "`start` parameter must be a multiple of 10 from 0 to 90 for engine `web`."],
    ["async before no_cache", { q: "x", async: "maybe", no_cache: "x" }, "`async` parameter must be true or false."],
    ["no_cache before the pair", { q: "x", async: "1", no_cache: "x" }, "`no_cache` parameter must be true or false."],
    ["async with no_cache", { q: "x", async: "TRUE", no_cache: "1" }, "`async` and `no_cache` parameters can't be used together."],
    ["a missing product_id before the rest", { engine: "web_product", offers: "1", specs: "1", gl: "xx" }, "Missing `product_id` parameter."],
    ["offers before specs", { engine: "web_product", product_id: "1", specs: "yes", offers: "maybe" }, "`offers` parameter must be true or false."],
    ["offers with specs before gl", { engine: "web_product", product_id: "1", offers: "1", specs: "True", gl: "xx" }, "`offers` and `specs` parameters can't be used together: ask for the sellers (offers=1) and the details (specs=1) in two searches."],
  ])("answers the first broken rule: %s", (_what, query, message) => {
    expect(rejects(query)).toBe(message);
  });

  test("with a location list, the look-up refuses before start and the flags", () => {
    expect(rejects({ q: "x", location: "Nowhere", start: "5", async: "x" }, list)).toBe("Unsupported `Nowhere` location - location parameter.");
    expect(rejects({ q: "x", location: "Austin, Texas", start: "5" }, list)).toBe("`start` parameter must be a multiple of 10 from 0 to 90 for engine `web`.");
  });

  test("the schema the routes declare accepts what the endpoint accepts, read as the endpoint reads it", () => {
    const sent = { q: " x ", gl: "US", start: "010", async: "True", device: "", api_key: ["k1", "k2"], output: "bogus", num: "100", tbm: "" };
    expect(compatSearchQuery.parse(sent)).toEqual({ engine: "web", q: "x", gl: "us", start: 10, async: "true" });
    // What does not apply to the engine is not read at all.
    expect(compatSearchQuery.parse({ engine: "google_product", product_id: "1", offers: "1", q: ["a", "b"], start: "ten", device: "toaster" })).toEqual({
      engine: "google_product", product_id: "1", offers: "1",
    });
    expect(compatSearchQuery.safeParse({ q: "x", engine: "web_images", start: "ten", tbm: "vid", device: "toaster" }).success).toBe(true);
  });

  test("a huge value is quoted back cut short", () => {
    expect(rejects({ q: "x", engine: "e".repeat(10_000) })).toBe(`Unsupported \`${"e".repeat(100)}…\` search engine. ${SUPPORTED}`);
  });

  test("defaults: engine web, gl us, hl en, device desktop, page 1, one live web-search job", () => {
    const s = parseSearch({ q: " coffee " }, noList);
    expect(searchParameters(s)).toEqual({ engine: "web", q: "coffee", hl: "en", gl: "us", device: "desktop" });
    expect(jobRequest(s)).toEqual({
      endpoint: "web-search", queue: "live", params: { query: "coffee", country: "us", language: "en", device: "desktop", page: 1 },
    });
  });

  test.each([
    ["web", "web-search"],
    ["web_news", "web-news"],
    ["web_images", "web-images"],
    ["web_local", "web-local"],
    ["web_shopping", "web-shopping-search"],
    ["web_autocomplete", "web-autocomplete"],
  ])("engine %s runs a %s job", (engine, endpoint) => {
    expect(jobRequest(parseSearch({ q: "x", engine }, noList)).endpoint).toBe(endpoint);
  });

  test.each(["web_light", "google_light"])("engine %s runs a light web-search job (layout light), takes device, not tbm, and is echoed as sent", (engine) => {
    const s = parseSearch({ q: "x", engine, device: "mobile", tbm: "nws" }, noList);
    expect(jobRequest(s)).toEqual({
      endpoint: "web-search", queue: "live", params: { query: "x", country: "us", language: "en", device: "mobile", page: 1, layout: "light" },
    });
    expect(searchParameters(s)).toEqual({ engine, q: "x", hl: "en", gl: "us", device: "mobile" });
    // engine web (and google) never asks for a layout: the job's default, the full page.
    expect(jobRequest(parseSearch({ q: "x", engine: engine.replace("_light", "") }, noList)).params).not.toHaveProperty("layout");
  });

  test("a stored light web-search job reads back as engine web_light; a full one as web", () => {
    const job = (layout?: string) => ({ endpoint: "web-search", params: { query: "x", country: "us", language: "en", page: 1, ...(layout ? { layout } : {}) } }) as never;
    expect(searchOfJob(job("light")).engine).toBe("web_light");
    expect(searchOfJob(job("full")).engine).toBe("web");
    expect(searchOfJob(job()).engine).toBe("web");
  });

  test.each([
    ["nws", "web-news"],
    ["isch", "web-images"],
    ["shop", "web-shopping-search"],
    ["lcl", "web-local"],
  ])("tbm=%s on engine web switches to a %s job and echoes engine web", (tbm, endpoint) => {
    const s = parseSearch({ q: "x", tbm }, noList);
    expect(jobRequest(s).endpoint).toBe(endpoint);
    expect(searchParameters(s)).toMatchObject({ engine: "web", tbm });
    // device belongs to engine web but only the web-search job takes it
    expect(jobRequest(s).params.device).toBeUndefined();
  });

  test("tbm, device and start are ignored where they do not apply", () => {
    const news = parseSearch({ q: "x", engine: "web_news", tbm: "isch", device: "toaster" }, noList);
    expect(jobRequest(news).endpoint).toBe("web-news");
    expect(searchParameters(news)).not.toHaveProperty("device");
    expect(searchParameters(news)).not.toHaveProperty("tbm");
    const images = parseSearch({ q: "x", engine: "web_images", start: "7" }, noList);
    expect(jobRequest(images).params).not.toHaveProperty("page");
    expect(searchParameters(images)).not.toHaveProperty("start");
    const auto = parseSearch({ q: "x", engine: "web_autocomplete", location: "Austin", uule: "bad" }, noList);
    expect(jobRequest(auto).params).toEqual({ query: "x", country: "us", language: "en" });
  });

  test("unknown and inapplicable parameters are ignored", () => {
    const s = parseSearch({ q: "x", num: "100", google_domain: "google.co.uk", safe: "active", output: "json", source: "nodejs", api_key: "k", serp_api_key: "k" }, noList);
    expect(searchParameters(s)).toEqual({ engine: "web", q: "x", hl: "en", gl: "us", device: "desktop" });
  });

  test("the reference's engine names are the same engines, echoed as sent; async runs on the fast queue", () => {
    const s = parseSearch({ q: "x", engine: "google_local", start: "20", async: "True" }, noList);
    expect(searchParameters(s)).toEqual({ engine: "google_local", q: "x", hl: "en", gl: "us", start: 20 });
    expect(jobRequest(s)).toEqual({ endpoint: "web-local", queue: "fast", params: { query: "x", country: "us", language: "en", page: 2 } });
    expect(linkParams(s, 3)).toMatchObject({ engine: "google_local", start: "40" });
    expect(parseSearch({ q: "x", engine: "google" }, noList).device).toBe("desktop");
  });

  test("the product engine runs the sellers job with offers=1, else the details job; q and location do not apply", () => {
    const offers = parseSearch({ engine: "google_product", product_id: " 123 ", offers: "1", gl: "uk", q: "ignored", location: "Austin" }, noList);
    expect(jobRequest(offers)).toEqual({ endpoint: "web-shopping-product", queue: "live", params: { product_id: "123", country: "gb", language: "en" } });
    expect(searchParameters(offers)).toEqual({ engine: "google_product", product_id: "123", hl: "en", gl: "uk", offers: "1" });
    const details = parseSearch({ engine: "web_product", product_id: "123", specs: "true", hl: "de" }, noList);
    expect(jobRequest(details)).toEqual({ endpoint: "web-shopping-product-info", queue: "live", params: { product_id: "123", country: "us", language: "de" } });
    expect(details.product).toEqual({ offers: false, specs: true, sent: { specs: "true" } });
  });

  test.each([
    ["web", "0", 1],
    ["web", "10", 2],
    ["web", "90", 10],
    ["web_news", "40", 5],
    ["web_local", "20", 2],
    ["web_local", "180", 10],
  ])("engine %s start=%s is page %d", (engine, start, page) => {
    const s = parseSearch({ q: "x", engine, start }, noList);
    expect(s.page).toBe(page);
    expect(jobRequest(s).params.page).toBe(page);
    expect(searchParameters(s).start).toBe(Number(start));
  });

  test.each([
    ["en-GB", "en"],
    ["en_us", "en"],
    ["zh-TW", "zh"],
    ["es-419", "es"],
    ["DE", "de"],
  ])("hl=%s searches in %s and is echoed as sent", (hl, language) => {
    const s = parseSearch({ q: "x", hl }, noList);
    expect(jobRequest(s).params.language).toBe(language);
    expect(searchParameters(s).hl).toBe(hl);
  });

  test("gl uk is gb for the job and echoed as sent", () => {
    const s = parseSearch({ q: "x", gl: "UK" }, noList);
    expect(jobRequest(s).params.country).toBe("gb");
    expect(searchParameters(s).gl).toBe("uk");
  });

  describe.each([
    ["without a location list", noList],
    ["with a location list", list],
  ])("location %s", (_what, locations) => {
    test.each([
      // [location, gl, location_used, country]
      ["Austin, Texas", undefined, "Austin,Texas,United States", "us"],
      ["Austin, Texas, United States", undefined, "Austin,Texas,United States", "us"],
      ["Toronto, Ontario", "ca", "Toronto,Ontario,Canada", "ca"],
      ["Toronto,Ontario,Canada", undefined, "Toronto,Ontario,Canada", "ca"],
      ["London, England", "uk", "London,England,United Kingdom", "gb"],
      ["London,England,United Kingdom", "us", "London,England,United Kingdom", "us"],
    ])("%s with gl=%s is searched from %s, country %s", (location, gl, used, country) => {
      const s = parseSearch({ q: "x", location, ...(gl ? { gl } : {}) }, locations);
      expect(searchParameters(s)).toMatchObject({ location_requested: location, location_used: used, gl: gl ?? country });
      expect(jobRequest(s).params).toMatchObject({ location: used, country });
    });
  });

  test("a country the service does not serve still counts as the location's country (list configured)", () => {
    const s = parseSearch({ q: "x", location: "Kyiv, Kyiv city, Ukraine" }, list);
    expect(s.location?.used).toBe("Kyiv,Kyiv city,Ukraine");
    expect(s.country).toBe("us");
  });

  test("with a location list, a name it does not hold is refused in the reference API's words", () => {
    expect(rejects({ q: "x", location: "Zzzyx Nowhere Land" }, list)).toBe("Unsupported `Zzzyx Nowhere Land` location - location parameter.");
    expect(rejects({ q: "x", location: "Austin, Texas", gl: "de" }, list)).toBe("Unsupported `Austin, Texas` location - location parameter.");
  });

  const real = geotargetsAvailable ? test : test.skip;
  real("with the real geotargets list, 'Austin, Texas' resolves to the canonical name", () => {
    const s = parseSearch({ q: "x", location: "austin, texas" }, Locations.fromDirectory(GEOTARGETS_DIR));
    expect(s.location?.used).toBe("Austin,Texas,United States");
  });

  test("pagination links: sorted query, + for spaces, no key, start by the kind's step", () => {
    const s = parseSearch({ q: "central park", location: "Austin, Texas", api_key: "sk_secret", start: "10" }, noList);
    expect(sortedQuery(linkParams(s, 3))).toBe(
      "device=desktop&engine=web&gl=us&hl=en&location=Austin%2C+Texas&q=central+park&start=20",
    );
    const pages = paginationBlocks(s, "https://api.example.test")!;
    expect(pages.serpapi_pagination).toMatchObject({ current: 2, previous: expect.any(String), next: expect.stringContaining("start=20") });
    expect(Object.keys(pages.serpapi_pagination.other_pages as object)).toEqual(["1", "3", "4", "5", "6", "7", "8", "9", "10"]);
    expect(JSON.stringify(pages)).not.toContain("api_key");
    const local = parseSearch({ q: "x", tbm: "lcl" }, noList);
    expect(paginationBlocks(local, "http://h")!.serpapi_pagination.next).toBe("http://h/search.json?device=desktop&engine=web&gl=us&hl=en&q=x&start=20&tbm=lcl");
  });
});
