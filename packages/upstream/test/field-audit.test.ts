/**
 * The field audit's page-side detectors (bench/audit/page.ts, bench/audit/shown.ts) on real
 * cards checked by hand, both ways: a field the card shows is found, one it does not show is not.
 * The audit measures nothing if its detectors say "shown" for everything or for nothing.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ABSOLUTE_DATE, RELATIVE_DATE, capturePlaceholder, loadPage, phoneIn, type Page } from "../../../bench/audit/page.js";
import { organicShown, placeShown, webBlocksShown } from "../../../bench/audit/shown.js";
import { FIXTURES_DIR, fixturesAvailable } from "./fixtures-dir.js";

const run = fixturesAvailable ? describe : describe.skip;

describe("field audit patterns", () => {
  it("tells a date line from other text", () => {
    for (const d of ["Jul 7, 2023", "7 juil. 2023", "2023/07/07", "2023年7月7日", "21 kwietnia 2022"]) expect(ABSOLUTE_DATE.test(d)).toBe(true);
    for (const d of ["7 days ago", "il y a 3 jours", "3 dni temu", "3 日前", "2 часа назад"]) expect(RELATIVE_DATE.test(d)).toBe(true);
    for (const t of ["Coffee is a beverage", "Dec 2023 sales were up", "7 days", "2023", "Top 10 in 2023"]) {
      expect(ABSOLUTE_DATE.test(t) || RELATIVE_DATE.test(t)).toBe(false);
    }
  });

  it("tells a phone number from prices, ratings and years", () => {
    for (const p of ["(303) 447-1040", "031 330 22 90", "020 7439 6333", "+49 40 1234567"]) expect(phoneIn(`Open · ${p}`)).toBe(true);
    // A hotel card: `$121 3.9(796)` is a price, a rating and a review count, no phone.
    for (const t of ["$121 3.9(796)", "Since 1998 · 2023", "3,630,000,000 results", "2023/07/07"]) expect(phoneIn(t)).toBe(false);
  });
});

run("field audit detectors on hand-checked cards (web/coffee-desktop-2023)", () => {
  let page: Page;
  const cards = new Map<string, Record<string, boolean> | undefined>();
  const items = [
    // Wikipedia: inline sitelinks, a 92 px thumbnail (deferred image), an 18 px favicon, no date.
    { position: 1, title: "Coffee", link: "https://en.wikipedia.org/wiki/Coffee" },
    // Britannica: the date line `Jul 7, 2023 —` before its snippet.
    { position: 2, title: "Coffee | Origin, Types, Uses, History, & Facts", link: "https://www.britannica.com/topic/coffee" },
    // 25 Coffee Roasters: a favicon, no thumbnail, no date, no sitelinks.
    { position: 3, title: "25 Coffee Roasters - виробляємо каву свіжої обсмажки та ...", link: "https://25coffeeroasters.ua/" },
    // NCA: a generic globe icon drawn in SVG, not a favicon image; no thumbnail.
    { position: 4, title: "The History of Coffee", link: "https://www.ncausa.org/about-coffee/history-of-coffee" },
  ];

  beforeAll(() => {
    page = loadPage(readFileSync(join(FIXTURES_DIR, "web/coffee-desktop-2023.html"), "utf8"));
    organicShown(page, items).forEach((shown, i) => cards.set(items[i]!.link, shown));
  });

  it("locates every card", () => {
    for (const item of items) expect(cards.get(item.link)).toBeDefined();
  });

  it("finds a date where the card shows one, and none where it does not", () => {
    expect(cards.get("https://www.britannica.com/topic/coffee")!.date).toBe(true);
    expect(cards.get("https://en.wikipedia.org/wiki/Coffee")!.date).toBe(false);
    expect(cards.get("https://25coffeeroasters.ua/")!.date).toBe(false);
  });

  it("tells a thumbnail from a favicon", () => {
    const wiki = cards.get("https://en.wikipedia.org/wiki/Coffee")!;
    expect(wiki.thumbnail).toBe(true);
    expect(wiki.favicon).toBe(true);
    const roasters = cards.get("https://25coffeeroasters.ua/")!;
    expect(roasters.thumbnail).toBe(false);
    expect(roasters.favicon).toBe(true);
    const nca = cards.get("https://www.ncausa.org/about-coffee/history-of-coffee")!;
    expect(nca.favicon).toBe(false);
    expect(nca.thumbnail).toBe(false);
  });

  it("finds sitelinks only on the card that has them", () => {
    expect(cards.get("https://en.wikipedia.org/wiki/Coffee")!.sitelinks).toBe(true);
    expect(cards.get("https://www.britannica.com/topic/coffee")!.sitelinks).toBe(false);
    expect(cards.get("https://25coffeeroasters.ua/")!.sitelinks).toBe(false);
  });

  it("sees the page's blocks, and not the ones it lacks", () => {
    const blocks = webBlocksShown(page);
    expect(blocks).toMatchObject({ related_questions: true, related_searches: true, knowledge_graph: true, local_results: true });
    expect(blocks).toMatchObject({ ai_overview: false, top_stories: false, perspectives: false, ads: false });
  });
});

run("field audit detectors on hand-checked local pack cards", () => {
  const load = (file: string) => loadPage(readFileSync(join(FIXTURES_DIR, file), "utf8"));

  it("a clinic's card: rating, reviews, phone, hours, address, place id, website and directions; no price, no thumbnail", () => {
    const page = load("web/abortion-near-me-desktop-2023.html");
    // `Planned Parenthood - Boulder 3.4(64) · Abortion clinic 2525 Arapahoe Ave Suite C - 200 · (303) 447-1040 Open ⋅ Closes 7 PM … Website Directions`
    const [card] = placeShown(page, [
      { title: "Planned Parenthood - Boulder", place_id: "16167693010129661015" },
      { title: "Boulder Abortion Clinic", place_id: "1305257677139679790" },
      { title: "Boulder Valley Women's Health Center", place_id: "6359389750101082616" },
    ]);
    expect(card).toMatchObject({ rating: true, reviews: true, phone: true, hours: true, address: true, place_id: true, "links.website": true, "links.directions": true });
    expect(card).toMatchObject({ price: false, thumbnail: false, years_in_business: false, gps_coordinates: false });
  });

  it("a hotel's card: price, rating, reviews and a photo; no phone, no hours, no address", () => {
    const page = load("web/hotels-nyc-desktop-2023.html");
    // `The Blakely New York by LuxUrban $121 3.9(796) · 4-star hotel GREAT DEAL 34% less than usual …`
    const shown = placeShown(page, [
      { title: "DoubleTree by Hilton Hotel New York Times Square West" },
      { title: "The Manhattan at Times Square Hotel" },
      { title: "The Blakely New York by LuxUrban" },
    ]);
    expect(shown[2]).toMatchObject({ price: true, rating: true, reviews: true, thumbnail: true });
    expect(shown[2]).toMatchObject({ phone: false, hours: false, address: false, "links.directions": false });
  });
});

run("field audit: a capture's drawn placeholders are no picture (images/hatsune-miku-images-ja-2025)", () => {
  it("the grey SVG boxes labelled with their size count neither as thumbnail nor as icon; a real image does", () => {
    const page = loadPage(readFileSync(join(FIXTURES_DIR, "images/hatsune-miku-images-ja-2025.html"), "utf8"));
    const imgs = page.all.filter((e) => e.tagName === "img");
    const drawn = imgs.filter(capturePlaceholder);
    expect(drawn.length).toBeGreaterThan(100);
    expect(drawn.every((e) => (e.attrs.find((a) => a.name === "src")?.value ?? "").startsWith("data:image/svg+xml"))).toBe(true);
    const fake = { ...drawn[0]!, attrs: [{ name: "src", value: "https://encrypted-tbn0.gstatic.com/images?q=tbn:1" }] } as typeof drawn[number];
    expect(capturePlaceholder(fake)).toBe(false);
  });
});
