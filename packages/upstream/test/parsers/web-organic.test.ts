import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseWebSearch } from "../../src/kinds/web-search/index.js";

const fixture = (name: string) => readFileSync(join(dirname(fileURLToPath(import.meta.url)), "../fixtures", name), "utf8");

describe("web search: desktop page", () => {
  const page = parseWebSearch(fixture("web-desktop.html"));
  const titles = page.organic_results.map((r) => r.title);

  test("numbers organic results from 1 in page order", () => {
    expect(page.organic_results.map((r) => [r.position, r.title])).toEqual([
      [1, "Espresso - Wikipedia"],
      [2, "The Roaster - Fresh espresso beans"],
      [3, "Barista guide"],
    ]);
  });

  test("unwraps /url?q= redirects to the result's real target", () => {
    expect(page.organic_results[1]!.link).toBe("https://www.roaster.example/");
  });

  test("reads the title from the heading alone, not the site name and URL in the same link", () => {
    expect(page.organic_results[0]).toMatchObject({
      title: "Espresso - Wikipedia",
      source: "Wikipedia",
      displayed_link: "https://en.wikipedia.org › wiki › Espresso",
    });
  });

  test("reads inline sitelinks", () => {
    expect(page.organic_results[0]!.sitelinks).toEqual({
      inline: [
        { title: "Doppio", link: "https://en.wikipedia.org/wiki/Doppio" },
        { title: "Ristretto", link: "https://en.wikipedia.org/wiki/Ristretto" },
      ],
    });
  });

  test("reads expanded sitelinks with their lines and does not count them as results", () => {
    expect(page.organic_results[1]!.sitelinks?.expanded).toEqual([
      { title: "Shop", link: "https://www.roaster.example/shop", snippet: "Buy beans and gear." },
      { title: "About us", link: "https://www.roaster.example/about", snippet: "Our story." },
    ]);
    expect(titles).not.toContain("Shop");
  });

  test("takes the date off the front of the snippet", () => {
    expect(page.organic_results[1]).toMatchObject({ date: "3 days ago", snippet: "Beans roasted to order for espresso." });
  });

  test("leaves snippet out when the result shows none", () => {
    expect(page.organic_results[2]).not.toHaveProperty("snippet");
    expect(page.organic_results[2]).not.toHaveProperty("date");
  });

  test("keeps ads, People also ask answers, top stories, video carousels, local entries and the knowledge panel out of organic results", () => {
    expect(titles).not.toEqual(
      expect.arrayContaining([expect.stringMatching(/Espresso Machines|Machine Deals|strength|espresso day|Pulling a shot|Cafe Uno/)]),
    );
    expect(page.organic_results.filter((r) => r.link === "https://en.wikipedia.org/wiki/Espresso")).toHaveLength(1);
  });

  test("reads top and bottom text ads with the advertiser's target and the tracking link", () => {
    expect(page.ads).toEqual([
      {
        position: 1,
        block_position: "top",
        title: "Espresso Machines - Free Delivery",
        link: "https://shop.example/espresso?src=ad",
        displayed_link: "https://shop.example › espresso",
        tracking_link: "https://www.google.com/aclk?sa=l&ai=TOP1&adurl=",
        description: "Every machine in stock. Order today, brewing tomorrow.",
        source: "Shop Example",
        sitelinks: [
          { title: "Grinders", link: "https://shop.example/grinders" },
          { title: "Beans", link: "https://shop.example/beans" },
        ],
      },
      {
        position: 2,
        block_position: "bottom",
        title: "Machine Deals",
        link: "https://machines.example/deal",
        displayed_link: "https://machines.example",
        tracking_link: "https://www.google.com/aclk?sa=l&ai=BOTTOM1&adurl=https://machines.example/deal&q=",
      },
    ]);
  });

  test("reads related searches as absolute links on the search engine, without the pager", () => {
    expect(page.related_searches).toEqual([
      { query: "espresso vs coffee", link: "https://www.google.com/search?q=Espresso+vs+coffee&sa=X" },
      { query: "espresso machine", link: "https://www.google.com/search?q=Espresso+machine&sa=X" },
    ]);
  });

  test("reads the results count and the time taken", () => {
    expect(page.search_information).toEqual({ total_results: 1230000, time_taken_displayed: 0.42 });
  });
});

