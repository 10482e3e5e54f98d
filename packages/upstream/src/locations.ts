/**
 * Location names (DECISIONS.md, Locations): the country of a `location`, whether the name is one
 * the upstream knows, a prefix look-up for a locations endpoint, and the `uule` to send.
 *
 * Without data every name is accepted and its country is read from its last segment. With the
 * geotargets CSVs loaded, names are checked against the list and the row's country code decides
 * the country. A folder may hold the derived per-type files (shared/data/geotargets:
 * Id,Name,Canonical,Region,Country,Country Code) and/or Google's official `geotargets-<date>.csv`
 * (Criteria ID,Name,Canonical Name,Parent ID,Country Code,Target Type,Status).
 */
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import {
  countryOfLocationName,
  isSupportedCountry,
  normalizeCountry,
  type Country,
} from "@serp/shared";
import { ConfigFileError, GEOTARGETS_FILE_MAX_BYTES, readConfigFile } from "./config-file.js";
import { normalizeLocationName, uule } from "./uule.js";

const SETTING = "GEOTARGETS_DIR";

/** One row of the look-up endpoint, shaped like the reference API's locations list. */
export interface LocationRow {
  name: string;
  canonical_name: string;
  /** Upper-case ISO code, as the reference API writes it (`US`). */
  country_code: string;
  target_type: string;
}

/** The files of a geotargets folder, most general first: a canonical name met twice keeps the first. */
const FILES: readonly { file: string; type: string }[] = [
  { file: "countries.csv", type: "Country" },
  { file: "states.csv", type: "State" },
  { file: "regions.csv", type: "Region" },
  { file: "counties.csv", type: "County" },
  { file: "cities.csv", type: "City" },
];
const TYPE_RANK = new Map(FILES.map((f, i) => [f.type, i]));

interface Entry {
  key: string;
  row: LocationRow;
}

const keyOf = (name: string) => normalizeLocationName(name).toLowerCase();

export class Locations {
  private readonly byKey = new Map<string, LocationRow>();
  /** Entries sorted by key, for prefix search by binary search. */
  private readonly sorted: Entry[];
  /** Country names in the data (`united states` → `us`), for names the list does not hold. */
  private readonly countryNames = new Map<string, string>();

