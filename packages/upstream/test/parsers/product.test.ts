import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseProductInfo } from "../../src/kinds/web-shopping-product-info.js";
import { parseSellers } from "../../src/kinds/web-shopping-product.js";
import { FIXTURES_DIR } from "../fixtures-dir.js";

const here = dirname(fileURLToPath(import.meta.url));
const fixture = (name: string) => readFileSync(join(here, "../fixtures", name), "utf8");

describe("parseSellers on hand-written pages", () => {
  const { sellers, product_title } = parseSellers(fixture("product-sellers-edge-cases.html"));

  test("counts each merchant once and skips extra-offer, nameless and priceless rows", () => {
    expect(sellers.map((s) => s.name)).toEqual(["Loja Um", "Loja Dois", "Loja Quatro"]);
    expect(sellers.map((s) => s.position)).toEqual([1, 2, 3]);
  });

  test("reads base price, shipping and total from the breakdown", () => {
    expect(sellers[0]).toEqual({
      position: 1,
      name: "Loja Um",
      link: "https://loja-um.example/geladeira-400",
      base_price: "R$ 1.299,90",
      extracted_base_price: 1299.9,
      shipping: "R$ 25,00",
      total_price: "R$ 1.324,90",
      extracted_total_price: 1324.9,
      details: "Frete grátis acima de R$ 2.000,00",
      positive_reviews_percent: 87,
      reviews: 2345,
    });
  });

  test("leaves out shipping and details when the row shows none", () => {
    expect(sellers[1]).toEqual({
      position: 2,
      name: "Loja Dois",
      link: "https://loja-dois.example/p/123",
      tracking_link: "https://www.google.com/aclk?sa=L&ai=abc&adurl=https://loja-dois.example/p/123",
      base_price: "R$ 1.249,00",
      extracted_base_price: 1249,
      total_price: "R$ 1.249,00",
      extracted_total_price: 1249,
    });
  });

  test("takes the total from the breakdown when its cell shows none, and ignores tax rows as shipping", () => {
    expect(sellers[2]).toMatchObject({
      name: "Loja Quatro",
      link: "https://loja-quatro.example/item",
      base_price: "R$ 1.350,00",
      shipping: "Grátis",
      total_price: "R$ 1.362,00",
      extracted_total_price: 1362,
    });
  });

  test("names the product", () => {
    expect(product_title).toBe("Geladeira de Teste 400 L");
  });

  test("answers no sellers for a page without an offers table", () => {
    expect(parseSellers("<html><body><p>Nenhuma loja</p></body></html>")).toEqual({ sellers: [] });
  });
});

describe("parseProductInfo on a hand-written page", () => {
  const { product_results: p } = parseProductInfo(fixture("product-info-header-rating.html"));

  test("reads the product's own rating and reviews, not a related product's", () => {
    expect(p.rating).toBe(4.6);
    expect(p.reviews).toBe(1234);
  });

  test("leaves rating and reviews out when only related products show them", () => {
    const html = fixture("product-info-header-rating.html").replace(/<div class="A6BjZb">[\s\S]*?<\/span><\/div>/, "");
    const { product_results } = parseProductInfo(html);
    expect(product_results).not.toHaveProperty("rating");
    expect(product_results).not.toHaveProperty("reviews");
  });

  test("keeps the first value of a repeated spec, skips headings and empty values", () => {
    expect(p.specs).toEqual({ Marca: "Marca Teste", Potência: "900 W", GTIN: "07890000000001" });
  });

  test("keeps only real image URLs, once each, when there are no zoom layers", () => {
    expect(p.images).toEqual([
      "https://encrypted-tbn0.gstatic.com/shopping?q=tbn:one",
      "https://encrypted-tbn1.gstatic.com/shopping?q=tbn:two",
    ]);
  });

  test("falls back to the short description and leaves out what the page lacks", () => {
    expect(p).toMatchObject({
      title: "Liquidificador de Teste 900 W",
      product_id: "222333444",
      description: "Liquidificador com 12 velocidades e jarra de 3 litros.",
    });
    expect(p).not.toHaveProperty("prices");
    expect(p).not.toHaveProperty("extensions");
    expect(p).not.toHaveProperty("highlights");
  });

  test("rejects a page with no product title", () => {
    expect(() => parseProductInfo("<html><body><p>Página não encontrada</p></body></html>")).toThrow(/no product title/);
  });
});

const captured = join(FIXTURES_DIR, "shopping-product/product-13239497633151178800-online-offers-pt-br-2021.html");
const describeIfCaptured = existsSync(captured) ? describe : describe.skip;

describeIfCaptured("parseSellers on the captured online-sellers list", () => {
  const { sellers, product_title } = parseSellers(readFileSync(captured, "utf8"));

  test("names the product from the list's header", () => {
    expect(product_title).toBe("Fogão de Piso 4 Bocas Branco Electrolux 52LBU Bivolt");
  });

  test("has no duplicate merchants and numbers them in order", () => {
    expect(new Set(sellers.map((s) => s.name)).size).toBe(sellers.length);
    expect(sellers.map((s) => s.position)).toEqual(sellers.map((_, i) => i + 1));
  });

  test("keeps the click redirect as tracking_link, never as link, when the page holds no destination (adurl= empty)", () => {
    for (const seller of sellers) {
      expect(seller).not.toHaveProperty("link");
      expect(seller.tracking_link).toMatch(/^https:\/\/www\.google\.com\/aclk\?.*&adurl=$/);
    }
  });
});
