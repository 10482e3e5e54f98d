/**
 * A configuration file is read like a setting is checked: only a regular file, never blocking on
 * a FIFO, within its size bound, as UTF-8; each refusal is one line naming the setting and the file.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, truncateSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigFileError, readConfigFile } from "../src/config-file.js";

const rule = { setting: "SOME_FILE", maxBytes: 1024 };
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "config-file-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function refusal(file: string): string {
  try {
    readConfigFile(file, rule);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigFileError);
    const message = (error as Error).message;
    expect(message).not.toMatch(/\n/);
    expect(message.startsWith(`SOME_FILE: ${file}: `)).toBe(true);
    return message;
  }
  throw new Error(`${file} was read`);
}

test("reads a regular file within the bound as text", () => {
  const file = join(dir, "ok.json");
  writeFileSync(file, '{"a":"é"}');
  expect(readConfigFile(file, rule)).toBe('{"a":"é"}');
});

test("refuses a FIFO at once instead of waiting for a writer", () => {
  const file = join(dir, "fifo");
  execFileSync("mkfifo", [file]);
  const started = Date.now();
  expect(refusal(file)).toMatch(/not a regular file$/);
  expect(Date.now() - started).toBeLessThan(1_000);
});

test("refuses a directory and a missing file, naming why", () => {
  const sub = join(dir, "sub");
  mkdirSync(sub);
  expect(refusal(sub)).toMatch(/not a regular file$/);
  expect(refusal(join(dir, "missing"))).toMatch(/cannot open \(ENOENT\)$/);
});

test("refuses a file over the bound without reading it (a sparse 150 MB file)", () => {
  const file = join(dir, "big");
  writeFileSync(file, "");
  truncateSync(file, 150 * 1024 * 1024);
  expect(refusal(file)).toMatch(/157286400 bytes, more than the 1024 allowed$/);
  writeFileSync(file, "x".repeat(1025));
  expect(refusal(file)).toMatch(/1025 bytes, more than the 1024 allowed$/);
  writeFileSync(file, "x".repeat(1024));
  expect(readConfigFile(file, rule)).toHaveLength(1024);
});

test("refuses bytes that are not UTF-8", () => {
  const file = join(dir, "latin1");
  writeFileSync(file, Buffer.from([0x7b, 0xe9, 0x7d]));
  expect(refusal(file)).toMatch(/not UTF-8 text$/);
});
