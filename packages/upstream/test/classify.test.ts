import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Endpoint } from "@serp/shared";
import { classify, type UpstreamResponse } from "../src/classify.js";

const fixtures = join(dirname(fileURLToPath(import.meta.url)), "fixtures");
const page = (name: string) => readFileSync(join(fixtures, name), "utf8");

function res(body: string, statusCode = 200, headers: UpstreamResponse["headers"] = {}, url = "https://www.google.com/search?q=coffee"): UpstreamResponse {
  return { statusCode, headers, body, url };
}
const web = (r: UpstreamResponse) => classify(r, "web-search");
const suggest = (body: string) => classify(res(body), "web-autocomplete");

describe("classify: pages", () => {
  test.each([
    ["classify-results.html", "results"],
    ["classify-results-inline-consent.html", "results"],
    ["classify-basic.html", "results"],
    ["classify-no-results.html", "no_results"],
    ["classify-basic-no-results.html", "no_results"],
    ["classify-sorry.html", "blocked"],
    ["classify-sorry-refresh.html", "blocked"],
    ["classify-consent.html", "consent"],
    ["classify-enablejs.html", "js_wall"],
    ["classify-error-500.html", "upstream_error"],
    ["classify-truncated.html", "upstream_error"],
  ])("%s → %s", (file, expected) => {
    expect(web(res(page(file)))).toBe(expected);
  });

  test("a results page carrying the enablejs <noscript> fallback and the inline consent dialog is still results", () => {
    const body = page("classify-results-inline-consent.html").replace("<body>", '<body><noscript><a href="/httpservice/retry/enablejs?sei=x">here</a></noscript>');
    expect(web(res(body))).toBe("results");
  });

  test("the classifier reads only strings: a 2 MB page takes well under a few milliseconds", () => {
    const big = page("classify-results.html").replace("</body>", `${'<div class="g" data-hveid="x">filler</div>'.repeat(50_000)}</body>`);
    expect(big.length).toBeGreaterThan(2_000_000);
    web(res(big));
    const started = performance.now();
    for (let i = 0; i < 10; i++) expect(web(res(big))).toBe("results");
    expect((performance.now() - started) / 10).toBeLessThan(20);
  });
});

describe("classify: status and redirects", () => {
  test("429 is a block whatever the body", () => {
    expect(web(res("", 429))).toBe("blocked");
    expect(web(res(page("classify-results.html"), 429))).toBe("blocked");
  });

  test.each([
    ["https://www.google.com/sorry/index?continue=x", "blocked"],
    ["/sorry/index?continue=x", "blocked"],
    ["https://sorry.google.com/sorry/?continue=x", "blocked"],
    ["https://consent.google.com/ml?continue=https://www.google.com/search", "consent"],
    ["https://consent.google.de/m?continue=x", "consent"],
    ["/httpservice/retry/enablejs?sei=abc", "js_wall"],
    ["https://www.google.de/search?q=coffee", "upstream_error"],
  ])("302 to %s → %s (never followed)", (location, expected) => {
    expect(web(res("", 302, { location }))).toBe(expected);
    expect(web(res("", 301, { location }))).toBe(expected);
  });

  test("a redirect without a location is an upstream error", () => {
    expect(web(res("", 302))).toBe("upstream_error");
  });

  test("a block page served with 503 or 403 is still a block", () => {
    expect(web(res(page("classify-sorry.html"), 503))).toBe("blocked");
    expect(web(res(page("classify-sorry.html"), 403))).toBe("blocked");
  });

  test("a JavaScript challenge whose script names /sorry/ (where it sends a browser it distrusts) is a wall, not a block", () => {
    const challenge =
      '<html><head><title>coffee - Google Search</title></head><body><noscript><iframe src="/httpservice/retry/enablejs?sei=x"></iframe></noscript>' +
      '<script>if (navigator.webdriver) location.replace("/sorry/index?continue=" + encodeURIComponent(location.href)); else document.cookie = "SG_SS=1";</script></body></html>';
    expect(web(res(challenge))).toBe("js_wall");
  });

  test("a 403 is the upstream refusing this kind of client (its answer to a TLS fingerprint it turns away)", () => {
    expect(web(res(page("classify-error-500.html").replace(/500/g, "403"), 403))).toBe("refused");
  });

  test("the page old browsers get is a refusal, not a results page", () => {
    const unsupported =
      "<!doctype html><html><head><title>Google Search</title></head><body><p>Your browser isn't supported anymore. To continue your search, upgrade to a recent version.</p></body></html>";
    expect(web(res(unsupported))).toBe("refused");
    // The words alone, inside a real results page, change nothing.
    expect(web(res(page("classify-results.html").replace("<body>", `<body><p>isn't supported anymore</p>`)))).toBe("results");
  });

  test("other 4xx and 5xx are upstream errors", () => {
    for (const status of [400, 404, 500, 502, 503]) expect(web(res(page("classify-error-500.html"), status))).toBe("upstream_error");
    expect(web(res(page("classify-results.html"), 500))).toBe("upstream_error");
  });

  test("a 200 answered from the sorry host or path is a block", () => {
    expect(web(res("<html><body>wait</body></html>", 200, {}, "https://www.google.com/sorry/index?x=1"))).toBe("blocked");
  });

  test("an empty or blank body is an upstream error, for every kind", () => {
    for (const endpoint of ["web-search", "web-news", "web-autocomplete"] as Endpoint[]) {
      expect(classify(res(""), endpoint)).toBe("upstream_error");
      expect(classify(res("  \n"), endpoint)).toBe("upstream_error");
      expect(classify(res("", 204), endpoint)).toBe("upstream_error");
    }
  });
});

