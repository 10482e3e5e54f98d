/**
 * Issue 25 ("every field the page shows") for images, news, shopping and local cards, on the shared
 * captured pages: spot checks of each field family read from where the page keeps it (a data
 * script, an inline image, map data), and floors under the kinds audit's measure (bench/audit/kinds.ts)
 * of the share of shown fields that reach the output.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { kindShares, type FieldFigure } from "../../../../bench/audit/kinds.js";
import { parseHtml } from "../../src/html/index.js";
import { parseImages } from "../../src/kinds/web-images.js";
import { extractLocalPack } from "../../src/kinds/web-local.js";
import { parseNews } from "../../src/kinds/web-news.js";
import { parseShopping } from "../../src/kinds/web-shopping-search.js";
import { FIXTURES_DIR, fixturesAvailable } from "../fixtures-dir.js";
import { inNode } from "../in-node.js";

const captured = (name: string) => readFileSync(join(FIXTURES_DIR, name), "utf8");
const describeCaptured = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) console.warn(`kind fields: captured pages not found at ${FIXTURES_DIR}; skipping.`);

describeCaptured("images: the grid's script data and the product mark", () => {
  const grid2021 = () => parseImages(captured("images/string-term-images-desktop-2021-wayback.html")).images_results;

  test("a 2021 tile whose img is a 1×1 placeholder gets its thumbnail, original and size from the data script entry keyed by its id", () => {
    const first = grid2021()[0]!;
    expect(first).toMatchObject({
      title: "Dictionary as a string",
      link: "https://nlp.stanford.edu/IR-book/html/htmledition/dictionary-as-a-string-1.html",
      thumbnail: "https://encrypted-tbn0.gstatic.com/images?q=tbn:ANd9GcRK9nscxaC5J_IKNJfvkphRaXOXHjLOm5-TpQUb4HKMr39k-yaU82xqUMqlVopQXc3Nk5M&usqp=CAU",
      original: "https://nlp.stanford.edu/IR-book/html/htmledition/img259.png",
      original_width: 611,
      original_height: 345,
    });
  });

  test("every 2021 tile has a thumbnail URL; an original that is not a URL (a PDF's x-raw-image) is left out, not null", () => {
    const items = grid2021();
    expect(items.every((i) => i.thumbnail?.startsWith("https://"))).toBe(true);
    const pdf = items.find((i) => i.link?.endsWith("lmse1819_08_blatt.pdf"))!;
    expect(pdf).not.toHaveProperty("original");
    expect(pdf.original_width).toBe(1600);
  });

  test("is_product is true for tiles whose site line shows availability, false for the others of the same grids", () => {
    const items = grid2021();
    expect(items.filter((i) => i.is_product).map((i) => i.source)).toEqual([
      "wm-strategy.com · In stock",
      "aliexpress.com · In stock",
      "aliexpress.com · In stock",
    ]);
    expect(items[0]!.is_product).toBe(false);
    const miku = parseImages(captured("images/hatsune-miku-images-ja-2025.html")).images_results;
    expect(miku[1]).toMatchObject({ source: "Vocaloid · 在庫あり", is_product: true, in_stock: true });
    expect(miku.filter((i) => i.is_product)).toHaveLength(17);
    // in_stock follows the availability words; tiles that are no product have none.
    expect(items.filter((i) => i.is_product).every((i) => i.in_stock === true)).toBe(true);
    expect(miku.filter((i) => i.source?.includes("在庫なし")).every((i) => i.in_stock === false)).toBe(true);
    expect(miku.filter((i) => !i.is_product).some((i) => "in_stock" in i)).toBe(false);
  });

  test("the 2025 capture's drawn placeholders are no thumbnail, and basic grids, which cannot show the mark, carry no is_product", () => {
    const miku = parseImages(captured("images/hatsune-miku-images-ja-2025.html")).images_results;
    expect(miku.some((i) => "thumbnail" in i)).toBe(false);
    for (const page of ["images/boulevard-records-images-basic-2017-wayback.html", "images/green-capital-energy-images-basic-2022-wayback.html"]) {
      const items = parseImages(captured(page)).images_results;
      expect(items.length).toBeGreaterThan(0);
      expect(items.some((i) => "is_product" in i)).toBe(false);
    }
  });
});

describeCaptured("news: pictures the page loads by script", () => {
  test("2019 cards below the first screen get their thumbnail from google.ldi, keyed by the picture's id", () => {
    const items = parseNews(captured("news/win10-iso-news-2019-wayback.html")).news_results;
    expect(items.every((i) => i.thumbnail)).toBe(true);
    const lazy = items.find((i) => i.link === "https://news.mydrivers.com/1/639/639974.htm")!;
    expect(lazy.thumbnail).toMatch(/^https:\/\/encrypted-tbn0\.gstatic\.com\/images\?q=tbn:ANd9GcTjrmBc5kZXG/);
    // Relative ages stay without iso_date; absolute dates have one.
    expect(items.find((i) => i.date === "3 weeks ago")).not.toHaveProperty("iso_date");
    expect(lazy.iso_date).toBe("2019-08-07T00:00:00.000Z");
  });
});

describeCaptured("shopping: the product's picture", () => {
  test("each 2021 list card keeps the picture it inlines as a data URI", () => {
    for (const page of ["shopping/ean-889894929969-shopping-pt-br-2021.html", "shopping/ean-7891114090307-shopping-pt-br-2021.html"]) {
      const items = parseShopping(captured(page)).shopping_results;
      expect(items).toHaveLength(2);
      for (const item of items) expect(item.thumbnail).toMatch(/^data:image\/webp;base64,[A-Za-z0-9+/]{100}/);
    }
  });
});

describeCaptured("local: positions from the page's map data, and photos", () => {
  const places = (page: string) => extractLocalPack(parseHtml(captured(page)))!.places;

  test("2023 packs: latitude and longitude after the place's results link", () => {
    expect(places("web/abortion-near-me-desktop-2023.html")[0]).toMatchObject({
      place_id: "16167693010129661015",
      gps_coordinates: { latitude: 40.01522, longitude: -105.26261 },
    });
  });

  test("2019 packs: the named latitude and longitude fields; 0,0 is no position", () => {
    expect(places("web/kaffeemaschine-kaufen-desktop-de-2019.html")[0]!.gps_coordinates).toEqual({ latitude: 46.9631507, longitude: 7.465038300000001 });
    const paris = places("web/plombier-paris-desktop-fr-2019.html");
    expect(paris[0]).not.toHaveProperty("gps_coordinates");
    expect(paris[1]!.gps_coordinates).toEqual({ latitude: 48.865064, longitude: 2.3775939999999998 });
  });

  test("2024 map pins: degrees × 10⁷ as unsigned 32-bit numbers, keyed by the place id", () => {
    const movement = places("web/movement-desktop-2024.html");
    expect(movement[1]).toMatchObject({ place_id: "14385657924121870699", gps_coordinates: { latitude: 32.7899387, longitude: -96.8231336 } });
    // Its first card's id is nowhere in the map data: no position rather than a guess.
    expect(movement[0]).not.toHaveProperty("gps_coordinates");
  });

  test("pages without map data (hotel packs, whose pins name no card; the basic page) give no position", () => {
    for (const page of ["web/hotels-nyc-desktop-2023.html", "web-nojs/coffee-nojs-2023.html"]) {
      expect(places(page).some((p) => "gps_coordinates" in p)).toBe(false);
    }
  });

  test("photos: a mobile card's carousel beside its link, and a desktop photo its script sets by URL", () => {
    for (const p of places("web-mobile/coffee-mobile-2023.html")) expect(p.thumbnail).toMatch(/^data:image\/jpeg;base64,/);
    expect(places("web/coffee-desktop-2023.html")[0]!.thumbnail).toBe("https://lh5.googleusercontent.com/p/AF1QipOc_qKFnionGDb5bHSmicAF-AcJG9PkpYhPXQGG=w92-h92-n-k-no");
  });
});

describeCaptured("the share of shown fields returned (bench/audit/kinds.ts), per kind and for the fields issue 25 names", () => {
  let figures: FieldFigure[];
  // Every captured page of the four kinds, measured in a Node process of its own (../in-node.ts).
  beforeAll(async () => {
    figures = await inNode<FieldFigure[]>(new URL("../../../../bench/audit/kinds.ts", import.meta.url), "measure");
  }, 600_000);
  const figure = (kind: string, field: string) => figures.find((f) => f.kind === kind && f.field === field)!;

  test.each([
    ["images", 0.95],
    ["news", 0.9],
    ["shopping", 0.9],
    ["local", 0.85],
  ])("%s: at least %d of the fields its cards show", (kind, floor) => {
    expect(kindShares(figures).get(kind)).toBeGreaterThanOrEqual(floor);
  });

  // Measured on 2026-11-27 (before → after): the cards showing each field, and the share returned.
  test.each([
    ["images", "thumbnail", 140, 1],
    ["images", "is_product", 20, 1],
    ["images", "original", 91, 1],
    ["news", "thumbnail", 30, 1],
    ["news", "iso_date", 12, 1],
    ["shopping", "thumbnail", 4, 1],
    ["local", "gps_coordinates", 16, 1],
    ["local", "thumbnail", 18, 1],
  ])("%s %s: shown on %d cards, returned for a share of at least %d", (kind, field, shown, share) => {
    const f = figure(kind as string, field as string);
    expect(f.shown).toBeGreaterThanOrEqual(shown as number);
    expect(f.returned / f.shown).toBeGreaterThanOrEqual(share as number);
  });
});
