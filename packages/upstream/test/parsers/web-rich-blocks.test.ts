/**
 * Issue 25's blocks and fields of the web page, on the captured pages (FIXTURES_DIR): the AI
 * overview's citations and loading placeholder, the knowledge panel's id, pictures and related
 * entities, shopping ads, the videos carousel and "What people are saying". Each family: real items
 * checked field by field, and counts against what the page shows. The pages are parsed in a Node
 * process of its own (web-rich-blocks.work.ts, through ../in-node.ts); the checks are here.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { WebSearchBlocks } from "@serp/shared";
import { FIXTURES_DIR, fixturesAvailable } from "../fixtures-dir.js";
import { inNode } from "../in-node.js";

const d = fixturesAvailable ? describe : describe.skip;
if (!fixturesAvailable) console.warn("web-rich-blocks: captured pages not found; set SERP_FIXTURES_DIR. Skipping.");

/** The pages (web/, without `.html`) the tests below read, parsed once before them. */
const PAGES = [
  "243-desktop-2021-wayback",
  "batman-actors-desktop-pl-2022",
  "best-running-shoes-desktop-2023",
  "cancer-deaths-per-year-usa-desktop-2025",
  "central-park-new-york-desktop-2024",
  "coffee-desktop-2023",
  "dell-xps-13-buy-desktop-2023",
  "donald-trump-desktop-2026",
  "hatsune-miku-desktop-ja-2025",
  "louis-vuitton-bags-desktop-2022",
  "quantum-field-theory-desktop-ja-2025",
  "rudsak-desktop-en-ca-2021",
  "something-desktop-singlefile-2025",
  "tesla-manifesto-desktop-2025",
  "van-gogh-paintings-desktop-2019",
  "why-is-the-sky-blue-desktop-2026",
];
const raw = (name: string) => readFileSync(join(FIXTURES_DIR, "web", `${name}.html`), "utf8");
let blocks: Record<string, WebSearchBlocks> = {};
if (fixturesAvailable) {
  beforeAll(async () => {
    blocks = await inNode(new URL("./web-rich-blocks.work.ts", import.meta.url), "webRichBlocksWork", FIXTURES_DIR, PAGES);
  }, 600_000);
}
const parsed = (name: string): WebSearchBlocks => {
  const page = blocks[name];
  if (!page) throw new Error(`${name} is not among the pages parsed (PAGES)`);
  return page;
};
const GOOGLE = /^https?:\/\/(?:[^/]+\.)?(?:google\.[a-z.]+|googleadservices\.com)\//;

