import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { LocalPlace } from "@serp/shared";
import { parseHtml } from "../../src/html/index.js";
import { extractLocalPack, parseLocal } from "../../src/kinds/web-local.js";
import { FIXTURES_DIR, fixturesAvailable } from "../fixtures-dir.js";

const fixture = (name: string) => readFileSync(join(dirname(fileURLToPath(import.meta.url)), "../fixtures", name), "utf8");
const captured = (name: string) => readFileSync(join(FIXTURES_DIR, name), "utf8");

/** SPEC §2.5: a local item has exactly these fields. */
const SPEC_FIELDS = new Set(["position", "title", "rating", "reviews", "type", "address", "phone", "hours", "website"]);
const extraFields = (places: LocalPlace[]) => places.flatMap((p) => Object.keys(p).filter((k) => !SPEC_FIELDS.has(k)));

describe("parseLocal on desktop cards (hand-written after the captured packs)", () => {
  const places = parseLocal(fixture("local-pack-edge-cases.html")).local_results;

  test("reads every named card in order and skips a tile without a name", () => {
    expect(places.map((p) => [p.position, p.title])).toEqual([
      [1, "Bäckerei Sonnenschein"],
      [2, "Corner Bread Co."],
      [3, "Old Town Pastries"],
    ]);
  });

  test("reads a comma decimal rating and (1.4K) reviews, skipping the price level before the category", () => {
    expect(places[0]).toMatchObject({ rating: 4.6, reviews: 1400, type: "Bäckerei" });
  });

  test("gives phone null when the card shows none", () => {
    expect(places[0]!.phone).toBeNull();
    expect(places[2]!.phone).toBeNull();
  });

  test("unwraps a /url?q= Website link", () => {
    expect(places[0]!.website).toBe("https://sonnenschein.example.de/");
    expect(places[1]!.website).toBe("https://cornerbread.example.com/?utm_source=gmb");
  });

  test("keeps the street but not where the shop sits, nor how long it has been in business", () => {
    expect(places[0]!.address).toBe("Hauptstraße 12");
    expect(places[1]).toMatchObject({ address: "500 Main St", phone: "+1 512-555-0142" });
  });

  test("reads the opening status, not a review quote", () => {
    expect(places[0]!.hours).toBe("Geöffnet ⋅ Schließt um 18:00");
    expect(places[1]!.hours).toBe("Temporarily closed");
  });

  test("leaves out what a card does not show", () => {
    expect(places[2]).toEqual({ position: 3, title: "Old Town Pastries", address: "7 Market Sq", phone: null });
  });

  test("returns only the fields SPEC §2.5 names", () => {
    expect(extraFields(places)).toEqual([]);
  });
});

describe("parseLocal on mobile cards (hand-written after the captured packs)", () => {
  const places = parseLocal(fixture("local-mobile-card-edge-cases.html")).local_results;

  test("takes the category from the address line when the rating line has none", () => {
    expect(places[0]).toEqual({
      position: 1,
      title: "Bean There",
      rating: 4.8,
      reviews: 2315,
      type: "Coffee shop",
      address: "1 Harbour Rd",
      phone: null,
    });
  });

  test('reads "No reviews" as no rating and a phone on a line of its own', () => {
    expect(places[1]).toEqual({ position: 2, title: "Drip Lab", type: "Cafe", address: "22 Quay St", phone: "020 7946 0321" });
  });

  test("gives phone null when the call button carries no number", () => {
    expect(places[2]).toEqual({
      position: 3,
      title: "The Roastery",
      address: "Via Roma, 5",
      phone: null,
      hours: "Chiuso ⋅ Apre alle ore 7",
    });
  });
});

describe("extractLocalPack", () => {
  test("returns the places and the link to the full local results", () => {
    const pack = extractLocalPack(parseHtml(fixture("local-pack-edge-cases.html")));
    expect(pack?.places).toHaveLength(3);
    expect(pack?.more_locations_link).toBe("https://www.google.com/search?tbs=lf:1,lf_ui:9&tbm=lcl&q=bakery&rflfq=1&num=10");
  });

  test("leaves the link out when the pack has none", () => {
    const pack = extractLocalPack(parseHtml(fixture("local-mobile-card-edge-cases.html")));
    expect(pack?.places).toHaveLength(3);
    expect(pack).not.toHaveProperty("more_locations_link");
  });

  test("is undefined on a page without business cards", () => {
    expect(extractLocalPack(parseHtml("<html><body><div id=rso><div class=g>x</div></div></body></html>"))).toBeUndefined();
  });
});