describe("classify: markers are not trusted out of place", () => {
  test("a big results page that mentions /sorry/ or 'unusual traffic' in a result is results", () => {
    const body = page("classify-results.html").replace(
      "</body>",
      `<div class="g" data-hveid="z"><a href="https://example.com/sorry/index">Why Google says unusual traffic</a></div><form></form>${" ".repeat(70_000)}</body>`,
    );
    expect(web(res(body))).toBe("results");
  });

  test("a small basic-layout results page linking to a sorry URL is results", () => {
    const body = page("classify-basic.html").replace("</div></body>", '<a href="/url?q=https://support.google.com/sorry/index">/sorry/index help</a></div></body>');
    expect(web(res(body))).toBe("results");
  });

  test("an XHTML page behind an XML declaration is still read as HTML: cut short is an upstream error", () => {
    const xhtml = `<?xml version="1.0" encoding="UTF-8"?>\n${page("classify-basic-no-results.html")}`;
    expect(web(res(xhtml))).toBe("no_results");
    expect(web(res(xhtml.slice(0, xhtml.indexOf("</body>"))))).toBe("upstream_error");
  });

  test("a big page without results but with the enablejs link is a JS wall", () => {
    const body = page("classify-enablejs.html").replace("</body>", `<script>${"x".repeat(100_000)}</script></body>`);
    expect(web(res(body))).toBe("js_wall");
  });
});

describe("classify: suggestions", () => {
  test.each([
    ['["coffee",["coffee near me","coffee shops"],["",""],[],{"google:suggestrelevance":[1250,600]}]', "results"],
    ['["qwxzzy",[],[],[],{"google:verbatimrelevance":851}]', "no_results"],
    ['["coffee",["coffee near me"]]', "results"],
    ['["qwxzzy",[]]', "no_results"],
    ['/**/cb(["coffee",["coffee near me"],[""],[],{}]);', "results"],
    ['window.google.ac.h(["qwxzzy",[],[],[],{}])', "no_results"],
    [")]}'\n[[[\"coffee\\u003cb\\u003e near me\\u003c/b\\u003e\",0,[512]]],{\"q\":\"x\"}]", "results"],
    [")]}'\n[[],{\"q\":\"x\"}]", "no_results"],
    ['<?xml version="1.0"?><toplevel><CompleteSuggestion><suggestion data="coffee near me"/></CompleteSuggestion></toplevel>', "results"],
    ['<?xml version="1.0"?><toplevel/>', "no_results"],
    ['<?xml version="1.0"?><toplevel></toplevel>', "no_results"],
  ])("%s → %s", (body, expected) => {
    expect(suggest(body)).toBe(expected);
  });

  test("a list cut short is an upstream error, not an empty list", () => {
    expect(suggest('["coffee",["coffee near me","coffee sh')).toBe("upstream_error");
    expect(suggest('<?xml version="1.0"?><toplevel><CompleteSuggestion><suggestion data="coff')).toBe("upstream_error");
    expect(suggest("garbage")).toBe("upstream_error");
  });

  test("JSON of another shape is not a suggestion list", () => {
    expect(suggest('{"suggestions":["a"]}')).toBe("upstream_error");
    expect(suggest('[{"query":"coffee","results":[]}]')).toBe("upstream_error");
    expect(suggest('["coffee"]')).toBe("upstream_error");
    expect(suggest(`["coffee",[${'"x",'.repeat(20_000)}"y"]]`)).toBe("upstream_error");
  });

  test("a suggestion that reads like a block page is still a suggestion", () => {
    expect(suggest('["unusual traffic",["unusual traffic from your computer network /sorry/"]]')).toBe("results");
  });

  test("an HTML block or error page on the suggestion path is classified as a page", () => {
    expect(suggest(page("classify-sorry.html"))).toBe("blocked");
    expect(suggest(page("classify-error-500.html"))).toBe("upstream_error");
    expect(classify(res("", 429), "web-autocomplete")).toBe("blocked");
  });
});
