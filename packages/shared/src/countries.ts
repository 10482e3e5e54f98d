/** Countries a job may name (SPEC §2.2). `uk` is accepted and stored as `gb`. */
export const COUNTRY_CODES = [
  "us", "gb", "uk", "ca", "au", "de", "fr", "nl", "it", "es", "pt", "be", "at", "ch", "se", "no",
  "dk", "fi", "ie", "pl", "cz", "il", "ae", "in", "jp", "kr", "sg", "mx", "br", "nz", "za", "tr",
] as const;
export type CountryInput = (typeof COUNTRY_CODES)[number];
export type Country = Exclude<CountryInput, "uk">;

export function normalizeCountry(code: CountryInput): Country {
  return code === "uk" ? "gb" : code;
}

export function isSupportedCountry(code: string): code is CountryInput {
  return (COUNTRY_CODES as readonly string[]).includes(code);
}

/**
 * English names of the supported countries as the upstream's location list writes them (the last
 * segment of a canonical location name), so a location's country is known without any data file.
 */
export const COUNTRY_NAMES: Readonly<Record<Country, string>> = {
  us: "United States", gb: "United Kingdom", ca: "Canada", au: "Australia", de: "Germany",
  fr: "France", nl: "Netherlands", it: "Italy", es: "Spain", pt: "Portugal", be: "Belgium",
  at: "Austria", ch: "Switzerland", se: "Sweden", no: "Norway", dk: "Denmark", fi: "Finland",
  ie: "Ireland", pl: "Poland", cz: "Czechia", il: "Israel", ae: "United Arab Emirates", in: "India",
  jp: "Japan", kr: "South Korea", sg: "Singapore", mx: "Mexico", br: "Brazil", nz: "New Zealand",
  za: "South Africa", tr: "Turkey",
};

const BY_NAME = new Map<string, Country>(
  Object.entries(COUNTRY_NAMES).map(([code, name]) => [name.toLowerCase(), code as Country]),
);
// Other spellings found in location names.
for (const [alias, code] of [
  ["czech republic", "cz"], ["turkiye", "tr"], ["türkiye", "tr"], ["usa", "us"], ["uk", "gb"],
  ["great britain", "gb"], ["republic of korea", "kr"], ["korea", "kr"],
] as const) BY_NAME.set(alias, code);

/** The supported country whose name ends a canonical location name, if any. */
export function countryOfLocationName(location: string): Country | undefined {
  const last = location.split(",").at(-1)?.trim().toLowerCase();
  return last ? BY_NAME.get(last) : undefined;
}
