/**
 * The layout families of issue 17, each checked on every captured page of its kind rather than on the
 * one page that showed it: a rule written for a single page would fail here.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { removeElement } from "domutils";
import { all, closest, first, parseHtml, text } from "../../src/html/index.js";
import { parseImages, parseNews, parseWebSearch } from "../../src/kinds/index.js";
import { extractWebSearch, joinJsonChunks } from "../../src/kinds/web-search/index.js";
import { discussionSections } from "../../src/kinds/web-search/discussions.js";
import { extractKnowledgeGraph } from "../../src/kinds/web-search/knowledge-graph.js";
import { FIXTURES_DIR, fixturesAvailable } from "../fixtures-dir.js";

const describeIfFixtures = fixturesAvailable ? describe : describe.skip;
const pagesIn = (dir: string) =>
  fixturesAvailable ? readdirSync(join(FIXTURES_DIR, dir)).map((f) => `${dir}/${f}`) : [];
const read = (page: string) => readFileSync(join(FIXTURES_DIR, page), "utf8");

describeIfFixtures("results loaded below the first block (#bres / #botstuff)", () => {
  const desktop = [...pagesIn("web"), ...pagesIn("videos")];

  test("on every desktop page, no result is read twice and none is a search or question link", () => {
    for (const page of desktop) {
      const results = parseWebSearch(read(page)).organic_results;
      // Title and link: a sanitized capture points every link at one placeholder host.
      const links = results.map((r) => `${r.title}\n${r.link}`);
      expect({ page, duplicates: links.filter((l, i) => links.indexOf(l) !== i) }).toEqual({ page, duplicates: [] });
      for (const r of results) expect(r.link).not.toMatch(/^https?:\/\/(?:www\.)?google\.[a-z.]+\/search/);
      expect(results.map((r) => r.position)).toEqual(results.map((_, i) => i + 1));
    }
  });

  test("every titled result link in a page's lower container is read, and nothing else there", () => {
    for (const page of desktop) {
      const doc = parseHtml(read(page));
      const lower = first("#bres", doc) ?? first("#botstuff", doc);
      if (!lower) continue;
      // Titles with an outbound link, outside "People also ask" pairs and related searches.
      const expected = all("a[href^='http'] h3", lower)
        .filter((h) => !all(".related-question-pair", lower).some((pair) => all("h3", pair).includes(h)))
        .map((h) => text(h));
      const titles = parseWebSearch(read(page)).organic_results.map((r) => r.title);
      for (const t of expected) expect({ page, found: titles.includes(t) }).toEqual({ page, found: true });
    }
  });

  test("the 2025 page gives its 7 upper and 3 lower results in page order", () => {
    const results = parseWebSearch(read("web/something-desktop-singlefile-2025.html")).organic_results;
    expect(results).toHaveLength(10);
    expect(results.slice(7).map((r) => r.link)).toEqual([
      expect.stringContaining("dictionary.cambridge.org"),
      "https://www.dictionary.com/browse/something",
      expect.stringContaining("collinsdictionary.com"),
    ]);
  });
});

describeIfFixtures("progressive JSON with a raw-HTML segment", () => {
  test("the segment is joined as part of the page: all 37 results", () => {
    const page = parseWebSearch(read("upstream-json/divan-krovat-dominik-upstream-json-broken-ru-2024.txt"));
    expect(page.organic_results).toHaveLength(37);
  });

  test("every captured progressive page joins whole; a chunk cut short refuses the page", () => {
    for (const page of pagesIn("upstream-json")) {
      const body = read(page);
      expect(() => joinJsonChunks(body)).not.toThrow();
      // Cut inside the second chunk.
      const cut = body.slice(0, body.indexOf('/*""*/', body.indexOf('/*""*/') + 6) - 20);
      expect(() => parseWebSearch(cut)).toThrow(/cut short/);
    }
  });
});

