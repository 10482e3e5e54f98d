/**
 * The configuration files (the profile table, the geotargets CSVs, the CA file) are settings too: a bad one at
 * start is one fatal line naming the setting, the file and the fault, no stack trace, exit 78 (EX_CONFIG,
 * not restarted), before anything connects. A FIFO at the path does not hang the process.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { shippedProfilesFile } from "@serp/upstream";
import { spawnService } from "./support.js";

const dir = mkdtempSync(join(tmpdir(), "config-files-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const fifo = join(dir, "profiles.fifo");
execFileSync("mkfifo", [fifo]);
const big = join(dir, "big.json");
writeFileSync(big, "");
truncateSync(big, 150 * 1024 * 1024);
const crlf = join(dir, "crlf.json");
const table = JSON.parse(readFileSync(shippedProfilesFile(), "utf8"));
table.profiles.desktop.cookie = "CONSENT=YES\r\nX-Injected: 1";
writeFileSync(crlf, JSON.stringify(table));
const geotargets = join(dir, "geotargets");
mkdirSync(geotargets);
execFileSync("mkfifo", [join(geotargets, "cities.csv")]);

// REDIS_URL points at a closed port: the file must be refused before anything connects.
test.concurrent.each([
  ["worker", "a FIFO as the profile table", { UPSTREAM_PROFILES_FILE: fifo }, `UPSTREAM_PROFILES_FILE: ${fifo}: not a regular file`],
  ["worker", "a 150 MB profile table", { UPSTREAM_PROFILES_FILE: big }, `UPSTREAM_PROFILES_FILE: ${big}: 157286400 bytes, more than the 1048576 allowed`],
  [
    "worker",
    "a profile cookie with CR/LF",
    { UPSTREAM_PROFILES_FILE: crlf },
    `UPSTREAM_PROFILES_FILE: ${crlf}: profile table refused: profiles.desktop.cookie: not a valid HTTP header value (control characters such as CR or LF are not allowed)`,
  ],
  ["worker", "a FIFO in the geotargets folder", { GEOTARGETS_DIR: geotargets }, `GEOTARGETS_DIR: ${join(geotargets, "cities.csv")}: not a regular file`],
  ["worker", "a FIFO as the CA file", { UPSTREAM_CA_FILE: fifo }, `UPSTREAM_CA_FILE: ${fifo}: not a regular file`],
  ["api", "a FIFO in the geotargets folder", { GEOTARGETS_DIR: geotargets }, `GEOTARGETS_DIR: ${join(geotargets, "cities.csv")}: not a regular file`],
] as const)("the %s refuses %s: one fatal line, no stack trace, exit 78", async (app, _why, env, message) => {
  const service = spawnService(app, { REDIS_URL: "redis://127.0.0.1:1", ...env });
  try {
    expect(await service.exited).toEqual({ code: 78, signal: null });
    const lines = service.output().trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 60, app, msg: message });
  } finally {
    await service.kill();
  }
}, 120_000);
