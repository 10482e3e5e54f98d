/**
 * The page side of the field audit (fields.ts): what each item's card SHOWS, told by detectors of
 * the audit's own that never use our parsers: the page is read with parse5 and plain patterns
 * (page.ts). For every item we return, its CARD is located in the page: the anchor leading to the
 * item's link (a `/url?q=` redirect or Wayback prefix undone), else the element whose whole text is
 * the item's title (local places: their title; also a `data-cid` / `ludocid=` equal to the place
 * id); the card is the largest element around it holding no other item's anchor or title and
 * under a size cap. Items whose card is not found are counted apart ("unlocated") and judged on
 * nothing. Then each field counts as SHOWN when:
 *
 * web search (organic_results; position, title, link left out)
 *   displayed_link  a <cite> in the card, or an element whose text is a `host › path` URL line
 *   snippet         the card's text, less its title, URL line, date and sitelinks, is ≥ 60 characters
 *   date            an element whose whole text (a trailing `—`/`·` aside) is a date (absolute or an age, 8 languages)
 *   snippet_highlighted_words  an <em> or <b> outside the title and URL line
 *   sitelinks       another anchor in the card to the item's own host (not the item's link), outside the URL line
 *   thumbnail       an <img> over 32 px (declared), or with a source and no declared size, outside the title anchor's icon
 *   favicon         an <img> declared 10–32 px
 *   redirect_link   the title anchor's href or ping is Google's `/url?` redirect
 *   rich_snippet    a rating (aria-label or `Rating: 4.5` or a lone `4.5`), a review count or a price line outside the snippet text
 * web search: knowledge panel (its root: a kp-wholepage/kp-blk element, else the box around data-attrid="title")
 *   type (data-attrid="subtitle"), description (a data-attrid naming a description, ≥ 40 characters), kgmid (data-mid,
 *   or a `/m/…`, `/g/…` id or `kgmid=` in a panel link), header_images (a picture in an image/header row or a
 *   data-lpage tile), source (a "Wikipedia" link), website (a "Website" link, 9 languages), attributes (a kc:/ss:
 *   row reading `Label: value`), people_also_search_for (its heading, 9 languages)
 * web search: top stories items (located like organic results): source, date, thumbnail as for news below
 * web search: related questions (each returned question's box, found by its text, ≤ 3,000 characters): snippet (a
 *   ≥ 40-character text other than the question), link (an outside-Google anchor), displayed_link (a <cite>), date, thumbnail
 * web search: AI overview references: each distinct outside-Google link in the box around the "AI Overview" heading
 *   (as large as it gets without an organic result's heading anchor or a "People also ask" heading) is one shown
 * web search blocks (one per page each; shown → returned)
 *   ai_overview     an element whose text is "AI Overview"
 *   knowledge_graph an element with `data-attrid` (title/subtitle/kc:…) or class kp-wholepage / kp-blk
 *   related_questions  elements with `data-q`, or class related-question-pair, or a "People also ask" heading (7 languages)
 *   related_searches   a "Related searches" heading (8 languages) or #brs
 *   top_stories     a "Top stories" heading (7 languages)
 *   ads             an anchor to /aclk or googleadservices.com with text, outside a product grid
 *   inline_shopping a "Sponsored" / "Ads" product grid: class commercial-unit / pla-unit, or ≥ 2 aclk product tiles with prices
 *   inline_videos   ≥ 2 video players (data-curl/data-surl to youtube or vimeo), or a "Videos" heading (7 languages)
 *                   near a video link (youtube, vimeo, or a duration like 3:45)
 *   perspectives    a "Perspectives" heading
 *   local_results   a CID-shaped `data-cid` (6+ digits; short hex/UUID ones are other things) or a `ludocid=` link
 * local (web pages' local packs; places: position, title left out)
 *   rating, reviews (`(1,234)`, `(1.4K)`), price (`$$`, `€10–20`), phone (8–15 digits), hours (open/closed words),
 *   address (a `·`-separated segment shaped like a street address), thumbnail (an <img> over 32 px),
 *   place_id (`data-cid` / `ludocid=` in the card), gps_coordinates (`data-lat`/`data-lng`, `@lat,lng`, `!3d…!4d…`),
 *   links.website (an anchor to a non-Google site), links.directions (an anchor to /maps/dir or
 *   named "Directions", 9 languages),
 *   service_options (dine-in, takeout, delivery…), years_in_business (`10+ years in business`)
 * news (news_results; position, title, link left out)
 *   source (a favicon or a short text element other than the title, date and snippet), date (as above),
 *   iso_date (the date is absolute), snippet (≥ 40 characters besides title/source/date), thumbnail (an <img> over 32 px),
 *   favicon (an <img> declared 10–32 px)
 * images (images_results; position, title, link left out)
 *   thumbnail (an <img>), source (a short text other than the title and a `W × H` size), original (an `imgurl=` link or
 *   data-ou), original_width/original_height (a `W × H` text, `w=`/`h=` on the imgres link, data-ow/data-oh),
 *   source_logo (an <img> declared 10–32 px), is_product (a price or stock words in the tile), in_stock (stock words:
 *   `In stock`, `在庫あり`…)
 * shopping (shopping_results; position, title left out)
 *   price + extracted_price (a price element), old_price (two different prices, or one struck through), rating, reviews,
 *   source (a short link to the merchant: the ad redirect or an outside site, or a "de/from/by <Merchant>" text), thumbnail (an <img>), delivery
 *   (shipping/frete/entrega words), product_link + product_id (an anchor to /shopping/product/<id>),
 *   number_of_comparisons (`em 5 lojas`, `from 5 stores`), tag (`SALE`, `PROMOÇÃO`, `Price drop`), snippet (a
 *   60–400-character text line without links, not a `·` list), extensions (a line of ≥ 2 short `·`-separated parts)
 *
 * Related questions, top stories and AI overview references are judged only where the page holds
 * their text or link (a returned question whose text is not on the page is skipped, not counted).
 */
