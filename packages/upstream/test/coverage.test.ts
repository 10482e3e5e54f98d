/**
 * The coverage figure (src/coverage.ts) on captured pages (that every results page clears its kind's
 * threshold is checked, and each page's figure printed, by the conformance run): a page whose
 * results are half in markup the parser does not know (a layout change) falls below it, or on web
 * halves its figure; captured pages of every kind and layout cut in the middle of their results
 * region read 0; and the figure is read from the parser's own tree, at a small part of a parse's cost.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Endpoint, WebSearchBlocks } from "@serp/shared";
import { COVERAGE_THRESHOLDS, coverage, parsePage, understood } from "../src/coverage.js";
import { isTag, isText, type AnyNode } from "domhandler";
import { getOuterHTML } from "domutils";
import { all, parseHtml, withDocument, type Element } from "../src/html/index.js";
import { PARSERS } from "../src/kinds/index.js";
import { cutInRegion, REGION_IDS } from "./cut-region.js";
import { FIXTURES_DIR, fixturesAvailable } from "./fixtures-dir.js";

const here = dirname(fileURLToPath(import.meta.url));
const expectationDir = join(here, "conformance/expectations");
interface PageExpectation {
  fixture: string;
  parser?: Endpoint;
  classify?: string;
}
const expectations = readdirSync(expectationDir)
  .filter((f) => f.endsWith(".json"))
  .flatMap((f) => JSON.parse(readFileSync(join(expectationDir, f), "utf8")) as PageExpectation[]);

const describeIfFixtures = fixturesAvailable ? describe : describe.skip;
const read = (fixture: string) => readFileSync(join(FIXTURES_DIR, fixture), "utf8");

/**
 * Results pages, at most two per parser and fixtures folder (web, web-mobile, web-nojs, news, images…):
 * every kind and layout family, without parsing every captured page again (the conformance run does).
 */
const sampledPages = (() => {
  const perFamily = new Map<string, number>();
  return expectations.filter((e) => {
    if (!e.parser || e.classify !== "results") return false;
    const family = `${e.parser}:${e.fixture.slice(0, e.fixture.indexOf("/"))}`;
    const n = perFamily.get(family) ?? 0;
    perFamily.set(family, n + 1);
    return n < 2;
  });
})();

/**
 * The page with every other card (`card`, a selector) turned into a widget no parser can read: its
 * links and headline stay (so the links count in the region), its classes and data attributes go, and every other text
 * it shows (publisher, age, price, merchant) and its pictures are gone. Parsers that find cards by their shape as well
 * as by class names (news, shopping) need more than a renamed class to lose a card.
 */
function halfUnreadable(body: string, card: string): string {
  const doc = parseHtml(body);
  const strip = (node: AnyNode, inHeading: boolean): void => {
    if (isText(node)) {
      if (!inHeading) node.data = "";
      return;
    }
    if (!isTag(node)) return;
    node.children = node.children.filter((c) => !(isTag(c) && c.name === "img"));
    for (const name of Object.keys(node.attribs)) if (name === "class" || name === "aria-label" || name.startsWith("data-")) delete node.attribs[name];
    const heading = inHeading || /^h[1-6]$/.test(node.name) || node.attribs.role === "heading";
    for (const c of node.children) strip(c, heading);
  };
  all(card, doc).forEach((el: Element, i) => {
    if (i % 2 === 1) strip(el, false);
  });
  return getOuterHTML(doc);
}

