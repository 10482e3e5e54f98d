/**
 * The profile table as data: the shipped file validates and orders its rungs cheapest first, the
 * schema refuses what would get a profile refused by the upstream (naming the field), and a
 * watched file is re-read without a restart, keeping the last good table when a new one is broken.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigFileError } from "../src/config-file.js";
import { profileSource, shippedProfilesFile } from "../src/profile-source.js";
import { allProfiles, claimedFamily, parseProfileTable, profilesFor, profileTable, ProfileTableError, PROFILE_SETS } from "../src/profiles.js";

const shippedText = readFileSync(shippedProfilesFile(), "utf8");
const shipped = parseProfileTable(shippedText);
const names = (ps: readonly { name: string }[]) => ps.map((p) => p.name);

function problems(mutate: (data: any) => void): string[] {
  const data = JSON.parse(shippedText);
  mutate(data);
  try {
    profileTable(data);
  } catch (error) {
    if (error instanceof ProfileTableError) return error.problems;
    throw error;
  }
  return [];
}

describe("the shipped table (profiles.json)", () => {
  test("validates, and lists every kind", () => {
    expect(shipped.version).toBe("2026-11");
    for (const kind of PROFILE_SETS) expect(shipped.kinds[kind].length).toBeGreaterThan(0);
  });

  test("per kind, plain HTTP rungs come before impersonating ones (cheapest first)", () => {
    for (const kind of PROFILE_SETS) {
      const transports = shipped.kinds[kind].map((p) => p.transport);
      const firstImpersonating = transports.indexOf("impersonate");
      expect(firstImpersonating).toBeGreaterThanOrEqual(0);
      // Products: the panel then the legacy pages, each climbing http → impersonate → browser.
      expect(transports.slice(0, firstImpersonating).every((t) => t === "http")).toBe(true);
    }
  });

  test("a real browser is the last rung of every kind (it costs most; breakers make it first when the others are dead)", () => {
    for (const kind of PROFILE_SETS) {
      const transports = shipped.kinds[kind].map((p) => p.transport);
      expect(transports.at(-1)).toBe("browser");
      expect(transports.indexOf("browser")).toBeGreaterThan(transports.indexOf("impersonate"));
    }
  });

  test("web search asks the feature-phone page over a Chrome ClientHello (SearXNG's recipe since 2026-09-02) before the browser", () => {
    const wml = shipped.kinds["web-search"].at(-2)!;
    expect(wml).toMatchObject({ name: "wml-chrome", transport: "impersonate", form: "wml" });
    expect(wml.browser).toMatch(/^chrome/);
    expect(names(profilesFor(shipped, "web-search", { device: "mobile" }))).toEqual(["mobile", "mobile-chrome", "wml-chrome", "mobile-browser"]);
  });

  test("no impersonating profile claims another browser than the one it impersonates", () => {
    for (const p of allProfiles(shipped)) {
      if (p.transport !== "impersonate" || !p.userAgent) continue;
      expect(["none", p.browser!.startsWith("firefox") ? "firefox" : "chrome"]).toContain(claimedFamily(p.userAgent));
    }
  });

  test("the agents the reference reports dead are not shipped (Lynx and old IE since 2025-09)", () => {
    for (const p of allProfiles(shipped)) expect(p.userAgent ?? "").not.toMatch(/Lynx|MSIE|Trident/);
  });

  test("every search and product profile answers the consent wall with a cookie", () => {
    for (const p of allProfiles(shipped)) if (!p.form.startsWith("complete")) expect(p.cookie).toMatch(/CONSENT=/);
  });
});

describe("the schema", () => {
  test("a kind naming a profile that does not exist", () => {
    expect(problems((d) => d.kinds["web-news"].push("nope"))).toEqual(['kinds.web-news.4: no profile named "nope"']);
  });

  test("an impersonating profile whose agent claims another browser", () => {
    const found = problems((d) => (d.profiles["desktop-chrome"].userAgent = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(/^profiles\.desktop-chrome\.userAgent: claims firefox but the profile impersonates chrome151/);
  });

  test("missing or stray fields, unknown transports and forms, a kind left out", () => {
    expect(problems((d) => delete d.profiles.desktop.userAgent)).toEqual(["profiles.desktop.userAgent: an http profile needs a userAgent"]);
    expect(problems((d) => delete d.profiles["wml-chrome"].browser)).toEqual([
      "profiles.wml-chrome.browser: an impersonate profile names the browser it impersonates",
    ]);
    expect(problems((d) => (d.profiles.desktop.transport = "carrier-pigeon"))[0]).toMatch(/^profiles\.desktop\.transport: /);
    expect(problems((d) => (d.profiles.desktop.form = "gopher"))[0]).toMatch(/^profiles\.desktop\.form: /);
    expect(problems((d) => (d.profiles.desktop.colour = "red"))[0]).toMatch(/^profiles\.desktop: .*colour/);
    expect(problems((d) => delete d.kinds["web-local"])[0]).toMatch(/^kinds\.web-local: /);
    expect(problems((d) => (d.profiles["desktop-chrome"].browser = "netscape4"))[0]).toMatch(/^profiles\.desktop-chrome\.browser: /);
  });

  test("header, cookie and user-agent values with CR, LF or other control characters, as HTTP refuses them", () => {
    const invalid = "not a valid HTTP header value (control characters such as CR or LF are not allowed)";
    expect(problems((d) => (d.profiles.desktop.headers = { accept: "text/html\r\nx-injected: 1" }))).toEqual([`profiles.desktop.headers.accept: ${invalid}`]);
    expect(problems((d) => (d.profiles.desktop.cookie = "CONSENT=YES\nSet-Cookie: x"))).toEqual([`profiles.desktop.cookie: ${invalid}`]);
    expect(problems((d) => (d.profiles.desktop.userAgent = "Mozilla/5.0\u0000"))).toEqual([`profiles.desktop.userAgent: ${invalid}`]);
    expect(problems((d) => (d.profiles.desktop.headers = { "x-tab": "a\tb", "accept-language": "de-CH, fr;q=0.9" }))).toEqual([]);
  });

  test("a file that is not JSON", () => {
    expect(() => parseProfileTable("{ not json")).toThrow(/^profile table refused: \(file\): not JSON/);
  });
});

describe("a watched table file", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "profiles-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const until = async (check: () => boolean, ms = 10_000) => {
    const end = Date.now() + ms;
    while (!check()) {
      if (Date.now() > end) throw new Error("condition not met in time");
      await new Promise((r) => setTimeout(r, 25));
    }
  };

  test("is re-read when it changes; a broken version is refused with the field named, and the last good table stays", async () => {
    const file = join(dir, "profiles.json");
    writeFileSync(file, shippedText);
    const lines: { level: string; msg: string }[] = [];
    const source = profileSource({ file, watchIntervalMs: 50, log: (level, msg) => lines.push({ level, msg }) });
    try {
      expect(source.current().version).toBe("2026-11");

      const next = JSON.parse(shippedText);
      next.version = "2026-12";
      next.kinds["web-search"] = ["wml-chrome"];
      writeFileSync(file, JSON.stringify(next));
      await until(() => source.current().version === "2026-12");
      expect(names(source.current().kinds["web-search"])).toEqual(["wml-chrome"]);

      next.version = "2027-01";
      next.kinds["web-search"] = ["desktop", "ghost"];
      writeFileSync(file, JSON.stringify(next, null, 2));
      await until(() => lines.some((l) => l.level === "error"));
      expect(source.current().version).toBe("2026-12");
      expect(lines.find((l) => l.level === "error")!.msg).toBe(
        'profile table refused, keeping version 2026-12: kinds.web-search.1: no profile named "ghost"',
      );
    } finally {
      source.close();
    }
  }, 25_000);

  test("a broken file at start is an error: a deployment never runs without a table", () => {
    const file = join(dir, "bad.json");
    writeFileSync(file, JSON.stringify({ version: "x", profiles: {}, kinds: {} }));
    expect(() => profileSource({ file })).toThrow(new RegExp(`^UPSTREAM_PROFILES_FILE: ${file}: profile table refused: kinds\\.`));
    expect(() => profileSource({ file })).toThrow(ConfigFileError);
  });

  test("a FIFO, a 150 MB file or a directory at the path is refused at start, at once, naming the setting", () => {
    const fifo = join(dir, "fifo.json");
    execFileSync("mkfifo", [fifo]);
    expect(() => profileSource({ file: fifo })).toThrow(`UPSTREAM_PROFILES_FILE: ${fifo}: not a regular file`);
    const big = join(dir, "big.json");
    writeFileSync(big, "");
    truncateSync(big, 150 * 1024 * 1024);
    expect(() => profileSource({ file: big })).toThrow(`UPSTREAM_PROFILES_FILE: ${big}: 157286400 bytes, more than the 1048576 allowed`);
    expect(() => profileSource({ file: dir })).toThrow(`UPSTREAM_PROFILES_FILE: ${dir}: not a regular file`);
  });

  test("a FIFO or an oversized file swapped in at reload is refused with one line, and the last good table stays", async () => {
    const file = join(dir, "profiles.json");
    writeFileSync(file, shippedText);
    const lines: { level: string; msg: string }[] = [];
    const source = profileSource({ file, watchIntervalMs: 50, log: (level, msg) => lines.push({ level, msg }) });
    try {
      rmSync(file);
      execFileSync("mkfifo", [file]);
      await until(() => lines.some((l) => l.level === "error"));
      expect(lines.filter((l) => l.level === "error").map((l) => l.msg)).toEqual([
        `profile table refused, keeping version 2026-11: UPSTREAM_PROFILES_FILE: ${file}: not a regular file`,
      ]);
      rmSync(file);
      writeFileSync(file, shippedText + " ".repeat(1 << 20));
      await until(() => lines.filter((l) => l.level === "error").length === 2);
      expect(lines.at(-1)!.msg).toMatch(/more than the 1048576 allowed$/);
      expect(source.current().version).toBe("2026-11");
    } finally {
      source.close();
    }
  }, 25_000);
});