d("AI overview: citations, source cards, the loading placeholder", () => {
  const sky = () => parsed("why-is-the-sky-blue-desktop-2026").ai_overview!;

  test("2026: each cited block names the references its citation lists (source ids matched to the cards)", () => {
    const { text_blocks, references } = sky();
    expect(references).toHaveLength(6);
    expect(references!.map((r) => r.index)).toEqual([0, 1, 2, 3, 4, 5]);
    const first = text_blocks![0]!;
    expect(first.snippet).toMatch(/^The sky is blue due to Rayleigh scattering/);
    // Its citation lists NESDIS, the National Weather Service and a Facebook post.
    expect(first.reference_indexes).toEqual([0, 2, 4]);
    expect(first.reference_indexes!.map((i) => references![i]!.link)).toEqual([
      "https://www.weather.gov/fgz/SkyBlue",
      expect.stringMatching(/^https:\/\/www\.nesdis\.noaa\.gov\//),
      expect.stringMatching(/^https:\/\/www\.facebook\.com\/jakedunnekwch\//),
    ]);
    const last = text_blocks!.find((b) => b.snippet?.startsWith("This process explains"))!;
    expect(last.reference_indexes).toEqual([0, 1, 3]);
    // In the list, only the item with a citation button carries indexes.
    const list = text_blocks!.find((b) => b.type === "list")!.list!;
    expect(list.map((i) => i.title)).toEqual([
      "Sunlight is White Light:",
      "Light Travels in Waves:",
      "Atmosphere Scattering:",
      "Blue Light Scattered Most:",
      "Why Blue, Not Violet:",
      "Pale Near Horizon:",
    ]);
    expect(list.slice(0, 5).every((i) => i.reference_indexes === undefined)).toBe(true);
    expect(list[5]!.reference_indexes).toEqual([0, 1, 2, 3, 4, 5]);
  });

  test("2026: the source cards beside the text are references, never a run-together text block", () => {
    const { text_blocks } = sky();
    expect(text_blocks).toHaveLength(4);
    const all = JSON.stringify(text_blocks);
    expect(all).not.toContain("National Weather Service (.gov)");
    expect(all).not.toContain("Royal Museums Greenwich");
  });

  test("a still-loading overview gives its continuation token alone", () => {
    const tesla = parsed("tesla-manifesto-desktop-2025").ai_overview;
    expect(tesla).toEqual({ page_token: expect.stringMatching(/^0a6H95W8ytKm8oOGapAIEJtZxYbX6mGTEs15JN5B2/) });
    expect(raw("tesla-manifesto-desktop-2025")).toContain(`data-mlro="${tesla!.page_token}"`);
  });

  test("2025 pages keep text and references, without indexes (their citations map to sources only in script numbers)", () => {
    const cancer = parsed("cancer-deaths-per-year-usa-desktop-2025").ai_overview!;
    expect(cancer.references).toHaveLength(3);
    expect(cancer.text_blocks![0]!.snippet).toMatch(/^According to the American Cancer Society/);
    expect(JSON.stringify(cancer)).not.toContain("reference_indexes");
  });
});

d("knowledge graph: kgmid, header images, people also search for", () => {
  test.each([
    ["donald-trump-desktop-2026", "Donald Trump", "/m/0cqt90"],
    ["central-park-new-york-desktop-2024", "Central Park", "/m/09c7v"],
    ["coffee-desktop-2023", "Coffee", "/m/02vqfm"],
    ["van-gogh-paintings-desktop-2019", "Vincent van Gogh", "/m/07_m2"],
    ["hatsune-miku-desktop-ja-2025", "初音ミク", "/g/120zzxxj"],
    ["batman-actors-desktop-pl-2022", "Batman", "/m/01d5g"],
  ])("%s: %s is %s, an id the page pairs with the title", (page, title, kgmid) => {
    const graph = parsed(page).knowledge_graph!;
    expect(graph).toMatchObject({ title, kgmid });
    expect(raw(page)).toContain(kgmid);
  });

  test("header images: the panel's pictures with the site each comes from (2024), the visual digest strip (2026)", () => {
    const park = parsed("central-park-new-york-desktop-2024").knowledge_graph!.header_images!;
    expect(park).toHaveLength(4);
    expect(park[0]).toEqual({ image: expect.stringMatching(/^data:image\/jpeg;base64,/), source: "https://en.wikipedia.org/wiki/Central_Park" });
    expect(park.every((i) => !i.source || !GOOGLE.test(i.source))).toBe(true);
    const trump = parsed("donald-trump-desktop-2026").knowledge_graph!.header_images!;
    // The page shows three pictures in its strip; their source pages are Google's own image hosts, so none is given.
    expect(trump).toHaveLength(3);
    expect(trump.every((i) => /^https:\/\/encrypted-tbn\d\.gstatic\.com\/licensed-image\?/.test(i.image) && i.source === undefined)).toBe(true);
  });

  test("people also search for: each entity card with its search link and picture", () => {
    const trump = parsed("donald-trump-desktop-2026").knowledge_graph!.people_also_search_for!;
    expect(trump.map((p) => p.name)).toEqual(["Vladimir Putin", "Melania Trump", "Joe Biden", "Ivana Trump"]);
    expect(trump[1]).toEqual({
      name: "Melania Trump",
      link: expect.stringMatching(/^https:\/\/www\.google\.com\/search\?.*q=Melania\+Trump/),
      image: expect.stringMatching(/^data:image\/webp;base64,/),
    });
    const vanGogh = parsed("van-gogh-paintings-desktop-2019").knowledge_graph!.people_also_search_for!;
    expect(vanGogh).toHaveLength(5);
    expect(vanGogh[0]).toMatchObject({ name: "Pablo Picasso", link: expect.stringContaining("q=Pablo+Picasso"), image: expect.stringMatching(/^data:image\//) });
    // A song's panel: other songs, each with the artist line under its name.
    const song = parsed("something-desktop-singlefile-2025").knowledge_graph!.people_also_search_for!;
    expect(song.find((p) => p.name === "Here Comes the Sun")).toMatchObject({ extensions: ["The Beatles"] });
    // Never the entity itself, never "View more" links.
    for (const page of ["coffee-desktop-2023", "central-park-new-york-desktop-2024", "quantum-field-theory-desktop-ja-2025"]) {
      const graph = parsed(page).knowledge_graph!;
      expect(graph.people_also_search_for!.length).toBeGreaterThanOrEqual(4);
      expect(graph.people_also_search_for!.some((p) => p.name === graph.title || /more/i.test(p.name))).toBe(false);
    }
  });
});

d("shopping ads → shopping_results", () => {
  /** The offers the page shows: its distinct offer ids. */
  const offers = (page: string) => new Set([...raw(page).matchAll(/data-offer-id="([^"]+)"/g)].map((m) => m[1])).size;

  test.each([
    ["best-running-shoes-desktop-2023", 12, "top"],
    ["dell-xps-13-buy-desktop-2023", 12, "top"],
    ["louis-vuitton-bags-desktop-2022", 25, "top"],
    ["rudsak-desktop-en-ca-2021", 9, "right"],
  ] as const)("%s: every tile the page shows (%i), each with a price and the merchant's page", (page, count, position) => {
    const items = parsed(page).shopping_results!;
    expect(offers(page)).toBeGreaterThanOrEqual(count);
    expect(items).toHaveLength(count);
    expect(items.map((i) => i.position)).toEqual(items.map((_, i) => i + 1));
    for (const item of items) {
      expect(item.block_position).toBe(position);
      expect(item.price).toMatch(/^\$\d[\d,]*\.\d\d$/);
      expect(item.extracted_price).toBeGreaterThan(0);
      expect(item.link).toMatch(/^https:\/\//);
      expect(item.link).not.toMatch(GOOGLE);
      expect(item.thumbnail).toMatch(/^data:image\//);
    }
  });

  test("a tile read field by field: title, price, merchant, rating, review count", () => {
    const [nike, brooks] = parsed("best-running-shoes-desktop-2023").shopping_results!;
    expect(nike).toMatchObject({
      position: 1,
      block_position: "top",
      title: "Nike Men's Pegasus 40 Road Running Shoes in White, Size: 10.5 | DV3853-100",
      link: "https://www.nike.com/t/pegasus-40-mens-road-running-shoes-mVJdmS/DV3853-100?nikemt=true",
      price: "$130.00",
      extracted_price: 130,
      source: "Nike",
      reviews: 325,
      rating: 4.7,
    });
    // On sale: the price paid, not the former one printed after it.
    expect(brooks).toMatchObject({ price: "$89.95", extracted_price: 89.95, source: "Brooks Running" });
    const [mare] = parsed("rudsak-desktop-en-ca-2021").shopping_results!;
    expect(mare).toMatchObject({ title: "MARE 8121010 BLACK", source: "Rudsak", price: "$595.00" });
  });
});

d("inline_videos and perspectives", () => {
  test.each([
    ["best-running-shoes-desktop-2023", 3],
    ["243-desktop-2021-wayback", 3],
    ["hatsune-miku-desktop-ja-2025", 3],
    ["quantum-field-theory-desktop-ja-2025", 3],
    ["something-desktop-singlefile-2025", 3],
  ] as const)("%s: the %i videos of its carousel, none an organic result", (page, count) => {
    const blocks = parsed(page);
    const videos = blocks.inline_videos!;
    expect(videos).toHaveLength(count);
    const organic = new Set(blocks.organic_results.map((r) => r.link));
    for (const v of videos) {
      expect(v.link).toMatch(/^https:\/\/www\.youtube\.com\/watch\?v=/);
      expect(organic.has(v.link)).toBe(false);
      expect(v.platform).toBe("YouTube");
      expect(v.channel).toBeTruthy();
      expect(v.title).not.toMatch(/YouTube|^\d+:\d\d$/);
    }
  });

  test("a video read field by field (2023 and 2021 layouts)", () => {
    expect(parsed("best-running-shoes-desktop-2023").inline_videos![0]).toEqual({
      position: 1,
      title: "THE BEST RUNNING SHOE EVER *seriously*",
      link: "https://www.youtube.com/watch?v=g00TczznZkA",
      thumbnail: expect.stringMatching(/^data:image\/jpeg;base64,/),
      channel: "Trackstaa",
      duration: "4:28",
      platform: "YouTube",
      date: "22 hours ago",
    });
    expect(parsed("243-desktop-2021-wayback").inline_videos![0]).toMatchObject({
      title: "Beginner Basics #19 The 243 Winchester Caliber (pros/cons)",
      channel: "ozziereviews",
      duration: "3:24",
      date: "Jul 23, 2020",
    });
  });

  test("'What people are saying': every post the section shows, with its author and site", () => {
    const sky = parsed("why-is-the-sky-blue-desktop-2026").perspectives!;
    expect(sky).toHaveLength(12);
    expect(sky[0]).toEqual({
      title: "Why is the Sky Blue? Credit to Discover.",
      link: expect.stringMatching(/^https:\/\/www\.facebook\.com\/ceressoft\/posts\//),
      author: "ceressoft",
      source: "Facebook",
      date: "1 month ago",
      thumbnail: expect.stringMatching(/^data:image\/jpeg;base64,/),
    });
    expect(sky.find((p) => p.source === "X")).toMatchObject({ author: "PARODY_CAIT", date: "3 weeks ago" });
    const trump = parsed("donald-trump-desktop-2026").perspectives!;
    expect(trump).toHaveLength(12);
    expect(trump.find((p) => p.source === "LinkedIn")).toMatchObject({ author: "Beth Collier", date: "9 hours ago" });
    expect(trump[0]).toMatchObject({ author: "Jimmy Kimmel Live", source: "YouTube", link: "https://www.youtube.com/watch?v=oC8qsi9Uu7c" });
    // A profile's "Latest posts" (posts and reels mixed) is neither videos nor perspectives.
    expect(parsed("donald-trump-desktop-2026").inline_videos).toBeUndefined();
  });
});
