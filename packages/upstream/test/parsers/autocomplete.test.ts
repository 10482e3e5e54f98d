import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { NotASuggestResponseError, parseAutocomplete } from "../../src/kinds/web-autocomplete.js";
import { FIXTURES_DIR } from "../fixtures-dir.js";

const here = dirname(fileURLToPath(import.meta.url));
const fixture = (name: string) => readFileSync(join(here, "../fixtures", name), "utf8");

describe("parseAutocomplete: client=chrome", () => {
  test("reads suggestions with relevance and type from the metadata object", () => {
    expect(parseAutocomplete(fixture("autocomplete-chrome-documented-format.json"))).toEqual({
      suggestions: [
        { value: "coffee near me", relevance: 1250, type: "QUERY" },
        { value: "coffee shops", relevance: 1001, type: "QUERY" },
        { value: "coffee maker", relevance: 650, type: "QUERY" },
        { value: "coffee table", relevance: 601, type: "QUERY" },
        { value: "www.coffeebean.com", relevance: 550, type: "NAVIGATION" },
      ],
      verbatim_relevance: 1300,
    });
  });

  test("leaves out relevance and type where the metadata lists fewer entries", () => {
    const body = JSON.stringify(["tea", ["tea time", "tea cup"], [], [], { "google:suggestrelevance": [900] }]);
    expect(parseAutocomplete(body)).toEqual({ suggestions: [{ value: "tea time", relevance: 900 }, { value: "tea cup" }] });
  });

  test("reads the JSONP form", () => {
    expect(parseAutocomplete(fixture("autocomplete-chrome-jsonp-documented-format.txt"))).toEqual({
      suggestions: [
        { value: "coffee near me", relevance: 1250, type: "QUERY" },
        { value: "coffee shops", relevance: 600, type: "QUERY" },
      ],
      verbatim_relevance: 851,
    });
  });

  test("reads JSONP without the comment prefix or semicolon, behind a dotted callback", () => {
    expect(parseAutocomplete('window.google.ac.h(["ab",["abc"]])')).toEqual({ suggestions: [{ value: "abc" }] });
  });
});

describe("parseAutocomplete: client=firefox", () => {
  test("reads the suggestions at index 1 and invents no relevance", () => {
    expect(parseAutocomplete(fixture("autocomplete-firefox-documented-format.json"))).toEqual({
      suggestions: [{ value: "coffee near me" }, { value: "coffee shops" }, { value: "coffee maker" }],
    });
  });

  test("answers an empty list for a query with no suggestions", () => {
    expect(parseAutocomplete('["qwxzzv",[]]')).toEqual({ suggestions: [] });
  });

  test("keeps a suggestion's own angle brackets: plain-text formats are not markup", () => {
    expect(parseAutocomplete('["a",["a<b"]]')).toEqual({ suggestions: [{ value: "a<b" }] });
  });
});

describe("parseAutocomplete: client=gws-wiz", () => {
  test("skips the XSSI guard, strips <b> tags and decodes entities", () => {
    expect(parseAutocomplete(fixture("autocomplete-gws-wiz-documented-format.txt"))).toEqual({
      suggestions: [{ value: "coffee near me" }, { value: "coffee bean & tea leaf" }, { value: "coffee shop's menu" }],
    });
  });

  test("reads the psy-ab variant, whose entries follow the query", () => {
    const body = `)]}'\n["tea",[["tea<b> time</b>",0,[512]],["<b>green </b>tea",0]],{"q":"x"}]`;
    expect(parseAutocomplete(body)).toEqual({ suggestions: [{ value: "tea time" }, { value: "green tea" }] });
  });
});

describe("parseAutocomplete: output=toolbar XML", () => {
  test("reads each suggestion's data attribute with entities decoded", () => {
    const xml = `<?xml version="1.0"?><toplevel><CompleteSuggestion><suggestion data="mac &amp; cheese"/><num_queries int="5"/></CompleteSuggestion><CompleteSuggestion><suggestion data="men&#39;s shoes"/></CompleteSuggestion></toplevel>`;
    expect(parseAutocomplete(xml)).toEqual({ suggestions: [{ value: "mac & cheese" }, { value: "men's shoes" }] });
  });

  test("answers an empty list for an empty <toplevel/>", () => {
    expect(parseAutocomplete('<?xml version="1.0"?><toplevel/>\n')).toEqual({ suggestions: [] });
  });
});

describe("parseAutocomplete: bodies that are not suggestion lists", () => {
  test.each([
    ["an HTML error page", "<!DOCTYPE html><html><title>Error 400 (Bad Request)!!1</title><p>That’s an error.</p></html>"],
    ["a dropdown DOM capture", JSON.stringify([{ query: "youtube", results: [{ index: 0, text: "YouTube", html: "<div/>", height: 40 }] }])],
    ["a JSON object", '{"suggestions":["a"]}'],
    ["an empty body", ""],
    ["plain text", "Service Unavailable"],
  ])("rejects %s", (_what, body) => {
    expect(() => parseAutocomplete(body)).toThrow(NotASuggestResponseError);
  });
});

const autocompleteDir = join(FIXTURES_DIR, "autocomplete");
const describeIfCaptured = existsSync(autocompleteDir) ? describe : describe.skip;

describeIfCaptured("parseAutocomplete on the captured bodies", () => {
  const captured = (name: string) => readFileSync(join(autocompleteDir, name), "utf8");

  test("rejects Google's 400 page", () => {
    expect(() => parseAutocomplete(captured("bad-request-400-2013.html"))).toThrow(/Error 400/);
  });

  test("rejects the Cypress dropdown capture: it is not an upstream response", () => {
    expect(() => parseAutocomplete(captured("dropdown-dom-capture-2022.json"))).toThrow(NotASuggestResponseError);
  });
});