describeIfFixtures("discussions and forums", () => {
  const pages = [...pagesIn("web"), ...pagesIn("web-mobile"), ...pagesIn("web-nojs")];

  test("no post of a discussions card is an organic result, on any captured page", () => {
    for (const page of pages) {
      const body = read(page);
      const doc = parseHtml(body);
      const posts = discussionSections(doc).flatMap((s) => all("a[href]", s).map((a) => a.attribs.href));
      const blocks = parseWebSearch(body);
      const organic = new Set(blocks.organic_results.map((r) => r.link));
      expect({ page, leaked: posts.filter((p) => p && organic.has(p)) }).toEqual({ page, leaked: [] });
      for (const post of blocks.discussions_and_forums ?? []) expect(organic.has(post.link)).toBe(false);
    }
  });

  test("the mobile card gives each post with what it shows", () => {
    const page = parseWebSearch(read("web-mobile/paris-mobile-2023.html"));
    expect(page.discussions_and_forums).toEqual([
      {
        position: 1,
        title: "What are some of the best things to do in Paris? - Quora",
        link: "https://www.quora.com/What-are-some-of-the-best-things-to-do-in-Paris",
        source: "www.quora.com",
        extensions: ["51 posts"],
      },
      {
        position: 2,
        title: "What are the best things to do in Paris and the surrounding areas if you ...",
        link: "https://www.quora.com/What-are-the-best-things-to-do-in-Paris-and-the-surrounding-areas-if-you-have-a-week",
        source: "www.quora.com",
        date: "Feb 18, 2011",
        extensions: ["5 posts"],
      },
      {
        position: 3,
        title: "What are some things that only tourists do in Paris? - Quora",
        link: "https://www.quora.com/What-are-some-things-that-only-tourists-do-in-Paris",
        source: "www.quora.com",
        extensions: ["14 posts"],
      },
    ]);
    expect(page.organic_results).toHaveLength(9);
  });
});

describeIfFixtures("the knowledge panel of the basic layout", () => {
  test("on every basic page, a panel is an entity with a subtitle, never a section heading", () => {
    const found: Record<string, string | undefined> = {};
    for (const page of pagesIn("web-nojs")) {
      const graph = extractKnowledgeGraph(parseHtml(read(page)));
      found[page] = graph?.title;
      if (!graph) continue;
      expect(graph.type).toBeTruthy();
      expect(graph.title).not.toMatch(/^(?:Places|Top stories|Images|People also ask|See results about)$/);
    }
    expect(found).toEqual({
      "web-nojs/coffee-nojs-2023.html": "Coffee",
      "web-nojs/domain-nojs-2023.html": "Domain name",
      "web-nojs/fatmira-brecani-basic-2022-wayback.html": undefined,
      "web-nojs/hotels-nyc-nojs-2023.html": undefined,
      "web-nojs/matrix-nojs-2023.html": "The Matrix",
    });
  });
});

describeIfFixtures("older news layouts", () => {
  test("the light news rule reads the light web pages' result blocks too (headline, slot, /url?q= link)", () => {
    for (const page of pagesIn("web-nojs")) {
      const body = read(page);
      const news = new Set(parseNews(body).news_results.map((n) => `${n.title}\n${n.link}`));
      const organic = parseWebSearch(body).organic_results;
      const read_ = organic.filter((r) => news.has(`${r.title}\n${r.link}`));
      expect({ page, share: read_.length / organic.length }).toEqual({ page, share: 1 });
    }
  });

  test("both older pages give ten articles, each with a headline, publisher and age", () => {
    for (const page of ["news/win10-iso-news-2019-wayback.html", "news/virtual-reality-experience-news-basic-2022-wayback.html"]) {
      const items = parseNews(read(page)).news_results;
      expect(items).toHaveLength(10);
      for (const n of items) {
        expect(n.source).toBeTruthy();
        expect(n.date).toBeTruthy();
        expect(n.snippet ?? "").not.toMatch(/^\s*·/);
      }
    }
  });
});

