/**
 * Paid placements' links: `link` is only ever the destination (from the redirect's `adurl`), and a
 * redirect without one is kept as `tracking_link` — on hand-written hrefs and on the captured
 * shopping pages, whose offers link through `/aclk?…&adurl=` with the destination left empty.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { adDestination, placementLinks } from "../../src/values.js";
import { parseSellers, parseShopping, parseWebSearch } from "../../src/kinds/index.js";
import { FIXTURES_DIR, fixturesAvailable } from "../fixtures-dir.js";

describe("placementLinks", () => {
  test.each([
    ["a plain merchant link", "https://shop.example/p/1", { link: "https://shop.example/p/1" }],
    [
      "a redirect with adurl",
      "https://www.google.com/aclk?sa=L&ai=X&adurl=https://shop.example/p/2%3Fref%3Dad",
      { link: "https://shop.example/p/2?ref=ad", tracking_link: "https://www.google.com/aclk?sa=L&ai=X&adurl=https://shop.example/p/2%3Fref%3Dad" },
    ],
    ["a relative redirect with an empty adurl", "/aclk?sa=L&ai=Y&adurl=", { tracking_link: "https://www.google.com/aclk?sa=L&ai=Y&adurl=" }],
    [
      "an ad-services redirect without adurl",
      "https://www.googleadservices.com/pagead/aclk?sa=L&ai=Z",
      { tracking_link: "https://www.googleadservices.com/pagead/aclk?sa=L&ai=Z" },
    ],
    [
      "a redirect whose adurl is another redirect",
      "https://www.google.com/aclk?sa=L&adurl=https://www.google.com/aclk?sa=L%26ai=W",
      { tracking_link: "https://www.google.com/aclk?sa=L&adurl=https://www.google.com/aclk?sa=L%26ai=W" },
    ],
    ["a redirect whose adurl is not a web address", "https://www.google.com/aclk?adurl=javascript:alert(1)", { tracking_link: "https://www.google.com/aclk?adurl=javascript:alert(1)" }],
    ["no href", undefined, {}],
  ])("%s", (_what, href, expected) => {
    expect(placementLinks(href)).toEqual(expected);
  });

  test("adDestination reads only the engine's click redirects", () => {
    expect(adDestination("https://shop.example/?adurl=https://elsewhere.example/")).toBeUndefined();
    expect(adDestination("https://www.google.de/aclk?adurl=https%3A%2F%2Fshop.example%2F")).toBe("https://shop.example/");
  });
});

const captured = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) console.warn("ad links: captured pages not found; set SERP_FIXTURES_DIR. Skipping the captured-page checks.");

captured("captured pages: offers that link through the click redirect", () => {
  const page = (path: string) => readFileSync(join(FIXTURES_DIR, path), "utf8");

  test("sellers and shopping cards never give the redirect as their link", () => {
    const sellers = parseSellers(page("shopping-product/product-13239497633151178800-online-offers-pt-br-2021.html")).sellers;
    const cards = parseShopping(page("shopping/ean-889894929969-shopping-pt-br-2021.html")).shopping_results;
    expect(sellers.length).toBeGreaterThan(0);
    expect(cards.length).toBeGreaterThan(0);
    for (const offer of [...sellers, ...cards]) {
      expect(offer.tracking_link).toMatch(/^https:\/\/www\.google\.com\/aclk\?/);
      if (offer.link !== undefined) expect(offer.link).not.toMatch(/\/aclk\?/);
    }
  });

  test("text ads lead to the advertiser, with the redirect as tracking_link", () => {
    const ads = parseWebSearch(page("web/plombier-paris-desktop-fr-2019.html")).ads ?? [];
    expect(ads.length).toBeGreaterThan(0);
    for (const ad of ads) {
      expect(ad.link).toMatch(/^https?:\/\/(?!www\.google)/);
      expect(ad.tracking_link).toMatch(/\/aclk\?/);
    }
  });
});
