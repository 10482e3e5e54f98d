/**
 * The parsing behind coverage.test.ts, run in a Node process of its own (./in-node.ts): each test's
 * figures, read from the captured pages (whole, half unreadable, retitled, cut in their results
 * region). The assertions stay in the test file.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Endpoint, WebSearchBlocks } from "@serp/shared";
import { coverage, parsePage } from "../src/coverage.js";
import { isTag, isText, type AnyNode } from "domhandler";
import { getOuterHTML } from "domutils";
import { all, parseHtml, withDocument, type Element } from "../src/html/index.js";
import { PARSERS } from "../src/kinds/index.js";
import { cutInRegion, REGION_IDS } from "./cut-region.js";
import { thrown } from "./in-node.js";

const here = dirname(fileURLToPath(import.meta.url));
const expectationDir = join(here, "conformance/expectations");
interface PageExpectation {
  fixture: string;
  parser?: Endpoint;
  classify?: string;
}

/**
 * Results pages, at most two per parser and fixtures folder (web, web-mobile, web-nojs, news, images…):
 * every kind and layout family, without parsing every captured page again (the conformance run does).
 */
function sampledPages() {
  const expectations = readdirSync(expectationDir)
    .filter((f) => f.endsWith(".json"))
    .flatMap((f) => JSON.parse(readFileSync(join(expectationDir, f), "utf8")) as PageExpectation[]);
  const perFamily = new Map<string, number>();
  return expectations.filter((e) => {
    if (!e.parser || e.classify !== "results") return false;
    const family = `${e.parser}:${e.fixture.slice(0, e.fixture.indexOf("/"))}`;
    const n = perFamily.get(family) ?? 0;
    perFamily.set(family, n + 1);
    return n < 2;
  });
}

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

/** The best of five timings of `fn`, in milliseconds. */
function best(fn: () => unknown) {
  let min = Infinity;
  for (let i = 0; i < 5; i++) {
    const start = performance.now();
    fn();
    min = Math.min(min, performance.now() - start);
  }
  return min;
}

/** News, shopping and image cards are found by their shape too: half the cards made unreadable, not renamed. */
const UNREADABLE: { fixture: string; endpoint: Endpoint; card: string }[] = [
  { fixture: "news/schloss-johannisberg-news-2025.html", endpoint: "web-news", card: "div.SoaBEf" },
  { fixture: "news/win10-iso-news-2019-wayback.html", endpoint: "web-news", card: "div.dbsr" },
  { fixture: "shopping/ean-889894929969-shopping-pt-br-2021.html", endpoint: "web-shopping-search", card: "div.sh-dlr__list-result" },
  { fixture: "images/hatsune-miku-images-ja-2025.html", endpoint: "web-images", card: 'div[data-attrid="images universal"]' },
  // The 2021 grid's tiles, in the hidden `#is-results` (their source pages behind `/imgres` or direct links).
  { fixture: "images/string-term-images-desktop-2021-wayback.html", endpoint: "web-images", card: "div.isv-r" },
];

export function coverageWork(fixturesDir: string) {
  const read = (fixture: string) => readFileSync(join(fixturesDir, fixture), "utf8");
  const layout = (fixture: string) => parsePage("web-search", read(fixture)).coverage.layout;
  const coffee = read("web/coffee-desktop-2023.html");

  return {
    notMeasured: {
      autocomplete: parsePage("web-autocomplete", read("autocomplete/cheesecake-toolbar-2013.xml")).coverage,
      productLayout: parsePage("web-shopping-product", read("shopping-product/product-13239497633151178800-pt-br-2021.html")).coverage.layout,
    },
    layouts: {
      full: layout("web/coffee-desktop-2023.html"),
      mobile: layout("web-mobile/coffee-mobile-2023.html"),
      basic: layout("web-nojs/coffee-nojs-2023.html"),
      json: layout("upstream-json/kommod-milan-tch-json-ru-2024.txt"),
    },
    /** Each page with half its cards unreadable: its figure whole and so cut. */
    halfUnreadable: UNREADABLE.map(({ fixture, endpoint, card }) => ({
      fixture,
      endpoint,
      whole: parsePage(endpoint, read(fixture)).coverage,
      cut: parsePage(endpoint, halfUnreadable(read(fixture), card)).coverage,
    })),
    /** Every other result title an `<h4>` instead of an `<h3>`: each page's figure before and after. */
    retitled: ["web/coffee-desktop-2023.html", "web/klimt-peintures-desktop-fr-2022.html", "web-nojs/matrix-nojs-2023.html"].map((fixture) => {
      const body = read(fixture);
      let i = 0;
      const renamed = body.replace(/<(\/?)h3\b/g, (_, slash: string) => `<${slash}${Math.floor(i++ / 2) % 2 ? "h4" : "h3"}`);
      return { fixture, whole: parsePage("web-search", body).coverage, changed: parsePage("web-search", renamed).coverage };
    }),
    /** The sampled pages cut in their results region: each one's figure, or null where the parser refused it outright. */
    cutPages: sampledPages().flatMap((e) => {
      const ids = REGION_IDS[e.parser as keyof typeof REGION_IDS];
      const body = read(e.fixture);
      // Progressive pages carry the page inside JSON chunks: one cut short is refused by the parser (below).
      if (!ids || body.trimStart().startsWith("{")) return [];
      const cut = cutInRegion(body, ids);
      if (!cut) return [];
      let c = null;
      try {
        c = parsePage(e.parser!, cut).coverage;
      } catch {
        // a parser that refuses the cut page outright: nothing is sold either
      }
      return [{ fixture: e.fixture, parser: e.parser!, coverage: c }];
    }),
    progressiveCut: (() => {
      const body = read("upstream-json/kommod-milan-tch-json-ru-2024.txt");
      return thrown(() => parsePage("web-search", body.slice(0, Math.floor(body.length * 0.6))));
    })(),
    /** The figure from the parser's own tree and from one parsed apart, and the best timings of a parse and of the figure. */
    fromTree: (() => {
      const { value: blocks, doc } = withDocument(() => PARSERS["web-search"](coffee));
      return {
        treeBuilt: doc !== undefined,
        own: doc ? coverage("web-search", coffee, doc, blocks) : null,
        apart: coverage("web-search", coffee, parseHtml(coffee), blocks),
        parseMs: best(() => PARSERS["web-search"](coffee)),
        measureMs: doc ? best(() => coverage("web-search", coffee, doc, blocks)) : null,
      };
    })(),
    /** A caller's parser giving half the organic results: the figure it gets, and the page's links. */
    callersTree: (() => {
      const real = PARSERS["web-search"](coffee);
      const half: WebSearchBlocks = { organic_results: real.organic_results.slice(0, Math.ceil(real.organic_results.length / 2)) };
      return { half: half.organic_results.length, coverage: parsePage("web-search", coffee, () => half).coverage, links: parsePage("web-search", coffee).coverage.links };
    })(),
  };
}

export type CoverageWork = ReturnType<typeof coverageWork>;