describeIfFixtures("the 2021 image grid", () => {
  test("tiles in place and deferred in templates are all read, the full-size URL where the page has it", () => {
    const items = parseImages(read("images/string-term-images-desktop-2021-wayback.html")).images_results;
    expect(items).toHaveLength(100);
    expect(items.filter((i) => i.original).length).toBeGreaterThanOrEqual(90);
    for (const i of items) {
      expect(i.link).toMatch(/^https?:\/\//);
      if (i.original) expect(i.original).not.toMatch(/encrypted-tbn|\\u00/);
    }
  });

  test("on every other captured image page the grid rule changes nothing it should not", () => {
    for (const page of pagesIn("images")) {
      for (const i of parseImages(read(page)).images_results) expect(i.link ?? i.original).toBeTruthy();
    }
  });
});

/** A page with every `class` attribute removed: what a rule still finds there, it finds by the page's structure. */
const withoutClasses = (body: string) => body.replace(/\sclass=(?:"[^"]*"|'[^']*')/g, "");

describeIfFixtures("answers of 'People also ask' served in scripts", () => {
  const pages = [...pagesIn("web"), ...pagesIn("web-mobile")];
  /** The raw page's `jsl.dh('<id>','<html>')` calls, decoded by a regex of the test's own. */
  const servedHtml = (body: string) => {
    const calls = new Map<string, string>();
    for (const m of body.matchAll(/jsl\.dh\('([^']+)','((?:[^'\\]|\\.)*)'/g)) {
      calls.set(m[1]!, m[2]!.replace(/\\x([0-9a-f]{2})|\\u([0-9a-f]{4})|\\(.)/gi, (_, x, u, c) => (x || u ? String.fromCharCode(parseInt(x ?? u, 16)) : c)));
    }
    return calls;
  };
  /** The title of the first result quoted in a pair's served answer (its slots filled in turn). */
  const quotedTitle = (pairIds: string[], calls: Map<string, string>) => {
    let html = "";
    const todo = pairIds.filter((id) => calls.has(id));
    for (const seen = new Set<string>(); todo.length; ) {
      const id = todo.shift()!;
      if (seen.has(id)) continue;
      seen.add(id);
      html += calls.get(id);
      for (const m of calls.get(id)!.matchAll(/id="([^"]+)"/g)) if (calls.has(m[1]!)) todo.push(m[1]!);
    }
    const h3 = html.match(/<h3[^>]*>((?:(?!<\/h3>)[\s\S])*)<\/h3>/);
    return h3 && text(parseHtml(h3[1]!));
  };

  test("on every page, each question whose served answer quotes a result gives that result's title and a link", () => {
    let quoted = 0;
    for (const page of pages) {
      const body = read(page);
      const calls = servedHtml(body);
      if (calls.size === 0) continue;
      const doc = parseHtml(body);
      const questions = extractWebSearch(doc).related_questions ?? [];
      for (const pair of all(".related-question-pair", doc)) {
        const title = quotedTitle(all("[id]", pair).map((el) => el.attribs.id!), calls);
        const question = questions.find((q) => q.question === (pair.attribs["data-q"] ?? text(first('[role="button"], [role="tab"]', pair))));
        if (!title || !question) continue;
        quoted++;
        expect({ page, question: question.question, title: question.title }).toEqual({ page, question: question.question, title });
        expect(question.link).toMatch(/^https?:\/\//);
      }
    }
    // 2019, 2021–2026 desktop and 2023 mobile pages: not one page's markup.
    expect(quoted).toBeGreaterThanOrEqual(50);
  });

  test("a page whose answers are only in its scripts gives the questions alone once the scripts are gone", () => {
    for (const page of ["web/coffee-desktop-2023.html", "web-mobile/coffee-mobile-2023.html", "web/van-gogh-paintings-desktop-2019.html"]) {
      const body = read(page);
      expect((parseWebSearch(body).related_questions ?? []).filter((q) => q.link).length).toBeGreaterThan(0);
      const stripped = parseWebSearch(body.replace(/<script\b[^>]*>[\s\S]*?<\/script>/g, "")).related_questions ?? [];
      expect(stripped.length).toBeGreaterThan(0);
      expect(stripped.filter((q) => q.snippet || q.link || q.list)).toEqual([]);
    }
  });
});

describeIfFixtures("the inline 'About' panel", () => {
  const page = "web/tesla-manifesto-desktop-2025.html";
  const expected = {
    title: "Tesla",
    description: expect.stringMatching(/^Tesla, Inc\. is an American multinational automotive and clean energy company\./),
    source: { name: "Wikipedia", link: "https://en.wikipedia.org/wiki/Tesla,_Inc." },
  };

  test("is read from the page's structure (heading, cards, profile link), not its class names", () => {
    expect(parseWebSearch(read(page)).knowledge_graph).toEqual(expected);
    expect(parseWebSearch(withoutClasses(read(page))).knowledge_graph).toEqual(expected);
  });

  test("takes the entity's name from a heading in another language, and no description from a card that is a headline", () => {
    const german = read(page).replace("<div>About Tesla</div>", "<div>Über Tesla</div>");
    expect(parseWebSearch(german).knowledge_graph?.title).toBe("Tesla");
    // Without its two describing cards ("From Wikipedia", "In their own words"), the first card is a
    // news card (headline, snippet, site): no description is taken from it.
    const doc = parseHtml(read(page));
    const panel = closest(first('a[href*="tbm=ilp"]', doc)!, (el) => first('[role="listitem"]', el) !== null)!;
    const cards = all('[role="listitem"]', panel);
    expect(cards.length).toBeGreaterThanOrEqual(3);
    cards.slice(0, 2).forEach(removeElement);
    expect(extractKnowledgeGraph(doc)).toEqual({ title: "Tesla" });
  });
});

describeIfFixtures("hotel and place packs", () => {
  test("the hotel pack of desktop and mobile pages: every card with its price and rating, found without class names", () => {
    for (const page of ["web/hotels-nyc-desktop-2023.html", "web-mobile/hotels-nyc-mobile-2023.html"]) {
      const body = read(page);
      // Cards: links into the travel pages that carry a star rating (their own markup differs per layout).
      const doc = parseHtml(body);
      const cards = all('a[href^="/travel/"], [data-url^="/travel/"]', doc).filter((a) => first('[role="img"][aria-label]', a));
      const places = parseWebSearch(body).local_results?.places ?? [];
      expect(places).toHaveLength(cards.length);
      expect(cards.length).toBeGreaterThanOrEqual(3);
      for (const [i, place] of places.entries()) {
        expect(text(cards[i]!)).toContain(place.title);
        expect(place.price).toMatch(/^\$\d+$/);
        expect(place.rating).toBeGreaterThan(0);
        expect(place.reviews).toBeGreaterThan(0);
        expect(place).not.toHaveProperty("address");
      }
      expect(parseWebSearch(withoutClasses(body)).local_results?.places).toEqual(places);
    }
  });

  test("the basic layout's Places block on every basic page: each place link with a name is a place, read without class names", () => {
    let packs = 0;
    for (const page of pagesIn("web-nojs")) {
      const body = read(page);
      const doc = parseHtml(body);
      const names = [...new Set(all('a[href*="ludocid="] h3', doc).map((h) => text(h)))];
      const places = parseWebSearch(body).local_results?.places ?? [];
      expect({ page, titles: places.map((p) => p.title) }).toEqual({ page, titles: names });
      if (!names.length) continue;
      packs++;
      for (const place of places) {
        expect(place.rating).toBeGreaterThan(0);
        expect(place.address).toBeTruthy();
        expect(place.address).not.toMatch(/\d\.\d \(|·/);
      }
      expect(parseWebSearch(withoutClasses(body)).local_results?.places).toEqual(places);
    }
    expect(packs).toBe(2);
  });

  test("a page with a classic local pack reads it as before: every place is one of its business cards", () => {
    let pages = 0;
    for (const page of [...pagesIn("web"), ...pagesIn("web-mobile")]) {
      const body = read(page);
      if (!body.includes("rllt__details")) continue;
      pages++;
      const doc = parseHtml(body);
      // A card: its details block, with the name beside it in 2019 tiles (the tile holds both).
      const cards = all(".rllt__details", doc).map((d) => text(closest(d, (el) => /\b(?:VkpGBb|rllt__tile-content)\b/.test(el.attribs.class ?? "")) ?? d));
      const places = extractWebSearch(doc).local_results?.places ?? [];
      expect(places.length).toBeGreaterThan(0);
      for (const p of places) expect({ page, title: p.title, inCard: cards.some((c) => c.includes(p.title)) }).toEqual({ page, title: p.title, inCard: true });
    }
    expect(pages).toBeGreaterThanOrEqual(8);
  });
});
