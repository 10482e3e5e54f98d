/**
 * The four sub-blocks of the web results page, extractor by extractor: on small hand-written pages
 * (test/fixtures/blocks-*.html, one per layout, text and links invented) and on the captured pages
 * (read in a Node process of its own: web-blocks.work.ts).
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { all, parseHtml, type Document } from "../../src/html/index.js";
import { extractAiOverview } from "../../src/kinds/web-search/ai-overview.js";
import { extractKnowledgeGraph } from "../../src/kinds/web-search/knowledge-graph.js";
import { extractRelatedQuestions } from "../../src/kinds/web-search/related-questions.js";
import { extractTopStories } from "../../src/kinds/web-search/top-stories.js";
import { FIXTURES_DIR, fixturesAvailable } from "../fixtures-dir.js";
import { inNode } from "../in-node.js";
import type { extractedBlocks } from "./web-blocks.work.js";

const page = (name: string): Document =>
  parseHtml(readFileSync(join(dirname(fileURLToPath(import.meta.url)), "../fixtures", name), "utf8"));

const desktop2019 = page("blocks-desktop-2019.html");
const desktop2024 = page("blocks-desktop-2024.html");
const desktop2026 = page("blocks-desktop-2026.html");
const mobile2023 = page("blocks-mobile-2023.html");
const basic = page("blocks-basic.html");
const productPanel = page("blocks-product-panel.html");
const lookalikes = page("blocks-absent.html");

describe("extractRelatedQuestions", () => {
  test("reads 2019 accordion questions and a list answer with the result it quotes", () => {
    expect(extractRelatedQuestions(desktop2019)).toEqual([
      {
        question: "Which espresso machine is best?",
        snippet: "The best espresso machines",
        list: ["Lever One. 94%", "Pump Two. 91%"],
        date: "04.02.2019",
        title: "Espresso machine test 2019",
        link: "https://coffee.example/espresso-test/",
        displayed_link: "https://coffee.example/espresso-test/",
      },
      { question: "How long does espresso keep?" },
    ]);
  });

  test("reads the answer a saved page keeps, and never the hidden 'Search for:' line", () => {
    expect(extractRelatedQuestions(desktop2024)).toEqual([
      {
        question: "How big is Lakeside Park?",
        snippet: "The park covers 40 hectares around a lake.",
        date: "Mar 3, 2024",
        title: "Lakeside Park facts",
        link: "https://parks.example/lakeside/facts",
        displayed_link: "https://parks.example › lakeside › facts",
      },
      { question: "Is Lakeside Park free?" },
    ]);
  });

  test("leaves out an answer written by an AI overview, links of its videos included", () => {
    const [ai, snippet] = extractRelatedQuestions(desktop2026);
    expect(ai).toEqual({ question: "What did Ada Lovelace invent?" });
    expect(snippet).toMatchObject({
      question: "When did Ada Lovelace die?",
      snippet: "Ada Lovelace died on 27 November 1852.",
      link: "https://history.example/ada#:~:text=died",
    });
  });

  test("gives questions only when the page fills the answers in later (mobile)", () => {
    expect(extractRelatedQuestions(mobile2023)).toEqual([
      { question: "Is matcha stronger than coffee?" },
      { question: "How much matcha per cup?" },
      { question: "Does matcha go bad?" },
    ]);
  });

  test("reads basic-HTML questions with their open answers, list numbers left out", () => {
    expect(extractRelatedQuestions(basic)).toEqual([
      {
        question: "How do I brew green tea?",
        snippet: "Brew green tea in three steps.",
        list: ["Heat water to 80 °C.", "Steep for two minutes."],
        title: "How to brew green tea - Tea Example",
        link: "https://tea.example/green",
        displayed_link: "tea.example › green",
      },
      {
        question: "Is tea healthier than coffee?",
        snippet: "Both have benefits; tea has less caffeine.",
        title: "Tea vs coffee",
        link: "https://health.example/tea-vs-coffee",
        displayed_link: "health.example › tea-vs-coffee",
      },
    ]);
  });

  test("does not take a related-searches group built from the same span for questions", () => {
    expect(extractRelatedQuestions(lookalikes)).toEqual([]);
  });
});

describe("extractTopStories", () => {
  test("reads loaded 2019 cards, skips empty carousel slots and swaps a placeholder for its scripted image", () => {
    expect(extractTopStories(desktop2019)).toEqual([
      {
        title: "Espresso prices climb again",
        link: "https://news.example/espresso-prices",
        source: "Daily Brew",
        date: "3 days ago",
        thumbnail: "data:image/jpeg;base64,/9j/4AAQSkZJRgABAQAAAQ==",
      },
      { title: "The physics of crema", link: "https://papers.example/crema", source: "Science Weekly", date: "6 hours ago" },
    ]);
  });

  test("reads 2024 cards; the publisher favicon is never the thumbnail", () => {
    expect(extractTopStories(desktop2024)).toEqual([
      {
        title: "Rowing season opens at Lakeside Park",
        link: "https://news.example/rowing-season",
        source: "City Herald",
        date: "1 day ago",
        thumbnail: "data:image/jpeg;base64,/9j/4AAQSkZJRgABAQ==",
      },
      {
        title: "Free concert by the lake on Sunday",
        link: "https://radio.example/lakeside-concert",
        source: "Radio Seven",
        date: "8 hours ago",
        thumbnail: "https://encrypted-tbn0.gstatic.com/images?q=tbn:concert",
      },
    ]);
  });

  test("splits the publisher and age lines of basic-HTML cards", () => {
    expect(extractTopStories(basic)).toEqual([
      {
        title: "A record tea harvest",
        link: "https://news.example/tea-harvest",
        source: "Leaf News",
        date: "2 days ago",
        thumbnail: "https://encrypted-tbn0.gstatic.com/images?q=tbn:harvest",
      },
      { title: "Tea prices fall", link: "https://daily.example/tea-prices", source: "The Daily", date: "5 hours ago" },
    ]);
  });

  test("does not take a video section or an images carousel for stories", () => {
    expect(extractTopStories(lookalikes)).toEqual([]);
    expect(extractTopStories(desktop2026)).toEqual([]);
  });
});

describe("extractKnowledgeGraph", () => {
  test("reads the 2019 right-column panel, not the PAA's .kno-kp box, and drops MORE links from values", () => {
    expect(extractKnowledgeGraph(desktop2019)).toEqual({
      title: "Espresso machine",
      type: "Kitchen appliance",
      description: "An espresso machine brews coffee by forcing pressurized water through ground coffee.",
      source: { name: "Wikipedia", link: "https://en.wikipedia.org/wiki/Espresso_machine" },
      attributes: { inventor: "Angelo Moriondo, Luigi Bezzera", first_made: "1884, Turin" },
    });
  });

  test("reads a place panel: type after the rating, website, visible hours only, hidden rows skipped", () => {
    expect(extractKnowledgeGraph(desktop2024)).toEqual({
      title: "Lakeside Park",
      type: "Park in Springfield",
      description: "Lakeside Park is an urban park on the shore of Lake Spring. It opened in 1901.",
      source: { name: "Wikipedia", link: "https://en.wikipedia.org/wiki/Lakeside_Park" },
      website: "https://parks.example/lakeside",
      attributes: { address: "1 Lake Rd, Springfield", hours: "Open ⋅ Closes 10 PM", area: "40 ha" },
    });
  });

  test("joins the 2026 page-top header with the body in the right column", () => {
    expect(extractKnowledgeGraph(desktop2026)).toEqual({
      title: "Ada Lovelace",
      type: "English mathematician",
      description: "Augusta Ada King, Countess of Lovelace, was an English mathematician.",
      source: { name: "Wikipedia", link: "https://en.wikipedia.org/wiki/Ada_Lovelace" },
      attributes: { born: "December 10, 1815, London", parents: "Lord Byron, Anne Isabella Byron" },
    });
  });

  test("reads the mobile description and its source name printed apart from the link", () => {
    expect(extractKnowledgeGraph(mobile2023)).toEqual({
      title: "Matcha",
      type: "Green tea powder",
      description: "Matcha is finely ground powder of green tea leaves.",
      source: { name: "Wikipedia", link: "https://en.wikipedia.org/wiki/Matcha" },
    });
  });

  test("gives a product panel no type (its subtitle is a rating) and reads its spec rows", () => {
    expect(extractKnowledgeGraph(productPanel)).toEqual({
      title: "Acme Kettle 2000",
      description: "A kettle that boils a litre in two minutes and keeps it warm for an hour.",
      attributes: { capacity: "1.7 l", power: "2200 W" },
    });
  });

  test("finds no panel on a page without a panel title", () => {
    expect(extractKnowledgeGraph(lookalikes)).toBeUndefined();
    expect(extractKnowledgeGraph(basic)).toBeUndefined();
  });
});

describe("extractAiOverview", () => {
  test("reads 2025 paragraphs, highlights, lists and source cards; citation chips and hidden copies are not text", () => {
    expect(extractAiOverview(desktop2024)).toEqual({
      text_blocks: [
        {
          type: "paragraph",
          snippet: "Lakeside Park is a public park of 40 hectares. It is open every day of the year.",
          snippet_highlighted_words: ["open every day of the year"],
        },
        { type: "paragraph", snippet: "Things to do:" },
        {
          type: "list",
          list: [{ snippet: "Rowing on the lake in summer." }, { snippet: "A playground near the north gate." }],
        },
      ],
      references: [
        {
          title: "Lakeside Park guide",
          link: "https://parks.example/lakeside",
          snippet: "Opening hours, rowing and events.",
          source: "City Parks",
          index: 0,
        },
        { title: "Lakeside Park - Wikipedia", link: "https://en.wikipedia.org/wiki/Lakeside_Park", source: "Wikipedia", index: 1 },
      ],
    });
  });

  test("reads 2026 headings and bold lead-ins, joins display:contents text, cites each source once", () => {
    expect(extractAiOverview(desktop2026)).toEqual({
      text_blocks: [
        {
          type: "paragraph",
          snippet: "Ada Lovelace was an English mathematician known for her notes on the Analytical Engine.",
          snippet_highlighted_words: ["known for her notes on the Analytical Engine"],
        },
        { type: "heading", snippet: "Key facts:" },
        {
          type: "list",
          list: [
            { title: "Born:", snippet: "10 December 1815 in London." },
            { title: "First program:", snippet: "She wrote an algorithm." },
          ],
        },
        { type: "paragraph", snippet: "She died in 1852." },
      ],
      references: [
        {
          title: "Ada Lovelace | Britannica",
          link: "https://britannica.example/ada",
          snippet: "English mathematician and writer.",
          source: "Britannica",
          index: 0,
        },
        { title: "Ada Lovelace - Wikipedia", link: "https://en.wikipedia.org/wiki/Ada_Lovelace", source: "Wikipedia", index: 1 },
      ],
    });
  });

  test("returns nothing while the page holds only the loading placeholder", () => {
    expect(extractAiOverview(lookalikes)).toBeUndefined();
  });

  test("does not take an overview answering a 'People also ask' question for the page's overview", () => {
    const paa =
      '<div class="cUnQKe"><div class="related-question-pair" data-q="Q?"><div role="button">Q?</div>' +
      '<div data-mcpr=""><div class="WaaZC"><div class="rPeykc"><span>An answer.</span></div></div></div></div></div>';
    const overview = '<div id="eKIzJc"><div data-mcpr=""><div class="rPeykc"><span>The overview.</span></div></div></div>';
    expect(extractAiOverview(parseHtml(paa))).toBeUndefined();
    expect(extractAiOverview(parseHtml(paa + overview))).toEqual({
      text_blocks: [{ type: "paragraph", snippet: "The overview." }],
    });
  });
});

const describeIfFixtures = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) {
  console.warn(`web-blocks: captured pages not found at ${FIXTURES_DIR}; set SERP_FIXTURES_DIR. Skipping.`);
}

describeIfFixtures("the four blocks on every captured web page", () => {
  let extracted: ReturnType<typeof extractedBlocks>;
  beforeAll(async () => {
    extracted = await inNode(new URL("./web-blocks.work.ts", import.meta.url), "extractedBlocks", FIXTURES_DIR);
    expect(extracted.length).toBeGreaterThan(0);
  }, 600_000);

  test("questions are the question alone, never the hidden 'Search for:' line in any language", () => {
    const leaked = extracted.flatMap((p) =>
      p.questions.filter((q) => /Search for|Rechercher|Wyszukaj|Suchen nach/.test(q.question)).map((q) => `${p.name}: ${q.question}`),
    );
    expect(leaked).toEqual([]);
  });

  test("a page as served shows at most four questions on load, and each carries a question", () => {
    for (const p of extracted) {
      if (!p.savedAfterUse) expect(p.questions.length).toBeLessThanOrEqual(4);
      for (const q of p.questions) expect(q.question.length).toBeGreaterThan(3);
    }
  });

  test("a page saved after questions were opened gives every question it displays, each once", () => {
    // web/something-desktop-singlefile-2025: 9 questions in the first list (5 loaded by opening
    // questions), 10 in the second list in #bres; none of them hidden when the page was saved.
    for (const p of extracted.filter((e) => e.savedAfterUse)) {
      const questions = p.questions.map((q) => q.question);
      expect(new Set(questions).size).toBe(questions.length);
      expect(questions.length).toBeLessThanOrEqual(p.shownPairs);
    }
    const something = extracted.find((p) => p.name === "web/something-desktop-singlefile-2025.html");
    if (something) expect(something.questions.length).toBe(19);
  });

  test("story links are real targets and thumbnails are never the 1×1 placeholder", () => {
    for (const s of extracted.flatMap((p) => p.stories)) {
      expect(s.link).toMatch(/^https?:\/\/(?!www\.google\.)/);
      if (s.thumbnail) expect(s.thumbnail).not.toMatch(/^data:image\/gif;base64,R0lGODlhAQABA/);
    }
  });

  test("panel attributes are snake_case keys with plain values", () => {
    for (const p of extracted) {
      for (const [key, value] of Object.entries(p.graph?.attributes ?? {})) {
        expect(key).toMatch(/^[\p{L}\p{N}]+(?:_[\p{L}\p{N}]+)*$/u);
        expect(value).not.toMatch(/^\s|\s$|MORE$|See more$|PLUS$/);
      }
    }
  });

  test("overview text holds no citation chip, label or button text", () => {
    for (const p of extracted) {
      for (const block of p.overview?.text_blocks ?? []) {
        const texts = [block.snippet ?? "", ...(block.list ?? []).map((i) => i.snippet)];
        for (const t of texts) expect(t).not.toMatch(/View related links|AI Overview|Can't generate/);
      }
    }
  });
});
