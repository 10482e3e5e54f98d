/**
 * The layout families of issue 17, each checked on every captured page of its kind rather than on the
 * one page that showed it: a rule written for a single page would fail here. The pages are parsed in a
 * Node process of its own (families.work.ts, through ../in-node.ts); the checks are here.
 */
import { FIXTURES_DIR, fixturesAvailable } from "../fixtures-dir.js";
import { inNode } from "../in-node.js";
import type { FamiliesWork } from "./families.work.js";

const describeIfFixtures = fixturesAvailable ? describe : describe.skip;
const entries = <T>(o: Record<string, T>) => Object.entries(o);

let work: FamiliesWork;
if (fixturesAvailable) {
  beforeAll(async () => {
    work = await inNode<FamiliesWork>(new URL("./families.work.ts", import.meta.url), "familiesWork", FIXTURES_DIR);
  }, 600_000);
}

describeIfFixtures("results loaded below the first block (#bres / #botstuff)", () => {
  test("on every desktop page, no result is read twice and none is a search or question link", () => {
    expect(Object.keys(work.desktop).length).toBeGreaterThan(0);
    for (const [page, { results }] of entries(work.desktop)) {
      // Title and link: a sanitized capture points every link at one placeholder host.
      const links = results.map((r) => `${r.title}\n${r.link}`);
      expect({ page, duplicates: links.filter((l, i) => links.indexOf(l) !== i) }).toEqual({ page, duplicates: [] });
      for (const r of results) expect(r.link).not.toMatch(/^https?:\/\/(?:www\.)?google\.[a-z.]+\/search/);
      expect(results.map((r) => r.position)).toEqual(results.map((_, i) => i + 1));
    }
  });

  test("every titled result link in a page's lower container is read, and nothing else there", () => {
    for (const [page, { results, lowerTitles }] of entries(work.desktop)) {
      if (!lowerTitles) continue;
      const titles = results.map((r) => r.title);
      for (const t of lowerTitles) expect({ page, found: titles.includes(t) }).toEqual({ page, found: true });
    }
  });

  test("the 2025 page gives its 7 upper and 3 lower results in page order", () => {
    const { results } = work.desktop["web/something-desktop-singlefile-2025.html"]!;
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
    expect(work.brokenProgressiveResults).toBe(37);
  });

  test("every captured progressive page joins whole; a chunk cut short refuses the page", () => {
    expect(Object.keys(work.progressive).length).toBeGreaterThan(0);
    for (const [page, { joined, cut }] of entries(work.progressive)) {
      expect({ page, joined }).toEqual({ page, joined: null });
      // Cut inside the second chunk.
      expect(cut).toMatch(/cut short/);
    }
  });
});

