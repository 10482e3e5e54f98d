import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigFileError, GEOTARGETS_FILE_MAX_BYTES } from "../src/config-file.js";
import { Locations, parseCsv } from "../src/locations.js";
import { uule } from "../src/uule.js";
import { GEOTARGETS_DIR, geotargetsAvailable } from "./fixtures-dir.js";

describe("parseCsv", () => {
  test("reads quoted fields with commas, doubled quotes and line breaks inside", () => {
    const text = 'Id,Name\r\n"1","Chaoyang, Liaoning"\r\n"2","Say ""hi"""\n3,"two\nlines"\n';
    expect(parseCsv(text)).toEqual([
      ["Id", "Name"],
      ["1", "Chaoyang, Liaoning"],
      ["2", 'Say "hi"'],
      ["3", "two\nlines"],
    ]);
  });

  test("keeps empty fields, skips blank lines, drops a byte-order mark, reads a last line without a line end", () => {
    expect(parseCsv('\ufeffa,b,c\n\n"",,x\ny,"",')).toEqual([
      ["a", "b", "c"],
      ["", "", "x"],
      ["y", "", ""],
    ]);
  });
});

describe("Locations without data", () => {
  const none = Locations.empty();

  test("cannot say whether a name is known", () => {
    expect(none.isKnown("Austin,Texas,United States")).toBeUndefined();
  });

  test("reads the country from the last segment, for supported countries only", () => {
    expect(none.countryOf("Austin, Texas, United States")).toBe("us");
    expect(none.countryOf("Leeds,England,United Kingdom")).toBe("gb");
    expect(none.countryOf("Kabul,Kabul,Afghanistan")).toBeUndefined();
  });

  test("encodes the name with its commas tidied", () => {
    expect(none.uuleFor("Austin, Texas, United States")).toBe(uule("Austin,Texas,United States"));
    expect(none.search("Aus", 5)).toEqual([]);
  });
});

describe("Locations from rows", () => {
  const rows = Locations.fromRows([
    { name: "Chaoyang, Liaoning", canonical_name: "Chaoyang, Liaoning,Liaoning,China", country_code: "CN", target_type: "City" },
    { name: "Paris", canonical_name: "Paris,Ile-de-France,France", country_code: "FR", target_type: "City" },
  ]);

  test("finds a name whose own segment holds a comma and a space, and encodes the list's spelling", () => {
    expect(rows.isKnown("chaoyang, liaoning,liaoning,china")).toBe(true);
    expect(rows.uuleFor("chaoyang,liaoning,liaoning,china")).toBe(uule("Chaoyang, Liaoning,Liaoning,China"));
  });

  test("answers undefined for a known row of a country jobs may not name", () => {
    expect(rows.countryOf("Chaoyang, Liaoning,Liaoning,China")).toBeUndefined();
    expect(rows.countryOf("Paris,Ile-de-France,France")).toBe("fr");
  });
});

describe("Locations from Google's official file", () => {
  let dir = "";
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "geotargets-"));
    writeFileSync(
      join(dir, "geotargets-2026-08-12.csv"),
      [
        "Criteria ID,Name,Canonical Name,Parent ID,Country Code,Target Type,Status",
        '2840,United States,United States,,US,Country,Active',
        '21176,Texas,"Texas,United States",2840,US,State,Active',
        '1026201,Austin,"Austin,Texas,United States",21176,US,City,Active',
        '9028379,78701,"78701,Texas,United States",21176,US,Postal Code,Active',
      ].join("\r\n"),
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test("reads its Canonical Name and Target Type columns", () => {
    const l = Locations.fromDirectory(dir);
    expect(l.size).toBe(4);
    expect(l.find("78701, Texas, United States")).toMatchObject({ target_type: "Postal Code", country_code: "US" });
    expect(l.search("aus", 1)).toEqual([
      { name: "Austin", canonical_name: "Austin,Texas,United States", country_code: "US", target_type: "City" },
    ]);
  });

  test("its methods can be passed around unbound", () => {
    const { countryOf, isKnown } = Locations.fromDirectory(dir);
    expect(countryOf("Austin,Texas,United States")).toBe("us");
    expect(isKnown("Dallas,Texas,United States")).toBe(false);
  });

  test("a folder without any geotargets file is refused at load", () => {
    const empty = mkdtempSync(join(tmpdir(), "geotargets-empty-"));
    expect(() => Locations.fromDirectory(empty)).toThrow(/no geotargets CSV files/);
    rmSync(empty, { recursive: true, force: true });
  });

  test("a FIFO, a file without the expected columns or a missing folder is one ConfigFileError naming GEOTARGETS_DIR", () => {
    const bad = mkdtempSync(join(tmpdir(), "geotargets-bad-"));
    try {
      execFileSync("mkfifo", [join(bad, "cities.csv")]);
      expect(() => Locations.fromDirectory(bad)).toThrow(new ConfigFileError(`GEOTARGETS_DIR: ${join(bad, "cities.csv")}: not a regular file`));
      rmSync(join(bad, "cities.csv"));
      writeFileSync(join(bad, "states.csv"), "Id,Label\n1,Texas\n");
      expect(() => Locations.fromDirectory(bad)).toThrow(
        new ConfigFileError(`GEOTARGETS_DIR: ${join(bad, "states.csv")}: expected columns Name, Canonical (Name), Country Code`),
      );
      expect(() => Locations.fromDirectory(join(bad, "nope"))).toThrow(new ConfigFileError(`GEOTARGETS_DIR: ${join(bad, "nope")}: cannot list (ENOENT)`));
    } finally {
      rmSync(bad, { recursive: true, force: true });
    }
  });
});

