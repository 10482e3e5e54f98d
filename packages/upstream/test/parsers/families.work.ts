/**
 * The parsing behind families.test.ts, run in a Node process of its own (../in-node.ts): what each of
 * its tests checks, read from every captured page of the family's kind. The assertions stay in the
 * test file.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { removeElement } from "domutils";
import { all, closest, first, parseHtml, text } from "../../src/html/index.js";
import { parseImages, parseNews, parseWebSearch } from "../../src/kinds/index.js";
import { extractWebSearch, joinJsonChunks } from "../../src/kinds/web-search/index.js";
import { discussionSections } from "../../src/kinds/web-search/discussions.js";
import { extractKnowledgeGraph } from "../../src/kinds/web-search/knowledge-graph.js";
import { thrown } from "../in-node.js";

/** A page with every `class` attribute removed: what a rule still finds there, it finds by the page's structure. */
const withoutClasses = (body: string) => body.replace(/\sclass=(?:"[^"]*"|'[^']*')/g, "");

/** The raw page's `jsl.dh('<id>','<html>')` calls, decoded by a regex of the test's own. */
function servedHtml(body: string) {
  const calls = new Map<string, string>();
  for (const m of body.matchAll(/jsl\.dh\('([^']+)','((?:[^'\\]|\\.)*)'/g)) {
    calls.set(m[1]!, m[2]!.replace(/\\x([0-9a-f]{2})|\\u([0-9a-f]{4})|\\(.)/gi, (_, x, u, c) => (x || u ? String.fromCharCode(parseInt(x ?? u, 16)) : c)));
  }
  return calls;
}

/** The title of the first result quoted in a pair's served answer (its slots filled in turn). */
function quotedTitle(pairIds: string[], calls: Map<string, string>) {
  let html = "";
  const todo = pairIds.filter((id) => calls.has(id));
  for (const seen = new Set<string>(); todo.length; ) {
    const id = todo.shift()!;
    if (seen.has(id)) continue;
    seen.add(id);
    html += calls.get(id);
    for (const m of calls.get(id)!.matchAll(/id="([^"]+)"/g)) if (calls.has(m[1]!)) todo.push(m[1]!);
  }
  const h3 = html.match(/<h3[^>]*>((?:(?!<\/h3>)[\s\S])*)<\/h3>/);
  return h3 && text(parseHtml(h3[1]!));
}

const ABOUT_PAGE = "web/tesla-manifesto-desktop-2025.html";
const OLDER_NEWS = ["news/win10-iso-news-2019-wayback.html", "news/virtual-reality-experience-news-basic-2022-wayback.html"];
const SCRIPTED_ANSWERS = ["web/coffee-desktop-2023.html", "web-mobile/coffee-mobile-2023.html", "web/van-gogh-paintings-desktop-2019.html"];
const HOTEL_PACKS = ["web/hotels-nyc-desktop-2023.html", "web-mobile/hotels-nyc-mobile-2023.html"];

export function familiesWork(fixturesDir: string) {
  const pagesIn = (dir: string) => readdirSync(join(fixturesDir, dir)).map((f) => `${dir}/${f}`);
  const read = (page: string) => readFileSync(join(fixturesDir, page), "utf8");
  const each = <T>(pages: string[], fn: (page: string, body: string) => T) => Object.fromEntries(pages.map((p) => [p, fn(p, read(p))]));
  const [web, mobile, nojs] = [pagesIn("web"), pagesIn("web-mobile"), pagesIn("web-nojs")];

  return {
    /** Desktop pages: each organic result's title, link and position, and the titled links of the lower container (#bres / #botstuff), if any. */
    desktop: each([...web, ...pagesIn("videos")], (_, body) => {
      const doc = parseHtml(body);
      const lower = first("#bres", doc) ?? first("#botstuff", doc);
      return {
        results: parseWebSearch(body).organic_results.map(({ title, link, position }) => ({ title, link, position })),
        // Titles with an outbound link, outside "People also ask" pairs and related searches.
        lowerTitles: lower
          ? all("a[href^='http'] h3", lower)
              .filter((h) => !all(".related-question-pair", lower).some((pair) => all("h3", pair).includes(h)))
              .map((h) => text(h))
          : null,
      };
    }),
    brokenProgressiveResults: parseWebSearch(read("upstream-json/divan-krovat-dominik-upstream-json-broken-ru-2024.txt")).organic_results.length,
    /** Each progressive page: what joining it threw, and what parsing it cut inside its second chunk threw. */
    progressive: each(pagesIn("upstream-json"), (_, body) => ({
      joined: thrown(() => joinJsonChunks(body)),
      cut: thrown(() => parseWebSearch(body.slice(0, body.indexOf('/*""*/', body.indexOf('/*""*/') + 6) - 20))),
    })),
    /** Each page: the discussion posts also read as organic results, and whether each post the parser gave is an organic result's link. */
    discussions: each([...web, ...mobile, ...nojs], (_, body) => {
      const posts = discussionSections(parseHtml(body)).flatMap((s) => all("a[href]", s).map((a) => a.attribs.href));
      const blocks = parseWebSearch(body);
      const organic = new Set(blocks.organic_results.map((r) => r.link));
      return { leaked: posts.filter((p) => p && organic.has(p)), postsInOrganic: (blocks.discussions_and_forums ?? []).map((p) => organic.has(p.link)) };
    }),
    parisMobile: (({ discussions_and_forums, organic_results }) => ({ discussions_and_forums, organic: organic_results.length }))(parseWebSearch(read("web-mobile/paris-mobile-2023.html"))),
    basicPanels: each(nojs, (_, body) => {
      const graph = extractKnowledgeGraph(parseHtml(body));
      return graph ? { title: graph.title, type: graph.type } : null;
    }),
    /** Each basic page: its organic results, and how many the light news rule reads too. */
    lightNews: each(nojs, (_, body) => {
      const news = new Set(parseNews(body).news_results.map((n) => `${n.title}\n${n.link}`));
      const organic = parseWebSearch(body).organic_results;
      return { organic: organic.length, read: organic.filter((r) => news.has(`${r.title}\n${r.link}`)).length };
    }),
    olderNews: each(OLDER_NEWS, (_, body) => parseNews(body).news_results),
    grid2021: parseImages(read("images/string-term-images-desktop-2021-wayback.html")).images_results,
    imageLinks: each(pagesIn("images"), (_, body) => parseImages(body).images_results.map((i) => i.link ?? i.original ?? null)),
    /** Every question whose served answer quotes a result: the title quoted, and the question as parsed. */
    quoted: [...web, ...mobile].flatMap((page) => {
      const body = read(page);
      const calls = servedHtml(body);
      if (calls.size === 0) return [];
      const doc = parseHtml(body);
      const questions = extractWebSearch(doc).related_questions ?? [];
      return all(".related-question-pair", doc).flatMap((pair) => {
        const title = quotedTitle(all("[id]", pair).map((el) => el.attribs.id!), calls);
        const question = questions.find((q) => q.question === (pair.attribs["data-q"] ?? text(first('[role="button"], [role="tab"]', pair))));
        return title && question ? [{ page, quoted: title, question: question.question, title: question.title ?? null, link: question.link ?? null }] : [];
      });
    }),
    /** Pages whose answers are only in scripts: questions with a link; with the scripts gone, the questions and those still answered. */
    scriptedAnswers: each(SCRIPTED_ANSWERS, (_, body) => {
      const stripped = parseWebSearch(body.replace(/<script\b[^>]*>[\s\S]*?<\/script>/g, "")).related_questions ?? [];
      return {
        linked: (parseWebSearch(body).related_questions ?? []).filter((q) => q.link).length,
        stripped: stripped.length,
        strippedAnswered: stripped.filter((q) => q.snippet || q.link || q.list),
      };
    }),
    about: (() => {
      const body = read(ABOUT_PAGE);
      // Without its two describing cards ("From Wikipedia", "In their own words"), the first card is a news card.
      const doc = parseHtml(body);
      const panel = closest(first('a[href*="tbm=ilp"]', doc)!, (el) => first('[role="listitem"]', el) !== null)!;
      const cards = all('[role="listitem"]', panel);
      cards.slice(0, 2).forEach(removeElement);
      return {
        panel: parseWebSearch(body).knowledge_graph,
        withoutClasses: parseWebSearch(withoutClasses(body)).knowledge_graph,
        germanTitle: parseWebSearch(body.replace("<div>About Tesla</div>", "<div>Über Tesla</div>")).knowledge_graph?.title ?? null,
        cards: cards.length,
        withoutDescribingCards: extractKnowledgeGraph(doc),
      };
    })(),
    /** The hotel packs: each card's text (links into the travel pages that carry a star rating), the places, with and without classes. */
    hotelPacks: each(HOTEL_PACKS, (_, body) => {
      const cards = all('a[href^="/travel/"], [data-url^="/travel/"]', parseHtml(body)).filter((a) => first('[role="img"][aria-label]', a));
      const places = parseWebSearch(body).local_results?.places ?? [];
      return { cards: cards.map((c) => text(c)), places, withAddress: places.filter((p) => "address" in p).length, withoutClasses: parseWebSearch(withoutClasses(body)).local_results?.places ?? null };
    }),
    /** Each basic page: the names of its place links, and the places read, with and without classes. */
    basicPlaces: each(nojs, (_, body) => ({
      names: [...new Set(all('a[href*="ludocid="] h3', parseHtml(body)).map((h) => text(h)))],
      places: parseWebSearch(body).local_results?.places ?? [],
      withoutClasses: parseWebSearch(withoutClasses(body)).local_results?.places ?? null,
    })),
    /** Pages with a classic local pack: each card's text (the tile's, holding the name beside the details in 2019) and the places' titles. */
    classicPacks: Object.fromEntries(
      [...web, ...mobile].flatMap((page) => {
        const body = read(page);
        if (!body.includes("rllt__details")) return [];
        const doc = parseHtml(body);
        const cards = all(".rllt__details", doc).map((d) => text(closest(d, (el) => /\b(?:VkpGBb|rllt__tile-content)\b/.test(el.attribs.class ?? "")) ?? d));
        return [[page, { cards, titles: (extractWebSearch(doc).local_results?.places ?? []).map((p) => p.title) }]];
      }),
    ),
  };
}

export type FamiliesWork = ReturnType<typeof familiesWork>;