import {
  ABSOLUTE_DATE,
  ADDRESS,
  HOURS,
  SERVICE_OPTIONS,
  YEARS_IN_BUSINESS,
  ancestors,
  attr,
  baseOf,
  cardAround,
  contains,
  dateShown,
  elementsOf,
  elementsWithText,
  emphasisIn,
  hostOf,
  capturePlaceholder,
  iconIn,
  isGoogleHost,
  parentEl,
  phoneIn,
  pictureIn,
  pricesIn,
  RELATIVE_DATE,
  PRICE as PRICE_RE,
  ratingIn,
  reviewsIn,
  targetOf,
  textOf,
  type El,
  type Page,
} from "./page.js";

type Item = Record<string, unknown>;

export interface Located {
  card: El;
  /** The anchor or element the card was found from. */
  head: El;
}

/**
 * Cards of a list of items, by link (`linkKey`) or else by exact title text. Every other item's
 * anchor and title element bounds a card, and so does any other anchor holding a heading.
 */
export function locate(page: Page, items: Item[], linkKeys: string[], titleKey: string, maxText: number, extraHeads: El[] = []): Array<Located | undefined> {
  const linkOf = (item: Item) => linkKeys.map((k) => targetOf(String(item[k] ?? ""))).find((t) => t && page.anchors.some((a) => baseOf(a.target) === baseOf(t)));
  const heads = items.map((item) => {
    const link = linkOf(item);
    if (link) {
      let anchors = page.anchors.filter((a) => a.target === link).map((a) => a.el);
      if (!anchors.length) anchors = page.anchors.filter((a) => baseOf(a.target) === baseOf(link)).map((a) => a.el);
      // Several anchors lead there (a sanitized page's placeholder links, a result linked twice): the one with the title.
      const title = String(item[titleKey] ?? "").slice(0, 30);
      const titled = title ? anchors.filter((a) => textOf(a).includes(title)) : [];
      if (titled.length) return titled.sort((a, b) => textOf(a).length - textOf(b).length)[0];
      if (anchors.length) return anchors.sort((a, b) => textOf(b).length - textOf(a).length)[0];
    }
    const title = String(item[titleKey] ?? "");
    return title ? elementsWithText(page, title)[0] : undefined;
  });
  const headSet = new Set<El>([...heads.filter((h): h is El => !!h), ...extraHeads]);
  return heads.map((head, i) => {
    if (!head) return undefined;
    const own = linkOf(items[i]!);
    const isOther = (e: El) =>
      (headSet.has(e) && e !== head && !contains(head, e) && !contains(e, head)) ||
      (e.tagName === "a" && e !== head && baseOf(targetOf(attr(e, "href"))) !== baseOf(own) && elementsOf(e).some((x) => x.tagName === "h3" || attr(x, "role") === "heading"));
    return { card: cardAround(head, isOther, maxText), head };
  });
}

