import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { NewsItem } from "@serp/shared";
import { parseNews } from "../../src/kinds/web-news.js";
import { FIXTURES_DIR, fixturesAvailable } from "../fixtures-dir.js";

const fixture = (name: string) => readFileSync(join(dirname(fileURLToPath(import.meta.url)), "../fixtures", name), "utf8");

/** SPEC §2.5's fields of a news item, and the reference API's `favicon` and `iso_date` where the card shows them (issue 25). */
const SPEC_FIELDS = new Set(["position", "title", "link", "source", "date", "snippet", "thumbnail", "favicon", "iso_date"]);
const extraFields = (items: NewsItem[]) => items.flatMap((n) => Object.keys(n).filter((k) => !SPEC_FIELDS.has(k)));

describe("parseNews on the basic HTML layout (hand-written after the documented format)", () => {
  const items = parseNews(fixture("news-basic-layout-written-after-docs.html")).news_results;

  test("reads each article block and skips related searches and links back to search", () => {
    expect(items.map((n) => [n.position, n.title])).toEqual([
      [1, "Solar output hits a record in June"],
      [2, "Panel prices fall for a third quarter"],
    ]);
  });

  test("unwraps /url?q= links, percent-encoding included", () => {
    expect(items[0]!.link).toBe("https://news.example.com/energy/2025/06/solar-record?ref=rss");
    expect(items[1]!.link).toBe("https://www.daily.example.org/business/panel-prices");
  });

  test("reads source, age, snippet and thumbnail", () => {
    expect(items[0]).toEqual({
      position: 1,
      title: "Solar output hits a record in June",
      link: "https://news.example.com/energy/2025/06/solar-record?ref=rss",
      source: "Example News",
      date: "3 hours ago",
      snippet:
        "Grid operators reported the highest solar share on record as panels covered more than half of demand at noon...",
      thumbnail: "https://encrypted-tbn0.gstatic.com/images?q=tbn:ANd9GcSolar1&s=10",
    });
  });

  test("gives snippet null when none is shown and leaves the thumbnail out", () => {
    expect(items[1]).toEqual({
      position: 2,
      title: "Panel prices fall for a third quarter",
      link: "https://www.daily.example.org/business/panel-prices",
      source: "The Daily Example",
      date: "2 days ago",
      snippet: null,
    });
  });
});

describe("parseNews on the WML layout (hand-written after the documented format)", () => {
  const items = parseNews(fixture("news-wml-layout-written-after-docs.html")).news_results;

  test("reads each /url?q= link once, skipping search links and links without a title", () => {
    expect(items.map((n) => n.link)).toEqual([
      "https://wire.example.net/politics/turnout-2026",
      "https://www.gazette.example.com/local/ballot-guide",
    ]);
  });

  test("reads title, source, age and thumbnail from inside the link; snippet is null", () => {
    expect(items[0]).toEqual({
      position: 1,
      title: "Turnout climbs in early voting",
      link: "https://wire.example.net/politics/turnout-2026",
      source: "Example Wire",
      date: "45 minutes ago",
      snippet: null,
      thumbnail: "https://encrypted-tbn0.gstatic.com/images?q=tbn:ANd9GcWire1",
    });
    expect(items[1]).toMatchObject({ source: "The Example Gazette", date: "1 day ago", snippet: null });
    expect(items[1]).not.toHaveProperty("thumbnail");
  });
});

describe("parseNews on rendered cards served raw (hand-written after the captured cards)", () => {
  const items = parseNews(fixture("news-cards-scripted-thumbnail.html")).news_results;

  test("takes the thumbnail a script sets in place of the placeholder, not the publisher icon", () => {
    expect(items[0]).toMatchObject({
      title: "New ferry line opens next month",
      link: "https://port.example.com/news/new-ferry-line",
      source: "Port Example",
      date: "5 hours ago",
      thumbnail: "data:image/jpeg;base64,/9j/4AAQSkZJRgABAQAAAQ==",
    });
  });

  test("gives snippet null and no thumbnail when the card shows neither", () => {
    expect(items[1]).toEqual({
      position: 2,
      title: "Dredging work delayed again",
      link: "https://coast.example.org/harbour-dredging",
      source: "Coast Example",
      date: "2 weeks ago",
      snippet: null,
    });
  });
});

test("a page without articles gives an empty list", () => {
  expect(parseNews("<html><body><div id=rso></div></body></html>")).toEqual({ news_results: [] });
});

const describeCaptured = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) console.warn(`news parser: captured pages not found at ${FIXTURES_DIR}; skipping real-page tests.`);

describeCaptured("parseNews on the captured tbm=nws page (SingleFile, 2025)", () => {
  const items = () => parseNews(readFileSync(join(FIXTURES_DIR, "news/schloss-johannisberg-news-2025.html"), "utf8")).news_results;

  test("reads all ten cards with only SPEC and reference fields", () => {
    const news = items();
    expect(news.map((n) => n.position)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(extraFields(news)).toEqual([]);
  });

  test("keeps the publisher's 16px icon as favicon, and an absolute date as iso_date", () => {
    for (const n of items()) expect(n.favicon).toMatch(/^data:image\//);
    const dated = items().find((n) => n.date === "Dec 13, 2024");
    expect(dated?.iso_date).toBe("2024-12-13T00:00:00.000Z");
    for (const n of items().filter((i) => /ago$/.test(i.date))) expect(n.iso_date).toBeUndefined();
  });

  test("every card has a snippet and its inline JPEG thumbnail (not the 16px publisher icon)", () => {
    for (const n of items()) {
      expect(typeof n.snippet).toBe("string");
      expect(n.thumbnail).toMatch(/^data:image\/jpeg;base64,/);
    }
  });

  test("reads the last card's publisher and absolute date", () => {
    expect(items()[9]).toMatchObject({
      title: "Schloss Johannisberg unter weltbesten Weinmarken",
      source: "Falstaff",
      date: "Apr 10, 2025",
    });
  });
});
