import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { LocalPlace } from "@serp/shared";
import { parseHtml } from "../../src/html/index.js";
import { extractLocalPack, parseLocal } from "../../src/kinds/web-local.js";
import { FIXTURES_DIR, fixturesAvailable } from "../fixtures-dir.js";

const fixture = (name: string) => readFileSync(join(dirname(fileURLToPath(import.meta.url)), "../fixtures", name), "utf8");
const captured = (name: string) => readFileSync(join(FIXTURES_DIR, name), "utf8");

/**
 * SPEC §2.5's fields of a local item, and the reference API's optional fields the page shows besides
 * (issue 25: every field the page shows; nothing else).
 */
const SPEC_FIELDS = new Set(["position", "title", "rating", "reviews", "type", "address", "phone", "hours", "website"]);
const REFERENCE_FIELDS = ["place_id", "data_id", "reviews_original", "years_in_business", "description", "service_options", "thumbnail", "gps_coordinates"];
for (const f of REFERENCE_FIELDS) SPEC_FIELDS.add(f);
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
    expect(places[2]).toEqual({ position: 3, title: "Old Town Pastries", place_id: "333", address: "7 Market Sq", phone: null });
  });

  test("names each place by its CID and keeps the review count as shown", () => {
    expect(places.map((p) => p.place_id)).toEqual(["111", "222", "333"]);
    expect(places[0]!.reviews_original).toBe("(1.4K)");
  });

  test("returns only the fields SPEC §2.5 and the reference API name", () => {
    expect(extraFields(places)).toEqual([]);
  });
});

describe("parseLocal on mobile cards (hand-written after the captured packs)", () => {
  const places = parseLocal(fixture("local-mobile-card-edge-cases.html")).local_results;

  test("takes the category from the address line when the rating line has none", () => {
    expect(places[0]).toEqual({
      position: 1,
      title: "Bean There",
      place_id: "1",
      rating: 4.8,
      reviews: 2315,
      reviews_original: "(2,315)",
      type: "Coffee shop",
      address: "1 Harbour Rd",
      phone: null,
      description: "Dine-in·Takeout",
      service_options: { dine_in: true, takeout: true },
    });
  });

  test('reads "No reviews" as no rating and a phone on a line of its own', () => {
    expect(places[1]).toEqual({ position: 2, title: "Drip Lab", place_id: "2", type: "Cafe", address: "22 Quay St", phone: "020 7946 0321" });
  });

  test("gives phone null when the call button carries no number", () => {
    expect(places[2]).toEqual({
      position: 3,
      title: "The Roastery",
      place_id: "3",
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

  test.each(pages)("%s: three places, numbered, with only SPEC and reference fields and a phone or null", (page) => {
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

describe("parseLocal on a pt-BR local results page (hand-written after the issue's 2025 report)", () => {
  const blocks = parseLocal(fixture("local-finder-pt-br-written.html"));
  const places = blocks.local_results;

  test("keeps the sponsored cards apart, never counted as places", () => {
    expect(places.map((p) => [p.position, p.title])).toEqual([
      [1, "Padaria Pão Dourado"],
      [2, "Confeitaria Estrela"],
    ]);
    expect(blocks.local_ads?.map((a) => [a.block_position, a.title])).toEqual([
      [1, "Padaria Anunciante"],
      [2, "Pães & Cia Delivery"],
    ]);
  });

  test('reads "(1,5 mil)" as 1,500 reviews', () => {
    expect(places[0]).toMatchObject({ rating: 4.6, reviews: 1500, reviews_original: "(1,5 mil)", type: "Padaria" });
  });

  test("tells address, years in business, hours and phone apart", () => {
    expect(places[0]).toMatchObject({
      address: "R. Augusta, 1500 - Consolação",
      years_in_business: "15 anos no mercado",
      hours: "Aberto ⋅ Fecha às 20:00",
      phone: "(11) 3333-4444",
    });
    expect(places[1]).toMatchObject({ address: "Al. Santos, 45", years_in_business: "Mais de 10 anos no mercado", hours: "Fechado ⋅ Abre às 07:00" });
  });

  test("reads the service options the card lists, in Portuguese", () => {
    expect(places[0]!.service_options).toEqual({ dine_in: true, takeout: true, delivery: false });
    expect(places[0]!.place_id).toBe("1234567890123");
  });
});