describe("web search: mobile page", () => {
  const page = parseWebSearch(fixture("web-mobile.html"));

  test("finds results titled by role=heading level 3 inside the link", () => {
    expect(page.organic_results.map((r) => [r.title, r.link])).toEqual([
      ["A guide to tea", "https://tea.example/guide"],
      ["Leaves and more", "https://leaves.example/"],
    ]);
  });

  test("reads the breadcrumb, the date and the rest of the snippet", () => {
    expect(page.organic_results[0]).toMatchObject({
      displayed_link: "https://tea.example › guide",
      date: "Mar 22, 2023",
      snippet: "Everything about brewing tea.",
    });
  });

  test("does not take the ad's title for its description", () => {
    expect(page.ads).toEqual([
      expect.objectContaining({ title: "Green Tea Sale", description: "Loose leaf green tea, shipped free." }),
    ]);
  });

  test("leaves blocks out when the page shows none of them", () => {
    expect(page).not.toHaveProperty("related_searches");
    expect(page).not.toHaveProperty("search_information");
  });
});

describe("web search: basic (no-JS) page", () => {
  const page = parseWebSearch(fixture("web-basic.html"));

  test("reads /url?q= results and skips local entries that link back to the search engine", () => {
    expect(page.organic_results.map((r) => [r.title, r.link])).toEqual([
      ["Road bikes | Bikes Example", "https://bikes.example/road"],
      ["Bicycle - Wiki", "https://wiki.example/Bicycle"],
    ]);
    expect(page.organic_results[0]).toMatchObject({ date: "Jul 16, 2022", snippet: "Light, fast road bikes." });
  });

  test("places ads before the first result on top and the others at the bottom", () => {
    expect(page.ads?.map((a) => [a.position, a.block_position, a.title])).toEqual([
      [1, "top", "Bikes on Sale Today"],
      [2, "bottom", "Helmets for Every Ride"],
    ]);
  });

  test("links an ad whose redirect hides the target to the advertiser site the page names", () => {
    expect(page.ads?.[0]).toMatchObject({
      link: "https://www.bikeshop.example/",
      tracking_link: "https://www.google.com/aclk?sa=l&ai=BASIC1&adurl=",
    });
    expect(page.ads?.[1]?.link).toBe("https://helmets.example/");
  });

  test("reads the related searches", () => {
    expect(page.related_searches?.map((r) => r.query)).toEqual(["Bikes near me", "Electric bikes"]);
  });
});

describe("web search: Lynx basic layout", () => {
  const page = parseWebSearch(fixture("web-lynx.html"));

  test("reads results titled by span.CVA68e inside a.fuLhoc, with the redirect each links through", () => {
    expect(page.organic_results).toEqual([
      {
        position: 1,
        title: "Kites Example - Stunt kites",
        link: "https://kites.example/",
        redirect_link: "https://www.google.com/url?q=https://kites.example/&sa=U&ved=k1",
        displayed_link: "kites.example",
        snippet: "Stunt and power kites for every wind.",
      },
      {
        position: 2,
        title: "Kite - Wiki",
        link: "https://wiki.example/Kite",
        redirect_link: "https://www.google.com/url?q=https://wiki.example/Kite&sa=U&ved=k2",
        date: "Jan 5, 2025",
        snippet: "A kite is a tethered heavier-than-air craft.",
      },
    ]);
    expect(page.related_searches).toEqual([{ query: "kite surfing", link: "https://www.google.com/search?q=kite+surfing&sa=X" }]);
  });
});

describe("web search: progressive JSON chunks", () => {
  test("joins the chunks' HTML fragments and parses them as one page", () => {
    const page = parseWebSearch(fixture("web-json-chunks.txt"));
    expect(page.organic_results.map((r) => [r.title, r.link])).toEqual([
      ["Комод купить", "https://mebel.example/komod/"],
      ["Шкафы и комоды", "https://shkaf.example/"],
    ]);
  });

  test("reads the url= target of a redirect whose q is empty", () => {
    const page = parseWebSearch(fixture("web-json-chunks.txt"));
    expect(page.organic_results[0]!.link).toBe("https://mebel.example/komod/");
  });
});

describe("web search: edge cases", () => {
  test("returns an empty organic_results list for a page without results", () => {
    const page = parseWebSearch(
      '<html><body><div id="rcnt"><div id="center_col"><div id="topstuff"><p>Your search did not match any documents.</p></div></div></div></body></html>',
    );
    expect(page).toEqual({ organic_results: [] });
  });

  test("returns an empty organic_results list for input that is not a page", () => {
    expect(parseWebSearch("")).toEqual({ organic_results: [] });
  });

  test("reads localized counts and times", () => {
    const page = parseWebSearch(
      '<div id="rcnt"><div id="result-stats">Environ 21 100 000 résultats (0,50 secondes)</div></div>',
    );
    expect(page.search_information).toEqual({ total_results: 21100000, time_taken_displayed: 0.5 });
  });
});