describeIfFixtures("discussions and forums", () => {
  test("no post of a discussions card is an organic result, on any captured page", () => {
    expect(Object.keys(work.discussions).length).toBeGreaterThan(0);
    for (const [page, { leaked, postsInOrganic }] of entries(work.discussions)) {
      expect({ page, leaked }).toEqual({ page, leaked: [] });
      for (const inOrganic of postsInOrganic) expect(inOrganic).toBe(false);
    }
  });

  test("the mobile card gives each post with what it shows", () => {
    expect(work.parisMobile.discussions_and_forums).toEqual([
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
    expect(work.parisMobile.organic).toBe(9);
  });
});

describeIfFixtures("the knowledge panel of the basic layout", () => {
  test("on every basic page, a panel is an entity with a subtitle, never a section heading", () => {
    const found: Record<string, string | undefined> = {};
    for (const [page, graph] of entries(work.basicPanels)) {
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
    expect(Object.keys(work.lightNews).length).toBeGreaterThan(0);
    for (const [page, { organic, read }] of entries(work.lightNews)) expect({ page, share: read / organic }).toEqual({ page, share: 1 });
  });

  test("both older pages give ten articles, each with a headline, publisher and age", () => {
    expect(Object.keys(work.olderNews)).toHaveLength(2);
    for (const items of Object.values(work.olderNews)) {
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
    const items = work.grid2021;
    expect(items).toHaveLength(100);
    expect(items.filter((i) => i.original).length).toBeGreaterThanOrEqual(90);
    for (const i of items) {
      expect(i.link).toMatch(/^https?:\/\//);
      if (i.original) expect(i.original).not.toMatch(/encrypted-tbn|\\u00/);
    }
  });

  test("on every other captured image page the grid rule changes nothing it should not", () => {
    expect(Object.keys(work.imageLinks).length).toBeGreaterThan(0);
    for (const links of Object.values(work.imageLinks)) for (const link of links) expect(link).toBeTruthy();
  });
});

describeIfFixtures("answers of 'People also ask' served in scripts", () => {
  test("on every page, each question whose served answer quotes a result gives that result's title and a link", () => {
    for (const { page, quoted, question, title, link } of work.quoted) {
      expect({ page, question, title }).toEqual({ page, question, title: quoted });
      expect(link).toMatch(/^https?:\/\//);
    }
    // 2019, 2021–2026 desktop and 2023 mobile pages: not one page's markup.
    expect(work.quoted.length).toBeGreaterThanOrEqual(50);
  });

  test("a page whose answers are only in its scripts gives the questions alone once the scripts are gone", () => {
    expect(Object.keys(work.scriptedAnswers)).toHaveLength(3);
    for (const { linked, stripped, strippedAnswered } of Object.values(work.scriptedAnswers)) {
      expect(linked).toBeGreaterThan(0);
      expect(stripped).toBeGreaterThan(0);
      expect(strippedAnswered).toEqual([]);
    }
  });
});

describeIfFixtures("the inline 'About' panel", () => {
  const expected = {
    title: "Tesla",
    description: expect.stringMatching(/^Tesla, Inc\. is an American multinational automotive and clean energy company\./),
    source: { name: "Wikipedia", link: "https://en.wikipedia.org/wiki/Tesla,_Inc." },
  };

  test("is read from the page's structure (heading, cards, profile link), not its class names", () => {
    expect(work.about.panel).toEqual(expected);
    expect(work.about.withoutClasses).toEqual(expected);
  });

  test("takes the entity's name from a heading in another language, and no description from a card that is a headline", () => {
    expect(work.about.germanTitle).toBe("Tesla");
    // Without its two describing cards ("From Wikipedia", "In their own words"), the first card is a
    // news card (headline, snippet, site): no description is taken from it.
    expect(work.about.cards).toBeGreaterThanOrEqual(3);
    expect(work.about.withoutDescribingCards).toEqual({ title: "Tesla" });
  });
});

describeIfFixtures("hotel and place packs", () => {
  test("the hotel pack of desktop and mobile pages: every card with its price and rating, found without class names", () => {
    expect(Object.keys(work.hotelPacks)).toEqual(["web/hotels-nyc-desktop-2023.html", "web-mobile/hotels-nyc-mobile-2023.html"]);
    // Cards: links into the travel pages that carry a star rating (their own markup differs per layout).
    for (const { cards, places, withAddress, withoutClasses } of Object.values(work.hotelPacks)) {
      expect(places).toHaveLength(cards.length);
      expect(cards.length).toBeGreaterThanOrEqual(3);
      for (const [i, place] of places.entries()) {
        expect(cards[i]).toContain(place.title);
        expect(place.price).toMatch(/^\$\d+$/);
        expect(place.rating).toBeGreaterThan(0);
        expect(place.reviews).toBeGreaterThan(0);
      }
      expect(withAddress).toBe(0);
      expect(withoutClasses).toEqual(places);
    }
  });

  test("the basic layout's Places block on every basic page: each place link with a name is a place, read without class names", () => {
    let packs = 0;
    for (const [page, { names, places, withoutClasses }] of entries(work.basicPlaces)) {
      expect({ page, titles: places.map((p) => p.title) }).toEqual({ page, titles: names });
      if (!names.length) continue;
      packs++;
      for (const place of places) {
        expect(place.rating).toBeGreaterThan(0);
        expect(place.address).toBeTruthy();
        expect(place.address).not.toMatch(/\d\.\d \(|·/);
      }
      expect(withoutClasses).toEqual(places);
    }
    expect(packs).toBe(2);
  });

  test("a page with a classic local pack reads it as before: every place is one of its business cards", () => {
    // A card: its details block, with the name beside it in 2019 tiles (the tile holds both).
    for (const [page, { cards, titles }] of entries(work.classicPacks)) {
      expect(titles.length).toBeGreaterThan(0);
      for (const title of titles) expect({ page, title, inCard: cards.some((c) => c.includes(title)) }).toEqual({ page, title, inCard: true });
    }
    expect(Object.keys(work.classicPacks).length).toBeGreaterThanOrEqual(8);
  });
});
