/**
 * The organic fields of issue 25 on the shared captured pages (web/, web-mobile/, web-nojs/): for
 * each field family, the share of results whose card shows it (told by shape, bench/audit/organic.ts)
 * that our JSON gives it to, with floors under the figures measured by the organic audit
 * (bench/audit/organic.ts), and spot checks on named real results. The pages are read in a Node
 * process of its own (the audit's organicResults, through ../in-node.ts); the checks are here.
 */
import type { OrganicResult } from "@serp/shared";
import { fixturesAvailable } from "../fixtures-dir.js";
import { inNode } from "../in-node.js";
import { type AuditedResult, type Field, hasField } from "../../../../bench/audit/organic-data.js";

const describeIfFixtures = fixturesAvailable ? describe : describe.skip;

describeIfFixtures("organic result fields on the shared pages", () => {
  let results: (Omit<AuditedResult, "shows"> & { shows: Set<Field> })[] = [];
  beforeAll(async () => {
    const read = await inNode<AuditedResult[]>(new URL("../../../../bench/audit/organic.ts", import.meta.url), "organicResults");
    results = read.map((r) => ({ ...r, shows: new Set(r.shows) }));
  }, 600_000);
  const on = (page: string, position: number): OrganicResult => {
    const r = results.find((x) => x.page === page && x.result.position === position);
    if (!r) throw new Error(`no result #${position} on ${page}`);
    return r.result;
  };
  /** Cards showing the field, and how many of them our JSON gives it to. */
  const figures = (field: Field) => {
    const shown = results.filter((r) => r.card && r.shows.has(field));
    return { shown: shown.length, found: shown.filter((r) => hasField(r.result, field)).length };
  };
  const share = (field: Field) => {
    const { shown, found } = figures(field);
    return shown ? found / shown : 0;
  };

  test("every result's card is found on its page (the audit reads what each card shows)", () => {
    expect(results.length).toBeGreaterThan(400);
    expect(results.filter((r) => !r.card)).toEqual([]);
  });

  test("no field is ever null or empty: a field the page lacks is left out", () => {
    for (const { result } of results) {
      for (const [key, value] of Object.entries(result)) {
        expect({ key, value }).not.toEqual({ key, value: null });
        if (typeof value === "string" || Array.isArray(value)) expect({ key, empty: value.length === 0 }).toEqual({ key, empty: false });
      }
    }
  });

  describe("date", () => {
    test("found for ≥ 95% of the cards whose snippet starts with a date (measured 99%: 90 of 91)", () => {
      expect(figures("date").shown).toBeGreaterThanOrEqual(80);
      expect(share("date")).toBeGreaterThanOrEqual(0.95);
    });

    test("is taken off the front of the snippet, whatever the dash and the language", () => {
      expect(on("web/donald-trump-desktop-2026.html", 1)).toMatchObject({ date: "2 hours ago" });
      expect(on("web/donald-trump-desktop-2026.html", 1).snippet).toMatch(/^Donald John Trump \(born June 14, 1946\)/);
      expect(on("web/klimt-peintures-desktop-fr-2022.html", 8)).toMatchObject({ date: "28 oct. 2019" });
      expect(on("web/klimt-peintures-desktop-fr-2022.html", 8).snippet).toMatch(/^Gustav Klimt \(1862-1918\)/);
      expect(on("web/rent-car-uae-desktop-ru-2024.html", 4)).toMatchObject({ date: "21 сент. 2023 г." });
      for (const { result } of results) if (result.date && result.snippet) expect(result.snippet.startsWith(result.date)).toBe(false);
    });

    test("a scholarly line in the date's place gives the year as date and its facts to the rich snippet", () => {
      expect(on("web/cancer-deaths-per-year-usa-desktop-2025.html", 9)).toMatchObject({
        date: "2024",
        rich_snippet: { top: { extensions: ["by RL Siegel", "2024", "Cited by 3811"], detected_extensions: { cited_by: 3811 } } },
      });
    });
  });

  describe("rich_snippet", () => {
    test("found for ≥ 85% of the cards showing a rating, price or facts line (measured 90%: 62 of 69)", () => {
      expect(figures("rich_snippet").shown).toBeGreaterThanOrEqual(60);
      expect(share("rich_snippet")).toBeGreaterThanOrEqual(0.85);
    });

    test("reads a product line's rating, price range and stock below the snippet", () => {
      expect(on("web/dell-xps-13-buy-desktop-2023.html", 1).rich_snippet).toEqual({
        bottom: {
          extensions: ["Rating: 4.1", "$1,049.00 to $1,499.00", "$6 2–8 day delivery", "30-day returns", "In stock"],
          detected_extensions: { rating: 4.1, price_from: 1049, price_to: 1499, currency: "$" },
        },
      });
      expect(on("web/rent-car-uae-desktop-ru-2024.html", 27).rich_snippet?.bottom?.detected_extensions).toEqual({
        rating: 7.7, reviews: 370, price_from: 11.82, price_to: 232.25, currency: "$",
      });
    });

    test("a rating line in the snippet's place (basic page) is the rich snippet, and the text below it the snippet", () => {
      const matrix = on("web-nojs/matrix-nojs-2023.html", 1);
      expect(matrix.snippet).toMatch(/^When a beautiful stranger leads computer hacker Neo/);
      expect(matrix.rich_snippet?.top).toEqual({ extensions: ["Rating 8.7/10 (1,957,975)"], detected_extensions: { rating: 8.7, reviews: 1957975 } });
      for (const { result } of results) expect(result.snippet ?? "").not.toMatch(/^Rating\s+\d/);
    });

    test("reads facts rows, a <br> apart on the basic page; a list snippet's items are not facts", () => {
      expect(on("web-mobile/coffee-mobile-2023.html", 1).rich_snippet).toEqual({
        bottom: { extensions: ["Region of origin: Kaffa in Horn of Africa", "Introduced: 15th century"] },
      });
      expect(on("web-nojs/matrix-nojs-2023.html", 3).rich_snippet?.bottom?.extensions).toEqual([
        "Production companies: Warner Bros. Village Roadshow Pictures; Groucho II Film Partnership; Silver Pictures",
        "Budget: $63 million",
      ]);
      expect(on("web/movies-near-me-desktop-2023.html", 1)).not.toHaveProperty("rich_snippet");
      // The engine's note on missing query words is no fact of the page.
      expect(on("web/abortion-near-me-desktop-2023.html", 1)).not.toHaveProperty("rich_snippet");
    });
  });

  describe("sitelinks", () => {
    test("found for ≥ 90% of the cards showing links of their own (measured 100%: 44 of 44)", () => {
      expect(figures("sitelinks").shown).toBeGreaterThanOrEqual(40);
      expect(share("sitelinks")).toBeGreaterThanOrEqual(0.9);
    });

    test("reads 2025 list rows and 2023 mobile rows; not 'Read more', translations, key moments or links inside facts", () => {
      expect(on("web/quantum-field-theory-desktop-ja-2025.html", 2).sitelinks?.inline?.slice(0, 2)).toEqual([
        { title: "What is QFT?", link: "https://plato.stanford.edu/entries/quantum-field-theory/#WhatQFT" },
        { title: "Axiomatic Reformulations of...", link: "https://plato.stanford.edu/entries/quantum-field-theory/#AxioRefoQFTTheiInteSign" },
      ]);
      const mobile = on("web-mobile/coffee-mobile-2023.html", 1).sitelinks?.inline ?? [];
      expect(mobile[0]).toEqual({ title: "History", link: "https://en.wikipedia.org/wiki/History_of_coffee" });
      expect(mobile.map((l) => l.title)).not.toContain("Horn of Africa");
      expect(on("web/why-is-the-sky-blue-desktop-2026.html", 2)).not.toHaveProperty("sitelinks");
      expect(on("web/why-is-the-sky-blue-desktop-2026.html", 6)).not.toHaveProperty("sitelinks");
      expect(on("web/hotels-nyc-desktop-2023.html", 8)).not.toHaveProperty("sitelinks");
      for (const { result } of results) {
        for (const l of result.sitelinks?.inline ?? []) expect(l.link).not.toMatch(/#:~:text=|^https?:\/\/(?:www\.)?google\./);
        expect(result.snippet ?? "").not.toMatch(/Read more$/);
      }
    });
  });

  describe("favicon and thumbnail", () => {
    test("favicon for ≥ 95% of the cards with an icon beside the site's name, thumbnail for ≥ 90% of those with a picture", () => {
      expect(figures("favicon").shown).toBeGreaterThanOrEqual(300);
      expect(share("favicon")).toBeGreaterThanOrEqual(0.95);
      expect(figures("thumbnail").shown).toBeGreaterThanOrEqual(180);
      expect(share("thumbnail")).toBeGreaterThanOrEqual(0.9);
    });

    test("the icon is the page's data URI; a placeholder picture becomes the URL or data URI the page's script sets", () => {
      const coffee = on("web/coffee-desktop-2023.html", 2);
      expect(coffee.favicon).toMatch(/^data:image\/png;base64,iVBOR/);
      // dimg_11: a 1×1 placeholder, its URL named in google.ldi.
      expect(coffee.thumbnail).toMatch(/^https:\/\/encrypted-tbn0\.gstatic\.com\/images\?q=tbn:ANd9GcTteEQWon838YfFccHP0VOLqz6jUG81vb0VOkP2n/);
      expect(on("web/batman-actors-desktop-pl-2022.html", 1).thumbnail).toMatch(/^data:image\/jpeg;base64,\/9j\//);
      for (const { result } of results) {
        for (const src of [result.favicon, result.thumbnail]) if (src) expect(src).not.toMatch(/^data:image\/gif;base64,R0lGODlhAQABA/);
      }
    });
  });

  describe("snippet_highlighted_words", () => {
    test("found for ≥ 95% of the cards with bold words (measured 100%: 291 of 291)", () => {
      expect(figures("snippet_highlighted_words").shown).toBeGreaterThanOrEqual(250);
      expect(share("snippet_highlighted_words")).toBeGreaterThanOrEqual(0.95);
    });

    test("the snippet's bold words in page order, repeats kept, the date not among them", () => {
      expect(on("web/coffee-desktop-2023.html", 2).snippet_highlighted_words).toEqual(["coffee", "coffee", "Coffee"]);
      expect(on("web/donald-trump-desktop-2026.html", 1).snippet_highlighted_words).toEqual([
        "an American politician, media personality, and businessman",
      ]);
    });
  });

  describe("redirect_link", () => {
    test("given for every result whose title links through /url?q= or reports its click to /url? (measured 436 of 436), and only those", () => {
      expect(figures("redirect_link")).toEqual({ shown: 436, found: 436 });
      expect(results.filter((r) => !r.shows.has("redirect_link") && r.result.redirect_link)).toEqual([]);
    });

    test("is the redirect as an absolute URL; link is its target", () => {
      expect(on("web-nojs/matrix-nojs-2023.html", 1)).toMatchObject({
        link: "https://www.imdb.com/title/tt0133093/",
        redirect_link: expect.stringMatching(/^https:\/\/www\.google\.com\/url\?q=https:\/\/www\.imdb\.com\/title\/tt0133093\/&sa=U&/),
      });
      // The full page links to the target and reports the click to the redirect (`ping`).
      expect(on("web/coffee-desktop-2023.html", 1)).toMatchObject({
        link: "https://en.wikipedia.org/wiki/Coffee",
        redirect_link: "https://www.google.com/url?sa=t&source=web&rct=j&opi=89978449&url=https://en.wikipedia.org/wiki/Coffee&ved=2ahUKEwjUnuyYhauAAxWWJxAIHUHeCLUQFnoECA8QAQ&sqi=2",
      });
    });
  });

  describe("social results", () => {
    test("a follower or comment figure in the displayed link's place becomes a fact; displayed_link is the breadcrumb", () => {
      expect(on("web/donald-trump-desktop-2026.html", 3)).toMatchObject({
        displayed_link: "https://x.com › realDonaldTrump",
        rich_snippet: { top: { extensions: ["109.9M+ followers"], detected_extensions: { followers: 109900000 } } },
      });
      expect(on("web/why-is-the-sky-blue-desktop-2026.html", 3)).toMatchObject({
        date: "2 years ago",
        rich_snippet: { top: { extensions: ["160+ comments"], detected_extensions: { comments: 160 } } },
      });
      for (const { result } of results) expect(result.displayed_link ?? "").not.toMatch(/followers|comments · |reactions · /);
    });
  });
});