const describeCaptured = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) console.warn(`local parser: captured pages not found at ${FIXTURES_DIR}; skipping real-page tests.`);

describeCaptured("parseLocal on captured pages with a local pack", () => {
  const pages = [
    "web/abortion-near-me-desktop-2023.html",
    "web/coffee-desktop-2023.html",
    "web/dubai-schokolade-hamburg-desktop-2026-sanitized.html",
    "web/kaffeemaschine-kaufen-desktop-de-2019.html",
    "web/louis-vuitton-bags-desktop-2022.html",
    "web/movement-desktop-2024.html",
    "web/plombier-paris-desktop-fr-2019.html",
    "web/rudsak-desktop-en-ca-2021.html",
    "web-mobile/coffee-mobile-2023.html",
    "web-mobile/lacoste-mobile-android-it-2019.html",
    "web-mobile/plombier-nantes-mobile-fr-2018.html",
    "web-nojs/coffee-nojs-2023.html",
    "web-nojs/hotels-nyc-nojs-2023.html",
  ];

  test.each(pages)("%s: three places, numbered, with only SPEC fields and a phone or null", (page) => {
    const places = parseLocal(captured(page)).local_results;
    expect(places.map((p) => p.position)).toEqual([1, 2, 3]);
    expect(extraFields(places)).toEqual([]);
    for (const p of places) expect(p.phone === null || typeof p.phone === "string").toBe(true);
  });

  test("reads opening status in several languages and forms", () => {
    const hours = (page: string) => parseLocal(captured(page)).local_results.map((p) => p.hours);
    expect(hours("web/louis-vuitton-bags-desktop-2022.html")).toEqual(["Open ⋅ Closes 8PM", "Temporarily closed", "Open ⋅ Closes 8PM"]);
    expect(hours("web/plombier-paris-desktop-fr-2019.html")).toEqual(["Ouvert 24 h/24", "Fermé", "Ouvert 24 h/24"]);
    expect(hours("web/dubai-schokolade-hamburg-desktop-2026-sanitized.html")[0]).toBe("Closed · Opens 10 AM Tue");
  });

  test("leaves rating, reviews and category out of cards that show none", () => {
    for (const p of parseLocal(captured("web/rudsak-desktop-en-ca-2021.html")).local_results) {
      expect(p).not.toHaveProperty("rating");
      expect(p).not.toHaveProperty("reviews");
      expect(p).not.toHaveProperty("type");
    }
  });

  test("does not take 'years in business' for an address", () => {
    expect(parseLocal(captured("web/movement-desktop-2024.html")).local_results[0]).not.toHaveProperty("address");
  });

  test("finds the more-places link of desktop and mobile packs", () => {
    const more = (page: string) => extractLocalPack(parseHtml(captured(page)))?.more_locations_link;
    expect(more("web/abortion-near-me-desktop-2023.html")).toBe(
      "https://www.google.com/search?tbs=lf:1,lf_ui:2&tbm=lcl&q=abortion+near+me&rflfq=1&num=10&sa=X&ved=2ahUKEwjEuIWj447_AhUVm2oFHcVcC6QQjGp6BAgdEAE",
    );
    expect(more("web/dubai-schokolade-hamburg-desktop-2026-sanitized.html")).toBe(
      "https://www.google.com/search?q=dubai+schokolade+hamburg&udm=1&lsack=xlrdaY-ELNfH9u8Ph77_wAQ",
    );
    expect(more("web-mobile/plombier-nantes-mobile-fr-2018.html")).toBe(
      "https://www.google.com/search?client=ubuntu&hs=ExG&q=plombier&ibp=gwp%3B0,6&rflfq=1&num=10",
    );
  });

  test("keeps the price a card shows in a web page's pack only (a price level, a hotel's nightly price)", () => {
    const pack = (page: string) => extractLocalPack(parseHtml(captured(page)))?.places ?? [];
    expect(pack("web-nojs/coffee-nojs-2023.html").map((p) => p.price)).toEqual([undefined, "$$", undefined]);
    expect(pack("web/hotels-nyc-desktop-2023.html").map((p) => p.price)).toEqual(["$152", "$116", "$121"]);
    expect(parseLocal(captured("web-nojs/coffee-nojs-2023.html")).local_results.map((p) => "price" in p)).toEqual([false, false, false]);
  });

  test("finds no pack in a single-place knowledge panel", () => {
    expect(extractLocalPack(parseHtml(captured("web/central-park-new-york-desktop-2024.html")))).toBeUndefined();
  });
});
