/**
 * Parsers that hold when class names change (issue 25): every captured page of a kind, with each
 * class attribute rewritten through a random renaming (one name for each class, consistent across
 * the page, as a redesign's new build would), and with every class attribute dropped, still gives
 * at least 90% of the items the original page gives.
 *
 * Kinds covered so far: news, shopping search, images and local cards (the local packs of the web
 * pages: the shared pages hold no local results page). Web search's other blocks still find most of
 * their parts by class names: see the issue.
 */
import { isDateText } from "../src/html/cards.js";
import type { RenamedKinds } from "./class-rename.work.js";
import { FIXTURES_DIR, fixturesAvailable } from "./fixtures-dir.js";
import { inNode } from "./in-node.js";

const seed = Number(process.env.RENAME_SEED ?? Date.now() % 100_000);
const describeIfFixtures = fixturesAvailable ? describe : describe.skip;
/** Every page and its copies, read in a Node process of its own (class-rename.work.ts) before the tests are named. */
const work: RenamedKinds = fixturesAvailable
  ? await inNode(new URL("./class-rename.work.ts", import.meta.url), "renamedKinds", FIXTURES_DIR, seed)
  : { news: {}, shopping: {}, images: {}, local: {} };
const namesIn = (pages: Record<string, unknown>) => Object.keys(pages).map((p) => p.slice(p.indexOf("/") + 1));

describeIfFixtures(`class names renamed (seed ${seed}) or dropped`, () => {
  const pages = namesIn(work.news);

  test("the news pages are there to test", () => {
    expect(pages.length).toBeGreaterThanOrEqual(3);
  });

  test.each(pages)("news/%s: ≥ 90% of the articles, with their headline, link and publisher or age", (page) => {
    const { original, copies } = work.news[`news/${page}`]!;
    expect(original.length).toBeGreaterThan(0);
    for (const { differs, items } of copies) {
      expect(differs).toBe(true);
      const links = new Set(items.map((i) => i.link));
      const kept = original.filter((o) => links.has(o.link));
      expect(kept.length).toBeGreaterThanOrEqual(Math.ceil(0.9 * original.length));
      for (const o of kept) {
        const item = items.find((i) => i.link === o.link)!;
        expect(item.title).toBe(o.title);
        if (o.date) expect(item.date).toBe(o.date);
        if (o.source) expect(item.source).toBe(o.source);
      }
    }
  });
});

describeIfFixtures(`shopping: class names renamed (seed ${seed}) or dropped`, () => {
  const pages = namesIn(work.shopping);

  test.each(pages)("shopping/%s: ≥ 90% of the products, with their title, price and merchant", (page) => {
    const { original, copies } = work.shopping[`shopping/${page}`]!;
    for (const { items } of copies) {
      const kept = original.filter((o) => items.some((i) => i.title === o.title));
      expect(kept.length).toBeGreaterThanOrEqual(Math.ceil(0.9 * original.length));
      for (const o of kept) {
        const item = items.find((i) => i.title === o.title)!;
        expect(item).toMatchObject({ price: o.price, extracted_price: o.extracted_price, source: o.source });
        if (o.product_id) expect(item.product_id).toBe(o.product_id);
        if (o.rating !== undefined) expect(item).toMatchObject({ rating: o.rating, reviews: o.reviews });
      }
    }
  });

  test("a page with products is among them", () => {
    const counts = Object.values(work.shopping).map((p) => p.original.length);
    expect(Math.max(...counts)).toBeGreaterThan(0);
  });
});

describeIfFixtures(`images: class names renamed (seed ${seed}) or dropped`, () => {
  const pages = namesIn(work.images);

  test.each(pages)("images/%s: ≥ 90% of the images, each with its page, thumbnail and a title", (page) => {
    const { original, copies } = work.images[`images/${page}`]!;
    expect(original.length).toBeGreaterThan(0);
    for (const { items } of copies) {
      const kept = original.filter((o) => items.some((i) => i.link === o.link && i.thumbnail === o.thumbnail));
      expect(kept.length).toBeGreaterThanOrEqual(Math.ceil(0.9 * original.length));
      expect(items.filter((i) => i.title).length).toBeGreaterThanOrEqual(Math.ceil(0.9 * original.filter((o) => o.title).length));
    }
  });
});

describeIfFixtures(`local cards: class names renamed (seed ${seed}) or dropped`, () => {
  const packs = Object.entries(work.local).map(([page, { original: places, copies }]) => ({ page, places, copies }));

  test("the shared pages hold local packs to test", () => {
    expect(packs.length).toBeGreaterThanOrEqual(10);
  });

  test.each(packs.map((p) => [p.page, p] as const))("%s: ≥ 90% of the places, with their name, rating, address, phone and hours", (_, { places, copies }) => {
    for (const { items: found } of copies) {
      // Each place paired with the first place of the same name not yet paired (two shops may share a name).
      const left = [...found];
      const pairs = places.flatMap((o) => {
        const at = left.findIndex((f) => f.title === o.title);
        return at < 0 ? [] : [[o, left.splice(at, 1)[0]!] as const];
      });
      expect(pairs.length).toBeGreaterThanOrEqual(Math.ceil(0.9 * places.length));
      for (const [o, f] of pairs) {
        const shown = Object.fromEntries((["rating", "reviews", "address", "phone", "hours"] as const).filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));
        expect(f).toMatchObject(shown);
      }
    }
  });
});

describe("dates as cards print them", () => {
  test.each(["1 day ago", "3 weeks ago", "vor 2 Tagen", "il y a 3 heures", "hace 5 días", "há 2 dias", "3 ore fa", "2 godz. temu", "5 часов назад", "2 時間前", "2h", "Jun 13, 2025", "13 juin 2025", "13.06.2025", "2025-06-13", "2025年6月13日", "yesterday"])(
    "%s is a date",
    (s) => expect(isDateText(s)).toBe(true),
  );
  test.each(["DFNI", "The Atlanta Journal-Constitution", "Schloss Johannisberg is a wine estate", "2 for 1", "12 hours of fun in Paris"])("%s is not a date", (s) =>
    expect(isDateText(s)).toBe(false),
  );
});
