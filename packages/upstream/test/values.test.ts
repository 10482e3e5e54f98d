import { parseCount, parsePrice, parseRating } from "../src/values.js";

describe("parseCount: counts as pages show them, in any language", () => {
  it.each([
    ["1,234", 1234],
    ["1.234", 1234],
    ["1\u00a0234", 1234],
    ["1\u202f234 avis", 1234],
    ["12'345", 12345],
    ["(245)", 245],
    ["(1.4K)", 1400],
    ["1.2K reviews", 1200],
    ["12K", 12000],
    ["(1,5 mil)", 1500],
    ["12 mil", 12000],
    ["2,3 mi", 2_300_000],
    ["1,2 M", 1_200_000],
    ["3,4 Mio.", 3_400_000],
    ["12 Tsd.", 12000],
    ["1,2 тыс.", 1200],
    ["2 млн", 2_000_000],
    ["1.5万", 15000],
    ["3천", 3000],
    ["1,234 Bewertungen", 1234],
    ["7 mill.", 7_000_000],
    ["1,5 millones", 1_500_000],
  ])("%s → %d", (raw, expected) => {
    expect(parseCount(raw)).toBe(expected);
  });

  it("has no number in text without digits", () => {
    expect(parseCount("no reviews")).toBeUndefined();
    expect(parseCount(undefined)).toBeUndefined();
  });
});

describe("parsePrice: prices in any currency", () => {
  it.each([
    ["R$ 1.299,90", 1299.9],
    ["$27.00", 27],
    ["1 299,90 €", 1299.9],
    ["1\u202f299,90\u00a0€", 1299.9],
    ["₹1,23,456.00", 123456],
    ["¥1,234", 1234],
    ["1.234 €", 1234],
    ["CHF 1'234.50", 1234.5],
    ["£12", 12],
    ["12,5 zł", 12.5],
  ])("%s → %d", (raw, expected) => {
    expect(parsePrice(raw)).toBe(expected);
  });
});

describe("parseRating", () => {
  it.each([
    ["4,6", 4.6],
    ["Rated 4.5 out of 5", 4.5],
  ])("%s → %d", (raw, expected) => {
    expect(parseRating(raw)).toBe(expected);
  });
});
