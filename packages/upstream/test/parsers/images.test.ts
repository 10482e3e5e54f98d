import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseImages, parseImgres } from "../../src/kinds/web-images.js";

const fixture = (name: string) => readFileSync(join(dirname(fileURLToPath(import.meta.url)), "../fixtures", name), "utf8");

describe("parseImgres", () => {
  test("reads the image, its page, its size and its thumbnail id from the query", () => {
    expect(
      parseImgres("/imgres?imgurl=https://a.example/x%20y.jpg&imgrefurl=https://a.example/page%3Fid%3D1&w=800&h=600&tbnid=Abc123:"),
    ).toEqual({
      original: "https://a.example/x y.jpg",
      link: "https://a.example/page?id=1",
      original_width: 800,
      original_height: 600,
      thumbnail: "https://encrypted-tbn0.gstatic.com/images?q=tbn:Abc123",
    });
  });

  test("unwraps a Wayback-rewritten imgres link", () => {
    expect(
      parseImgres("https://web.archive.org/web/20170101000000/https://www.google.com/imgres?imgurl=https://b.example/i.png&imgrefurl=https://b.example/"),
    ).toMatchObject({ original: "https://b.example/i.png", link: "https://b.example/" });
  });

  test("leaves out sizes that are not positive whole numbers and URLs that are not http(s)", () => {
    const res = parseImgres("/imgres?imgurl=javascript:alert(1)&imgrefurl=https://c.example/&w=0&h=abc");
    expect(res).toEqual({ link: "https://c.example/" });
  });

  test("is undefined for links that are not imgres links", () => {
    expect(parseImgres("/url?q=https://d.example/")).toBeUndefined();
    expect(parseImgres(undefined)).toBeUndefined();
  });
});

describe("parseImages on the light /imgres? layout (hand-written after the documented format)", () => {
  const items = parseImages(fixture("images-wml-imgres-documented.html")).images_results;

  test("gives one item per image when picture and caption are linked separately", () => {
    expect(items).toHaveLength(3);
    expect(items.map((i) => i.position)).toEqual([1, 2, 3]);
  });

  test("keeps the caption as title and the page's thumbnail over the tbnid one", () => {
    expect(items[0]).toEqual({
      position: 1,
      title: "Kittens in the garden",
      link: "https://example.org/kittens?page=2",
      original: "https://cdn.example.org/photos/kitten%20one.jpg",
      original_width: 800,
      original_height: 600,
      thumbnail: "https://encrypted-tbn0.gstatic.com/images?q=tbn:ANd9GcAbCdEf123",
    });
  });

  test("reads Wayback-rewritten links and builds the thumbnail from tbnid when there is no <img>", () => {
    expect(items[1]).toEqual({
      position: 2,
      title: "A cat on a sofa",
      link: "https://example.net/cats",
      original: "https://img.example.net/cat.png",
      original_width: 1920,
      original_height: 1080,
      thumbnail: "https://encrypted-tbn0.gstatic.com/images?q=tbn:XyZ789",
    });
  });

  test("keeps an item without an image URL but leaves the missing fields out", () => {
    expect(items[2]).toEqual({
      position: 3,
      title: "Page without an image URL",
      link: "https://example.com/no-image-url",
      thumbnail: "https://encrypted-tbn0.gstatic.com/images?q=tbn:NoImg1",
    });
  });
});

describe("parseImages on a Wayback-rewritten basic grid", () => {
  const items = parseImages(fixture("images-basic-wayback-rewritten.html")).images_results;

  test("unwraps archive prefixes and /url?q= redirects so links point at the real pages", () => {
    expect(items.map((i) => i.link)).toEqual([
      "https://www.example.org/lighthouse-at-dusk",
      "https://www.example.com/harbour",
      "https://example.net/tower",
    ]);
  });

  test("unwraps archived thumbnails and drops local placeholders", () => {
    expect(items.map((i) => i.thumbnail)).toEqual([
      "https://encrypted-tbn0.gstatic.com/images?q=tbn:ANd9GcLight1",
      "https://encrypted-tbn0.gstatic.com/images?q=tbn:ANd9GcLight2",
      "https://encrypted-tbn0.gstatic.com/images?q=tbn:Tower1",
    ]);
  });

  test("reads title, site and the size line, with inline markup in the title", () => {
    expect(items[0]).toMatchObject({
      title: "The Lighthouse at dusk & dawn",
      source: "example.org",
      original_width: 1600,
      original_height: 1067,
    });
    expect(items[1]).toMatchObject({ title: "Harbour lights", original_width: 640, original_height: 480 });
  });

  test("fills the original image and size from an imgres link inside a cell", () => {
    expect(items[2]).toMatchObject({
      title: "Old tower",
      original: "https://files.example.net/tower.jpg",
      original_width: 900,
      original_height: 1200,
    });
  });
});

describe("parseImages on pages without images", () => {
  test("returns an empty list", () => {
    expect(parseImages("<html><body><div id=\"rso\"></div></body></html>")).toEqual({ images_results: [] });
    expect(parseImages("")).toEqual({ images_results: [] });
  });
});