// ---- web search ---------------------------------------------------------------------------------------

const URL_LINE = /^(?:https?:\/\/)?[\w-]+(?:\.[\w-]+)+(?: › .*)?$/;

export function organicFields(card: El, head: El, item: Item, add: (f: string, shown: boolean) => void) {
  const all = elementsOf(card);
  const titles = all.filter((e) => e.tagName === "h3" || attr(e, "role") === "heading");
  const urlLines = all.filter((e) => e.tagName === "cite" || (textOf(e).length < 120 && URL_LINE.test(textOf(e)) && e.tagName !== "a"));
  const inTitle = (e: El) => titles.some((t) => contains(t, e)) || contains(head, e) && head.tagName === "a" && textOf(head).length < 200 && titles.some((t) => contains(head, t));
  const inUrl = (e: El) => urlLines.some((u) => contains(u, e));
  const own = targetOf(String(item.link ?? ""));
  const ownHost = own ? hostOf(own) : "";
  const sitelinks = all.filter((e) => {
    if (e.tagName !== "a" || e === head || contains(head, e) || inUrl(e)) return false;
    const t = targetOf(attr(e, "href"));
    return !!t && t !== own && hostOf(t) === ownHost && textOf(e).length > 0 && textOf(e).length <= 80;
  });
  const date = dateShown(card, (e) => inTitle(e) || inUrl(e));
  let rest = textOf(card);
  for (const e of [...titles, ...urlLines, ...sitelinks]) rest = rest.replace(textOf(e), " ");
  rest = rest.replace(/\s+/g, " ").trim();
  const href = attr(head, "href") ?? "";
  const ping = attr(head, "ping") ?? "";
  add("displayed_link", urlLines.length > 0);
  add("snippet", rest.length >= 60);
  add("date", date.shown);
  add("snippet_highlighted_words", emphasisIn(card, (e) => inTitle(e) || inUrl(e) || e === head));
  add("sitelinks", sitelinks.length > 0);
  add("thumbnail", pictureIn(card, (e) => inTitle(e) && !!imageIcon(e)));
  add("favicon", iconIn(card));
  add("redirect_link", /^(?:https?:\/\/(?:www\.)?google\.[a-z.]+)?\/url\?/.test(href) || /^\/url\?/.test(ping));
  add("rich_snippet", ratingIn(card, inTitle) || reviewsIn(card, inTitle) || pricesIn(card, (e) => inTitle(e) || inUrl(e)).length > 0);
}
const imageIcon = (e: El) => e.tagName === "img";

/** What each organic result's card shows (undefined: its card was not found), for tests and checks by eye. */
export function organicShown(page: Page, items: Item[]): Array<Record<string, boolean> | undefined> {
  return locate(page, items, ["link"], "title", 2500).map((loc, i) => {
    if (!loc) return undefined;
    const shown: Record<string, boolean> = {};
    organicFields(loc.card, loc.head, items[i]!, (f, s) => (shown[f] = s));
    return shown;
  });
}