const describeIfData = geotargetsAvailable ? describe : describe.skip;
if (!geotargetsAvailable) console.warn(`locations: geotargets not found at ${GEOTARGETS_DIR}; set SERP_GEOTARGETS_DIR. Skipping.`);

describeIfData("Locations on the geotargets data", () => {
  let locations: Locations;
  let loadMs = 0;
  beforeAll(() => {
    // CPU time, not wall time: the pass is as quick on a machine other test files keep busy.
    const started = process.cpuUsage();
    locations = Locations.fromDirectory(GEOTARGETS_DIR);
    const { user, system } = process.cpuUsage(started);
    loadMs = (user + system) / 1_000;
  });

  test("each of its files fits the configuration file bound with room to spare (the largest at most a quarter of it)", () => {
    const sizes = readdirSync(GEOTARGETS_DIR).filter((f) => f.endsWith(".csv")).map((f) => statSync(join(GEOTARGETS_DIR, f)).size);
    expect(Math.max(...sizes)).toBeLessThan(GEOTARGETS_FILE_MAX_BYTES / 4);
  });

  test("loads the ~50k rows in one quick pass", () => {
    expect(locations.size).toBeGreaterThan(45_000);
    expect(loadMs).toBeLessThan(1_500);
  });

  test("Austin,Texas,United States is a known US city, with or without spaces after commas", () => {
    expect(locations.isKnown("Austin,Texas,United States")).toBe(true);
    expect(locations.isKnown("Austin, Texas, United States")).toBe(true);
    expect(locations.countryOf("Austin,Texas,United States")).toBe("us");
    expect(locations.find("austin, texas, united states")).toEqual({
      name: "Austin",
      canonical_name: "Austin,Texas,United States",
      country_code: "US",
      target_type: "City",
    });
    expect(locations.uuleFor("Austin, Texas, United States")).toBe("w+CAIQICIaQXVzdGluLFRleGFzLFVuaXRlZCBTdGF0ZXM");
  });

  test("an unknown name is not known, and its country still comes from the last segment", () => {
    expect(locations.isKnown("Nowhereville,Texas,United States")).toBe(false);
    expect(locations.countryOf("Nowhereville,Texas,United States")).toBe("us");
    expect(locations.countryOf("Nowhereville,Atlantis")).toBeUndefined();
  });

  test("maps rows through their country code: United Kingdom → gb, Czechia → cz, Afghanistan → none", () => {
    expect(locations.countryOf("Devon,England,United Kingdom")).toBe("gb");
    expect(locations.countryOf("Czechia")).toBe("cz");
    expect(locations.countryOf("Kabul,Kabul,Afghanistan")).toBeUndefined();
  });

  test("prefix search returns the reference API's row shape, countries and states before cities", () => {
    const austin = locations.search("Austin,T", 5);
    expect(austin).toContainEqual({
      name: "Austin",
      canonical_name: "Austin,Texas,United States",
      country_code: "US",
      target_type: "City",
    });
    expect(austin.every((r) => r.canonical_name.toLowerCase().startsWith("austin,t"))).toBe(true);

    const united = locations.search("united", 3);
    expect(united.map((r) => r.target_type)).toEqual(["Country", "Country", "Country"]);
    expect(united.map((r) => r.canonical_name)).toContain("United Kingdom");

    expect(locations.search("New York", 3).map((r) => r.canonical_name)).toEqual([
      "New York,United States",
      "New York,New York,United States",
      "New York County,New York,United States",
    ]);
    expect(locations.search("Texas", 1)[0]).toMatchObject({ canonical_name: "Texas,United States", target_type: "State" });
    expect(locations.search("zzzzqq", 5)).toEqual([]);
    expect(locations.search("a", 10)).toHaveLength(10);
  });
});
