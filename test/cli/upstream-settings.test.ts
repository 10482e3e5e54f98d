/**
 * The CLI's canary follows the running stack's upstream: without UPSTREAM_* variables of its own it
 * takes the settings a running `npm start` recorded (scripts/run.mjs), as its Redis does.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chooseUpstreamSettings } from "../../apps/cli/src/upstream-settings.js";

let cwd: string;
const record = (pid: number, env: Record<string, string>) => {
  mkdirSync(join(cwd, ".redis-data"), { recursive: true });
  writeFileSync(join(cwd, ".redis-data", "upstream-env.json"), JSON.stringify({ pid, env }));
};

beforeEach(() => {
  cwd = mkdtempSync(join(tmpdir(), "cli-upstream-"));
});
afterEach(() => rmSync(cwd, { recursive: true, force: true }));

test("a running npm start's recorded settings are used when this environment names no upstream", () => {
  record(process.pid, { UPSTREAM_BASE_URL: "http://127.0.0.1:4010", CANARY_PRODUCT_ID: "123" });
  const chosen = chooseUpstreamSettings({ PATH: "/bin" }, cwd);
  expect(chosen.env).toMatchObject({ UPSTREAM_BASE_URL: "http://127.0.0.1:4010", CANARY_PRODUCT_ID: "123", PATH: "/bin" });
  expect(chosen.note).toContain("running npm start's (UPSTREAM_BASE_URL http://127.0.0.1:4010)");
});

test("this environment's UPSTREAM_* settings win over the recording", () => {
  record(process.pid, { UPSTREAM_BASE_URL: "http://127.0.0.1:4010" });
  const chosen = chooseUpstreamSettings({ UPSTREAM_BASE_URL: "http://127.0.0.1:5000" }, cwd);
  expect(chosen.env.UPSTREAM_BASE_URL).toBe("http://127.0.0.1:5000");
  expect(chosen.note).toContain("this environment's");
});

test("a recording whose npm start has ended, or none, leaves the defaults", () => {
  const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).stdout.toString();
  record(Number(gone), { UPSTREAM_BASE_URL: "http://127.0.0.1:4010" });
  expect(chooseUpstreamSettings({}, cwd).env.UPSTREAM_BASE_URL).toBeUndefined();
  expect(chooseUpstreamSettings({}, cwd).note).toContain("is not running");
  rmSync(join(cwd, ".redis-data"), { recursive: true });
  expect(chooseUpstreamSettings({}, cwd).note).toContain("names no running npm start's");
});