/** Whole blocks a web page shows, by markers of the page itself. */
const HEADINGS: Record<string, RegExp> = {
  related_questions: /^(?:people also ask|autres questions posées|podobne pytania|ähnliche fragen|otras preguntas de los usuarios|as pessoas também perguntam|другие также спрашивают|他の人はこちらも質問|相关问题|其他人还问了)$/i,
  related_searches: /^(?:related searches|recherches associées|podobne wyszukiwania|ähnliche suchanfragen|búsquedas relacionadas|pesquisas relacionadas|связанные запросы|関連する検索|相关搜索|other searches)$/i,
  top_stories: /^(?:top stories|à la une|najważniejsze artykuły|schlagzeilen|noticias destacadas|principais notícias|главные новости|トップニュース|头条新闻)$/i,
  inline_videos: /^(?:videos|vidéos|filmy|wideo|vídeos|видео|動画|视频)$/i,
  perspectives: /^(?:perspectives)$/i,
  ai_overview: /^(?:ai overview|ai overviews)$/i,
};

export function webBlocksShown(page: Page): Record<string, boolean> {
  const shown: Record<string, boolean> = {};
  const headed = (re: RegExp) => page.all.some((e) => /^(?:h[1-6]|div|span)$/.test(e.tagName) && textOf(e).length < 40 && re.test(textOf(e)));
  shown.ai_overview = headed(HEADINGS.ai_overview!);
  shown.knowledge_graph = page.all.some((e) => {
    const a = attr(e, "data-attrid") ?? "";
    const cls = attr(e, "class") ?? "";
    return a === "title" || a === "subtitle" || a.startsWith("kc:/") || /\bkp-(?:wholepage|blk)\b/.test(cls);
  });
  shown.related_questions = page.all.some((e) => attr(e, "data-q") !== undefined || /\brelated-question-pair\b/.test(attr(e, "class") ?? "")) || headed(HEADINGS.related_questions!);
  shown.related_searches = headed(HEADINGS.related_searches!) || page.all.some((e) => attr(e, "id") === "brs");
  shown.top_stories = headed(HEADINGS.top_stories!);
  const aclk = page.anchors.filter((a) => /(?:^|google\.[a-z.]+)\/aclk\?|googleadservices\.com/.test(a.href) && textOf(a.el).length > 0);
  const gridAncestor = (e: El) => ancestors(e).some((p) => /\b(?:commercial-unit|pla-unit|cu-container|mnr-c pla)/.test(attr(p, "class") ?? ""));
  shown.ads = aclk.some((a) => !gridAncestor(a.el) && pricesIn(a.el).length === 0);
  shown.inline_shopping = page.all.some((e) => /\b(?:commercial-unit|pla-unit)\b/.test(attr(e, "class") ?? "")) || aclk.filter((a) => pricesIn(a.el).length > 0).length >= 2;
  const videoHeads = page.all.filter((e) => /^(?:h[1-6]|div|span)$/.test(e.tagName) && HEADINGS.inline_videos!.test(textOf(e)));
  const players = page.all.filter((e) => /youtube\.com\/watch|youtu\.be\/|vimeo\.com\//.test(attr(e, "data-curl") ?? attr(e, "data-surl") ?? ""));
  shown.inline_videos = players.length >= 2 || videoHeads.some((h) => {
    for (let p: El | undefined = h, up = 0; p && up < 6; p = ancestors(p)[0], up++) {
      if (textOf(p).length > 4000) break;
      if (elementsOf(p).some((x) => x.tagName === "a" && (/youtube\.com\/watch|youtu\.be|vimeo\.com|dailymotion/.test(attr(x, "href") ?? "") || /\b\d{1,2}:\d{2}\b/.test(textOf(x))))) return true;
    }
    return false;
  });
  shown.perspectives = headed(HEADINGS.perspectives!);
  shown.local_results = page.all.some((e) => CID.test(attr(e, "data-cid") ?? "")) || page.anchors.some((a) => /[?&]ludocid=\d/.test(a.href));
  return shown;
}

/** A place's CID: a long decimal number (other `data-cid` values on the page are short hex or UUIDs). */
export const CID = /^\d{6,}$/;

// ---- related questions -----------------------------------------------------------------------------

/**
 * What each returned question's box shows once opened (the answer is in the page, folded): found by
 * its question text, the box is as large as it gets without another question, ≤ 3,000 characters.
 */
export function relatedQuestionsShown(page: Page, questions: Item[]): Array<Record<string, boolean> | undefined> {
  const heads = questions.map((q) => elementsWithText(page, String(q.question ?? ""))[0]);
  const headSet = new Set(heads.filter((h): h is El => !!h));
  return heads.map((head, i) => {
    if (!head) return undefined;
    const box = cardAround(head, (e) => headSet.has(e) && e !== head && !contains(e, head), 3000);
    const all = elementsOf(box);
    const question = String(questions[i]!.question ?? "");
    const external = all.filter((e) => {
      const t = e.tagName === "a" ? targetOf(attr(e, "href")) : undefined;
      return !!t && !isGoogleHost(hostOf(t));
    });
    return {
      snippet: all.some((e) => !contains(e, head) && !elementsOf(e).includes(head) && textOf(e).length >= 40 && !textOf(e).includes(question)),
      link: external.length > 0,
      displayed_link: all.some((e) => e.tagName === "cite"),
      date: dateShown(box, (e) => e === head || contains(head, e)).shown,
      thumbnail: pictureIn(box),
    };
  });
}

// ---- AI overview ---------------------------------------------------------------------------------

/**
 * The sources an AI overview cites: the distinct outside-Google link targets in the box around its
 * "AI Overview" heading (as large as it gets without an organic result's heading anchor, ≤ 12,000
 * characters).
 */
export function aiReferencesShown(page: Page, organic: Item[]): Set<string> {
  const out = new Set<string>();
  const heading = page.all.find((e) => /^(?:h[1-6]|div|span)$/.test(e.tagName) && HEADINGS.ai_overview!.test(textOf(e)));
  if (!heading) return out;
  const organicTargets = new Set(organic.map((o) => baseOf(targetOf(String(o.link ?? "")))));
  const isOrganic = (e: El) => e.tagName === "a" && organicTargets.has(baseOf(targetOf(attr(e, "href")))) && elementsOf(e).some((x) => x.tagName === "h3");
  const box = cardAround(heading, (e) => isOrganic(e) || (e !== heading && HEADINGS.related_questions!.test(textOf(e))), 12000);
  for (const a of elementsOf(box)) {
    if (a.tagName !== "a") continue;
    const t = baseOf(targetOf(attr(a, "href")));
    if (t && !isGoogleHost(hostOf(t))) out.add(t);
  }
  return out;
}

// ---- knowledge panel -----------------------------------------------------------------------------

const PASF = /^(?:people also search for|les internautes ont également recherché|ludzie wyszukują też|andere suchten auch nach|la gente también busca|as pessoas também pesquisam|также ищут|他の人はこちらも検索|其他人还搜索了)$/i;
const WEBSITE = /^(?:website|site web|site|strona|strona internetowa|webseite|sitio web|веб-сайт|сайт|ウェブサイト|官方网站)$/i;

/** The knowledge panel's root: a `kp-wholepage` / `kp-blk` element, else the box around its title row. */
export function knowledgePanel(page: Page): El | undefined {
  const marked = page.all.find((e) => /\bkp-(?:wholepage|blk)\b/.test(attr(e, "class") ?? ""));
  if (marked) return marked;
  const title = page.all.find((e) => attr(e, "data-attrid") === "title");
  if (!title) return undefined;
  let root = title;
  for (let p = ancestors(title)[0]; p && textOf(p).length <= 6000 && p.tagName !== "body"; p = ancestors(p)[0]) root = p;
  return root;
}

/** What a page's knowledge panel shows (title left out). */
export function knowledgePanelShown(page: Page): Record<string, boolean> | undefined {
  const kp = knowledgePanel(page);
  if (!kp) return undefined;
  const all = elementsOf(kp);
  const attrid = (e: El) => attr(e, "data-attrid") ?? "";
  const hrefs = all.filter((e) => e.tagName === "a").map((a) => attr(a, "href") ?? "");
  const pasf = all.find((e) => PASF.test(textOf(e)));
  return {
    type: all.some((e) => attrid(e) === "subtitle" && textOf(e).length > 0),
    description: all.some((e) => /description/i.test(attrid(e)) && textOf(e).length >= 40),
    kgmid: all.some((e) => /^\/(?:m|g)\/[0-9a-z_]{4,}$/i.test(attr(e, "data-mid") ?? attr(e, "data-kgmid") ?? "")) || hrefs.some((h) => /[?&]kgmid=|%2F(?:m|g)%2F[0-9a-z_]{4,}|[?&=](?:\/|%2F)(?:m|g)(?:\/|%2F)[0-9a-z_]{4,}/i.test(h)),
    header_images: all.some((e) => e.tagName === "img" && pictureIn(parentEl(e) ?? e) && !!ancestors(e).find((p) => /header|image/i.test(attrid(p)) || attr(p, "data-lpage") !== undefined)) ||
      all.some((e) => attr(e, "data-lpage") !== undefined && elementsOf(e).some((x) => x.tagName === "img")),
    source: all.some((e) => e.tagName === "a" && /^wikipedia$/i.test(textOf(e))),
    website: all.some((e) => e.tagName === "a" && WEBSITE.test(textOf(e))),
    attributes: all.some((e) => /^(?:kc|ss):\//.test(attrid(e)) && /\S:\s*\S/.test(textOf(e)) && textOf(e).length < 300),
    people_also_search_for: !!pasf,
  };
}

// ---- local ------------------------------------------------------------------------------------------------

export function localFields(page: Page, card: El, item: Item, add: (f: string, shown: boolean) => void, title: string) {
  const all = elementsOf(card);
  const isTitle = (e: El) => textOf(e) === title;
  const text = textOf(card).replace(title, " ");
  const segments = all
    .filter((e) => e.childNodes.some((c) => c.nodeName === "#text" && (c as { value: string }).value.trim()))
    .flatMap((e) => textOf(e).split(/\s*[·⋅•]\s*/))
    .map((s) => s.trim())
    .filter((s) => s && s !== title);
  const anchors = all.filter((e) => e.tagName === "a");
  const hrefs = anchors.map((a) => attr(a, "href") ?? "");
  const cid = String(item.place_id ?? "");
  add("rating", ratingIn(card, isTitle));
  add("reviews", reviewsIn(card, isTitle));
  add("price", all.some((e) => /^(?:[$€£¥₽₹]{1,4}|[$€£]\d+[–-]\d+|[$€£]\d+\+?)$/.test(textOf(e).replace(/^·\s*/, ""))));
  add("phone", phoneIn(text));
  add("hours", HOURS.test(text));
  add("address", segments.some((s) => ADDRESS.test(s) && !phoneIn(s) && !HOURS.test(s) && !/^\(?\d[\d.,]*\)?$/.test(s) && !YEARS_IN_BUSINESS.test(s) && !/^[1-5][.,]\d/.test(s)));
  add("thumbnail", pictureIn(card) || all.some((e) => /background-image:\s*url\(/i.test(attr(e, "style") ?? "")));
  add("place_id", all.some((e) => CID.test(attr(e, "data-cid") ?? "")) || hrefs.some((h) => /[?&]ludocid=\d/.test(h)) || (cid !== "" && page.html.includes(`ludocid=${cid}`) && all.some((e) => e.attrs.some((a) => a.value.includes(cid)))));
  add("gps_coordinates", all.some((e) => attr(e, "data-lat") !== undefined) || hrefs.some((h) => /@-?\d+\.\d+,-?\d+\.\d+|!3d-?\d+\.\d+!4d-?\d+\.\d+|[?&](?:ll|sll)=-?\d+\.\d+/.test(h)));
  add("links.website", anchors.some((a) => {
    const t = targetOf(attr(a, "href"));
    return !!t && !isGoogleHost(hostOf(t)) && textOf(a) !== title;
  }));
  add("links.directions", hrefs.some((h) => /\/maps\/dir\//.test(h)) || all.some((e) => /^(?:directions|itinéraire|wegbeschreibung|route|trasa|dojazd|cómo llegar|rotas|indicazioni|маршрут|ルート)$/i.test(textOf(e))));
  add("service_options", SERVICE_OPTIONS.test(text));
  add("years_in_business", YEARS_IN_BUSINESS.test(text));
}

/**
 * Each place's card: from its title element (inside the element carrying its CID when there is
 * one, else the first element with its title text not taken by an earlier place), as large as it
 * gets without another place's title.
 */
export function placeCards(page: Page, places: Item[]): Array<El | undefined> {
  const used = new Set<El>();
  const heads = places.map((p) => {
    const cid = String(p.place_id ?? "");
    const title = String(p.title ?? "");
    const byId = CID.test(cid) ? page.all.find((e) => attr(e, "data-cid") === cid || /[?&]ludocid=(\d+)/.exec(attr(e, "href") ?? "")?.[1] === cid) : undefined;
    const titled = title ? elementsWithText(page, title).filter((e) => !used.has(e)) : [];
    const head = (byId && (titled.find((e) => contains(byId, e)) ?? byId)) ?? titled[0];
    if (head) used.add(head);
    return head;
  });
  const headSet = new Set(heads.filter((h): h is El => !!h));
  return heads.map((head) => head && cardAround(head, (e) => headSet.has(e) && e !== head && !contains(e, head), 700));
}

/** What each place's card shows (undefined: its card was not found). */
export function placeShown(page: Page, places: Item[]): Array<Record<string, boolean> | undefined> {
  return placeCards(page, places).map((card, i) => {
    if (!card) return undefined;
    const shown: Record<string, boolean> = {};
    localFields(page, card, places[i]!, (f, s) => (shown[f] = s), String(places[i]!.title ?? ""));
    return shown;
  });
}

// ---- news ----------------------------------------------------------------------------------------------------

export function newsFields(card: El, item: Item, add: (f: string, shown: boolean) => void) {
  const all = elementsOf(card);
  const title = String(item.title ?? "");
  const isTitle = (e: El) => textOf(e) === title || (title.length > 10 && textOf(e).startsWith(title.slice(0, 30)) && textOf(e).length <= title.length + 5);
  const date = dateShown(card, isTitle);
  // Elements holding text of their own (not only through child elements).
  const texts = all.filter((e) => e.childNodes.some((c) => c.nodeName === "#text" && (c as { value: string }).value.trim())).map((e) => textOf(e));
  const others = texts.filter((t) => t !== title && !title.startsWith(t.slice(0, 20)));
  const short = others.filter((t) => t.length >= 2 && t.length <= 50 && !/^[·•—-]$/.test(t) && !ABSOLUTE_DATE.test(t.replace(/\s*[—·•-]\s*$/, "")) && !RELATIVE_DATE.test(t.replace(/\s*[—·•-]\s*$/, "")));
  add("source", iconIn(card) || short.length > 0);
  add("date", date.shown);
  add("iso_date", date.absolute);
  add("snippet", all.some((e) => !isTitle(e) && !elementsOf(e).some(isTitle) && textOf(e).length >= 40 && !textOf(e).includes(title)));
  add("thumbnail", pictureIn(card));
  add("favicon", iconIn(card));
}

// ---- images -----------------------------------------------------------------------------------------------------

const SIZE_TEXT = /\b\d{2,5}\s?[×x]\s?\d{2,5}\b/;
export function imageFields(card: El, item: Item, add: (f: string, shown: boolean) => void) {
  const all = elementsOf(card);
  const title = String(item.title ?? "");
  const hrefs = all.filter((e) => e.tagName === "a").map((a) => attr(a, "href") ?? "");
  const texts = all.filter((e) => e.childNodes.some((c) => c.nodeName === "#text" && (c as { value: string }).value.trim())).map((e) => textOf(e));
  add("thumbnail", all.some((e) => e.tagName === "img" && !iconOnly(e) && !capturePlaceholder(e)));
  add("source", texts.some((t) => t.length >= 2 && t.length <= 60 && t !== title && !title.startsWith(t) && !SIZE_TEXT.test(t) && !/^[\d\s.,:kKbB-]+$/.test(t)));
  add("original", hrefs.some((h) => /[?&]imgurl=/.test(h)) || all.some((e) => attr(e, "data-ou") !== undefined));
  const size = SIZE_TEXT.test(textOf(card)) || hrefs.some((h) => /[?&]w=\d+/.test(h) && /[?&]h=\d+/.test(h)) || all.some((e) => attr(e, "data-ow") !== undefined);
  add("original_width", size);
  add("original_height", size);
  add("source_logo", iconIn(card));
  const stock = STOCK.test(textOf(card));
  add("is_product", pricesIn(card).length > 0 || stock);
  add("in_stock", stock);
}
/** Stock words a product tile shows next to its site name. */
const STOCK = /在庫あり|在庫なし|\b(?:in stock|out of stock|em estoque|esgotado|en stock|disponible|auf lager|nicht auf lager|w magazynie)\b/i;
function iconOnly(e: El): boolean {
  const w = Number(attr(e, "width") ?? NaN);
  const h = Number(attr(e, "height") ?? NaN);
  return Number.isFinite(w) && Number.isFinite(h) && w <= 32 && h <= 32;
}

// ---- shopping ------------------------------------------------------------------------------------------------------

export function shoppingFields(card: El, item: Item, add: (f: string, shown: boolean) => void) {
  const all = elementsOf(card);
  const title = String(item.title ?? "");
  const isTitle = (e: El) => textOf(e) === title;
  const text = textOf(card).replace(title, " ");
  const prices = pricesIn(card, isTitle);
  const struck = all.some((e) => (e.tagName === "s" || e.tagName === "del" || /line-through/.test(attr(e, "style") ?? "")) && /\d/.test(textOf(e)));
  const hrefs = all.filter((e) => e.tagName === "a").map((a) => attr(a, "href") ?? "");
  add("price", prices.length > 0);
  add("extracted_price", prices.length > 0);
  add("old_price", prices.length >= 2 || struck);
  add("rating", ratingIn(card, isTitle));
  add("reviews", reviewsIn(card, isTitle) || /\b\d[\d.,]* (?:avaliações|reviews|comentários|opiniões)\b/i.test(text));
  const merchantLink = all.some((e) => {
    if (e.tagName !== "a" || isTitle(e) || elementsOf(e).some(isTitle)) return false;
    const t = textOf(e);
    const to = targetOf(attr(e, "href"));
    const out = /\/aclk\?/.test(attr(e, "href") ?? "") || (!!to && !isGoogleHost(hostOf(to)));
    return out && t.length >= 2 && t.length <= 40 && !PRICE_RE.test(t);
  });
  add("source", merchantLink || /(?:^|\s)(?:de|from|by|por|em)\s+\p{Lu}[\p{L}\d.&' -]{1,40}/u.test(text.replace(/\b(?:em|from|de) \d+\+? (?:lojas|stores|shops)\b/gi, "")));
  add("thumbnail", pictureIn(card));
  add("delivery", /\b(?:frete|shipping|delivery|entrega|envío|livraison)\b/i.test(text));
  const product = hrefs.some((h) => /\/shopping\/product\/\d+/.test(h));
  add("product_link", product);
  add("product_id", product);
  add("number_of_comparisons", /\b(?:em|from|in|de|compare prices from)\s+\d+\+?\s+(?:lojas|stores|shops|sellers|tiendas|vendedores)\b/i.test(text));
  const lines = all.filter((e) => e.tagName !== "a" && !isTitle(e) && !/^h[1-6]$/.test(e.tagName) && textOf(e) !== title && textOf(e).length >= 60 && textOf(e).length <= 400 && !elementsOf(e).some(isTitle) && elementsOf(e).filter((x) => x.tagName === "a").length === 0 && textOf(e).split(/\s+·\s+/).length < 3);
  add("snippet", lines.length > 0);
  add("extensions", all.some((e) => {
    const parts = textOf(e).split(/\s+·\s+/);
    return parts.length >= 2 && parts.every((p) => p.length >= 1 && p.length <= 40) && !elementsOf(e).some(isTitle) && !PRICE_RE.test(textOf(e));
  }));
  add("tag", /\b(?:sale|promoção|oferta|price drop|queda de preço|baixou)\b/i.test(text));
}