  private constructor(
    rows: LocationRow[],
    readonly loaded: boolean,
  ) {
    // Bound, so callers may pass the methods around (`withDefaults(req, locations.countryOf)`).
    this.countryOf = this.countryOf.bind(this);
    this.isKnown = this.isKnown.bind(this);
    this.uuleFor = this.uuleFor.bind(this);
    this.search = this.search.bind(this);
    for (const row of rows) {
      const key = keyOf(row.canonical_name);
      if (!this.byKey.has(key)) this.byKey.set(key, row);
      if (row.target_type === "Country" || !row.canonical_name.includes(",")) {
        const name = row.canonical_name.toLowerCase();
        if (!this.countryNames.has(name)) this.countryNames.set(name, row.country_code.toLowerCase());
      }
    }
    this.sorted = [...this.byKey].map(([key, row]) => ({ key, row }));
    this.sorted.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  /** No data: names are not checked (`isKnown` answers undefined). */
  static empty(): Locations {
    return new Locations([], false);
  }

  /**
   * Loads the CSV files found in `dir` (at least one must exist). One pass per file, each read as a
   * configuration file (config-file.ts); a bad folder or file throws ConfigFileError (the apps exit 78).
   */
  static fromDirectory(dir: string): Locations {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch (error) {
      throw new ConfigFileError(`${SETTING}: ${dir}: cannot list (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
    }
    const official = names
      .filter((f) => /^geotargets.*\.csv$/i.test(f))
      .sort()
      .map((file) => ({ file, type: "" }));
    const files = [...FILES, ...official].filter(({ file }) => existsSync(join(dir, file)));
    if (!files.length) throw new ConfigFileError(`${SETTING}: no geotargets CSV files (${FILES.map((f) => f.file).join(", ")}, geotargets-*.csv) in ${dir}`);
    const rows: LocationRow[] = [];
    for (const { file, type } of files) {
      const path = join(dir, file);
      const text = readConfigFile(path, { setting: SETTING, maxBytes: GEOTARGETS_FILE_MAX_BYTES });
      for (const row of rowsOf(text, type, path)) rows.push(row);
    }
    return new Locations(rows, true);
  }

  static fromRows(rows: LocationRow[]): Locations {
    return new Locations(rows, true);
  }

  get size(): number {
    return this.byKey.size;
  }

  /** The row for a canonical name, spaces after commas and letter case ignored. */
  find(name: string): LocationRow | undefined {
    return this.byKey.get(keyOf(name));
  }

  /** True or false with data loaded; undefined when no list is configured (nothing to check against). */
  isKnown(name: string): boolean | undefined {
    return this.loaded ? this.byKey.has(keyOf(name)) : undefined;
  }

  /** The supported country of a location, from its row, else from its last segment; undefined otherwise. */
  countryOf(name: string): Country | undefined {
    const code = this.find(name)?.country_code.toLowerCase() ?? this.countryNames.get(lastSegment(name));
    if (code !== undefined) return isSupportedCountry(code) ? normalizeCountry(code) : undefined;
    return countryOfLocationName(normalizeLocationName(name));
  }

  /** The name to encode: the list's own spelling when known, else the name with commas tidied. */
  canonical(name: string): string {
    return this.find(name)?.canonical_name ?? normalizeLocationName(name);
  }

  uuleFor(name: string): string {
    return uule(this.canonical(name));
  }

  /**
   * Names that start with `prefix` (case and spaces after commas ignored). Rows whose own name is
   * the prefix come first ("New York": the state, then the city, then "New York Mills"), then
   * countries, states, regions, counties, cities, each alphabetical. At most `limit` rows.
   */
  search(prefix: string, limit = 10): LocationRow[] {
    const key = keyOf(prefix);
    if (!key || limit <= 0) return [];
    const matches: LocationRow[] = [];
    // Rank within a bounded window: a one-letter prefix must not sort thousands of rows.
    const window = Math.max(limit * 50, 500);
    for (let i = lowerBound(this.sorted, key); i < this.sorted.length && matches.length < window; i++) {
      const entry = this.sorted[i]!;
      if (!entry.key.startsWith(key)) break;
      matches.push(entry.row);
    }
    const name = key.split(",")[0];
    const rank = (r: LocationRow) => (r.name.toLowerCase() === name ? 0 : 10) + (TYPE_RANK.get(r.target_type) ?? 9);
    return matches.sort((a, b) => rank(a) - rank(b)).slice(0, limit);
  }
}

function lastSegment(name: string): string {
  return (normalizeLocationName(name).split(",").at(-1) ?? "").toLowerCase();
}

function lowerBound(entries: Entry[], key: string): number {
  let lo = 0;
  let hi = entries.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (entries[mid]!.key < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Rows of one file; `type` names the target type of a per-type file, else its Target Type column does. */
function rowsOf(text: string, type: string, path: string): LocationRow[] {
  const records = parseCsv(text);
  const header = records.shift()?.map((h) => h.trim().toLowerCase()) ?? [];
  const name = header.indexOf("name");
  const canonical = Math.max(header.indexOf("canonical"), header.indexOf("canonical name"));
  const cc = header.indexOf("country code");
  const targetType = header.indexOf("target type");
  if (name < 0 || canonical < 0 || cc < 0 || (!type && targetType < 0)) {
    throw new ConfigFileError(`${SETTING}: ${path}: expected columns Name, Canonical (Name), Country Code${type ? "" : ", Target Type"}`);
  }
  const rows: LocationRow[] = [];
  for (const r of records) {
    const canonicalName = r[canonical];
    if (!canonicalName) continue;
    rows.push({
      name: r[name] ?? "",
      canonical_name: canonicalName,
      country_code: (r[cc] ?? "").toUpperCase(),
      target_type: type || (r[targetType] ?? ""),
    });
  }
  return rows;
}

/**
 * RFC 4180 CSV: fields may be quoted; inside quotes `""` is a quote and commas and line breaks
 * are data. CRLF or LF line ends, a leading byte-order mark is dropped, blank lines are skipped.
 */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const endRow = () => {
    row.push(field);
    if (row.length > 1 || row[0] !== "") rows.push(row);
    row = [];
    field = "";
  };
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
      } else {
        // Copy the run up to the next quote in one slice: most of the file is quoted text.
        const next = text.indexOf('"', i);
        const end = next < 0 ? text.length : next;
        field += text.slice(i, end);
        i = end;
        continue;
      }
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(field);
      field = "";
    } else if (c === "\n") endRow();
    else if (c !== "\r") field += c;
    i++;
  }
  if (field !== "" || row.length) endRow();
  return rows;
}
