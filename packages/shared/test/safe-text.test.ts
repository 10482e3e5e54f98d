/**
 * Page text made harmless where results are built: control and bidi characters dropped from every
 * string, link fields kept only when http(s), image fields only when an image; words kept.
 */
import { buildResult, isHttpUrl, safeResult, safeText } from "../src/index.js";

describe("safeText", () => {
  test("drops C0 (but tab and line feed), DEL, C1 and the bidi controls; a CR line end becomes a line feed", () => {
    expect(safeText("a\u001b]0;title\u0007b\u0008\u007f\u0085\u009b1m\u0000c")).toBe("a]0;titleb1mc");
    expect(safeText("\u202egnp.exe \u202a\u202b\u202c\u202d \u2066\u2067\u2068\u2069 \u200e\u200f\u061c!")).toBe("gnp.exe   !");
    expect(safeText("line one\r\nline two\rthree\tcol")).toBe("line one\nline two\nthree\tcol");
  });

  test("leaves other text alone: accents, CJK, emoji with joiners, Arabic and Hebrew letters", () => {
    const words = "Café 初音ミク 👩‍💻 مرحبا שלום — “quoted” …";
    expect(safeText(words)).toBe(words);
  });
});

describe("isHttpUrl", () => {
  test.each([
    ["https://a.test/x?y=1", true],
    ["HTTP://a.test/", true],
    ["javascript:alert(1)", false],
    [" JaVaScRiPt:alert(1)", false],
    ["data:text/html,<script>", false],
    ["//a.test/", false],
    ["/relative", false],
    ["https://", false],
  ])("%s → %s", (value, ok) => expect(isHttpUrl(value)).toBe(ok));
});

describe("safeResult", () => {
  test("cleans every string and key, drops non-http(s) links and non-image images, keeps displayed_link as text", () => {
    const cleaned = safeResult({
      organic_results: [
        { title: "A\u001b[2J", link: "javascript:alert(1)", displayed_link: "a.test › x\u202e", snippet: "s\u0007" },
        { title: "B", link: "https://b.test/", sitelinks: [{ title: "c", link: "data:text/html,x" }], thumbnail: "data:image/png;base64,AAAA" },
      ],
      knowledge_graph: { website: "vbscript:x", "attr\u202e": "v", images: ["https://i.test/1.jpg", "javascript:x", "data:image/jpeg;base64,AA"] },
      local_results: { more_locations_link: "https://www.google.com/search?q=x", places: [{ title: "P", thumbnail: "javascript:x" }] },
      count: 3,
      flag: null,
    });
    expect(cleaned).toEqual({
      organic_results: [
        { title: "A[2J", displayed_link: "a.test › x", snippet: "s" },
        { title: "B", link: "https://b.test/", sitelinks: [{ title: "c" }], thumbnail: "data:image/png;base64,AAAA" },
      ],
      knowledge_graph: { attr: "v", images: ["https://i.test/1.jpg", "data:image/jpeg;base64,AA"] },
      local_results: { more_locations_link: "https://www.google.com/search?q=x", places: [{ title: "P" }] },
      count: 3,
      flag: null,
    });
  });

  test("buildResult applies it, search_parameters included", () => {
    const result = buildResult("web-search", { query: "q\u202e", country: "us", language: "en", page: 1 }, {
      organic_results: [{ position: 1, title: "T\u001b]0;x\u0007", link: "https://t.test/" }],
    } as never);
    expect(result.search_parameters.query).toBe("q");
    expect(result.organic_results).toEqual([{ position: 1, title: "T]0;x", link: "https://t.test/" }]);
  });
});