describeIfFixtures("coverage of captured pages", () => {
  test("kinds whose pages are not lists of outbound results are not measured", () => {
    expect(parsePage("web-autocomplete", read("autocomplete/cheesecake-toolbar-2013.xml")).coverage).toEqual({ links: 0, accounted: 0, ratio: 1, layout: "none" });
    const product = read("shopping-product/product-13239497633151178800-pt-br-2021.html");
    expect(parsePage("web-shopping-product", product).coverage.layout).toBe("none");
  });

  test("the layout is read from the page: full, mobile, basic, json", () => {
    const layout = (fixture: string) => parsePage("web-search", read(fixture)).coverage.layout;
    expect(layout("web/coffee-desktop-2023.html")).toBe("full");
    expect(layout("web-mobile/coffee-mobile-2023.html")).toBe("mobile");
    expect(layout("web-nojs/coffee-nojs-2023.html")).toBe("basic");
    expect(layout("upstream-json/kommod-milan-tch-json-ru-2024.txt")).toBe("json");
  });

  test("news, images and shopping: a page with half its items in unknown markup falls below the threshold", () => {
    // News, shopping and image cards are found by their shape too: half the cards made unreadable, not renamed.
    const unreadable: { fixture: string; endpoint: Endpoint; card: string }[] = [
      { fixture: "news/schloss-johannisberg-news-2025.html", endpoint: "web-news", card: "div.SoaBEf" },
      { fixture: "news/win10-iso-news-2019-wayback.html", endpoint: "web-news", card: "div.dbsr" },
      { fixture: "shopping/ean-889894929969-shopping-pt-br-2021.html", endpoint: "web-shopping-search", card: "div.sh-dlr__list-result" },
      { fixture: "images/hatsune-miku-images-ja-2025.html", endpoint: "web-images", card: 'div[data-attrid="images universal"]' },
      // The 2021 grid's tiles, in the hidden `#is-results` (their source pages behind `/imgres` or direct links).
      { fixture: "images/string-term-images-desktop-2021-wayback.html", endpoint: "web-images", card: "div.isv-r" },
    ];
    for (const { fixture, endpoint, card } of unreadable) {
      const whole = parsePage(endpoint, read(fixture)).coverage;
      const cut = parsePage(endpoint, halfUnreadable(read(fixture), card)).coverage;
      expect([fixture, whole.ratio >= COVERAGE_THRESHOLDS[endpoint]]).toEqual([fixture, true]);
      expect(cut.links).toBeGreaterThan(0);
      expect([fixture, cut.ratio < COVERAGE_THRESHOLDS[endpoint]]).toEqual([fixture, true]);
    }
  });

  test("web: results titled in a form the parser does not read halve the figure", () => {
    // Every other result title an `<h4>` instead of an `<h3>`: a heading, so still a result's title,
    // but not one the organic parser reads. The web threshold only catches a page the parsers barely
    // understand (see COVERAGE_THRESHOLDS); a drop like this shows in the histogram first.
    for (const fixture of ["web/coffee-desktop-2023.html", "web/klimt-peintures-desktop-fr-2022.html", "web-nojs/matrix-nojs-2023.html"]) {
      const body = read(fixture);
      const whole = parsePage("web-search", body).coverage;
      let i = 0;
      const renamed = body.replace(/<(\/?)h3\b/g, (_, slash: string) => `<${slash}${Math.floor(i++ / 2) % 2 ? "h4" : "h3"}`);
      const changed = parsePage("web-search", renamed).coverage;
      expect(whole.ratio).toBe(1);
      expect(changed.links).toBe(whole.links);
      expect(changed.ratio).toBeGreaterThan(0.3);
      expect(changed.ratio).toBeLessThan(0.7);
    }
  });

  test("captured results pages of every kind and layout, cut in the middle of their results region, read 0, marked cut", () => {
    let cutPages = 0;
    const missed: string[] = [];
    for (const e of sampledPages) {
      const ids = REGION_IDS[e.parser as keyof typeof REGION_IDS];
      const body = read(e.fixture);
      // Progressive pages carry the page inside JSON chunks: one cut short is refused by the parser (below).
      if (!ids || body.trimStart().startsWith("{")) continue;
      const cut = cutInRegion(body, ids);
      if (!cut) continue;
      cutPages++;
      let c;
      try {
        c = parsePage(e.parser!, cut).coverage;
      } catch {
        continue; // a parser that refuses the cut page outright: nothing is sold either
      }
      if (!c.cut || c.ratio !== 0 || understood(e.parser!, c)) missed.push(`${e.fixture}: ${JSON.stringify(c)}`);
    }
    expect(cutPages).toBeGreaterThanOrEqual(12);
    expect(missed).toEqual([]);
  });

  test("a progressive page with a chunk cut short is not parsed at all", () => {
    const body = read("upstream-json/kommod-milan-tch-json-ru-2024.txt");
    const cut = body.slice(0, Math.floor(body.length * 0.6));
    expect(() => parsePage("web-search", cut)).toThrow(/cut short/);
  });

  test("the figure is read from the tree the parser built, at a small part of a parse's cost", () => {
    const body = read("web/coffee-desktop-2023.html");
    const { value: blocks, doc } = withDocument(() => PARSERS["web-search"](body));
    expect(doc).toBeDefined();
    // The same figure as from a tree parsed apart.
    expect(coverage("web-search", body, doc!, blocks)).toEqual(coverage("web-search", body, parseHtml(body), blocks));
    const best = (fn: () => unknown) => {
      let min = Infinity;
      for (let i = 0; i < 5; i++) {
        const start = performance.now();
        fn();
        min = Math.min(min, performance.now() - start);
      }
      return min;
    };
    const parse = best(() => PARSERS["web-search"](body));
    const measure = best(() => coverage("web-search", body, doc!, blocks));
    // A figure that parsed the page again would cost about a parse; read from the tree, a few percent.
    expect(measure).toBeLessThan(parse * 0.15);
  });

  test("a parser that builds no tree of its own (a caller's) still gets a figure", () => {
    const body = read("web/coffee-desktop-2023.html");
    const real = PARSERS["web-search"](body);
    const half: WebSearchBlocks = { organic_results: real.organic_results.slice(0, Math.ceil(real.organic_results.length / 2)) };
    const c = parsePage("web-search", body, () => half).coverage;
    expect(c.links).toBe(parsePage("web-search", body).coverage.links);
    expect(c.accounted).toBe(half.organic_results.length);
    expect(understood("web-search", c)).toBe(true);
  });
});
