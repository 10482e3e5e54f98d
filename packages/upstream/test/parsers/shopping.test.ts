import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseShopping, productId } from "../../src/kinds/web-shopping-search.js";

const fixture = (name: string) => readFileSync(join(dirname(fileURLToPath(import.meta.url)), "../fixtures", name), "utf8");

describe("parseShopping on the 2021 list view (hand-written edge cases)", () => {
  const items = parseShopping(fixture("shopping-list-edge-cases.html")).shopping_results;

  test("reads product cards only: sponsored carousels and cards without a title are skipped", () => {
    expect(items.map((i) => i.title)).toEqual(["Geladeira Frost Free Duplex 480 L", "Geladeira Compacta 120 L"]);
    expect(items.map((i) => i.position)).toEqual([1, 2]);
  });

  test("parses Brazilian prices with thousands separators, and the old price", () => {
    expect(items[0]).toMatchObject({
      price: "R$ 1.299,90",
      extracted_price: 1299.9,
      old_price: "R$ 1.499,00",
      extracted_old_price: 1499,
    });
  });

  test("reads product id, merchant, rating, reviews, comparisons, chips and thumbnail", () => {
    expect(items[0]).toEqual({
      position: 1,
      title: "Geladeira Frost Free Duplex 480 L",
      product_id: "1234567890123",
      product_link: "https://www.google.com/shopping/product/1234567890123?q=geladeira&prds=epd:1",
      link: "https://www.loja.example/geladeira-480",
      source: "Loja Exemplo",
      price: "R$ 1.299,90",
      extracted_price: 1299.9,
      old_price: "R$ 1.499,00",
      extracted_old_price: 1499,
      rating: 4.6,
      reviews: 1234,
      number_of_comparisons: "12",
      comparison_link: "https://www.google.com/shopping/product/1234567890123?q=geladeira#online",
      extensions: ["Frost Free", "480 L", "Inox"],
      thumbnail: "https://encrypted-tbn1.gstatic.com/shopping?q=tbn:ANd9GcFridge1",
    });
  });

  test("leaves out rating, reviews and product id when the card has none, and keeps its inline data: thumbnail", () => {
    expect(items[1]).toEqual({
      position: 2,
      title: "Geladeira Compacta 120 L",
      link: "https://www.outra.example/p/99",
      tracking_link: "https://www.google.com/aclk?sa=L&ai=AAA&adurl=https://www.outra.example/p/99",
      price: "R$ 899,00",
      extracted_price: 899,
      snippet: "Geladeira compacta ideal para escritórios e quartos ...",
      thumbnail: "data:image/webp;base64,UklGRg==",
    });
  });
});

describe("parseShopping on pages without product cards", () => {
  test("a page with only sponsored products gives an empty list", () => {
    expect(parseShopping(fixture("shopping-ads-only.html"))).toEqual({ shopping_results: [] });
  });

  test("an empty page gives an empty list", () => {
    expect(parseShopping("")).toEqual({ shopping_results: [] });
  });
});

describe("productId", () => {
  test("takes the id from /shopping/product/<id> links", () => {
    expect(productId("https://www.google.com/shopping/product/4997777289611787084?q=x#online")).toBe("4997777289611787084");
    expect(productId("/shopping/product/123/offers")).toBe("123");
  });

  test("is undefined for other links", () => {
    expect(productId("https://www.google.com/aclk?sa=L&adurl=")).toBeUndefined();
    expect(productId(undefined)).toBeUndefined();
  });
});
