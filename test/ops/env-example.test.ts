/**
 * .env.example lists every setting the apps read, each with a comment. The list is derived from the
 * code (test/support/settings-read.ts: the env schemas' keys and direct `process.env.NAME` reads), so
 * a setting someone adds without documenting it fails here.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadEnv as loadApiEnv } from "@serp/api/env";
import { loadEnv as loadWorkerEnv } from "../../apps/worker/src/env.js";
import { settingsReadByCode } from "../support/settings-read.js";
import { ROOT, spawnService } from "./support.js";

/** Each documented setting: `NAME=value` or `# NAME=value`, with the comment lines just above it. */
function documented(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let comment: string[] = [];
  for (const line of text.split("\n")) {
    const setting = line.match(/^#?\s?([A-Z][A-Z0-9_]+)=/);
    if (setting) {
      out.set(setting[1]!, comment.join(" "));
      comment = [];
      continue;
    }
    if (line.startsWith("#")) comment.push(line.replace(/^#\s?/, ""));
    else comment = [];
  }
  return out;
}

const example = readFileSync(join(ROOT, ".env.example"), "utf8");
const listed = documented(example);
const read = settingsReadByCode();

describe(".env.example", () => {
  test("the source scan finds the settings the env schemas are known to parse (the scan itself works)", () => {
    for (const key of [...Object.keys(loadApiEnv({})), ...Object.keys(loadWorkerEnv({}))]) expect(read.has(key)).toBe(true);
    for (const key of ["UPSTREAM_MAX_TRIES", "UPSTREAM_MAX_BODY_BYTES", "ADMIN_TOKEN", "WORKER_SHUTDOWN_TIMEOUT_MS", "GEOTARGETS_DIR"]) {
      expect(read.has(key)).toBe(true);
    }
  });

  test("lists every setting the apps read", () => {
    const missing = [...read].filter(([name]) => !listed.has(name)).map(([name, file]) => `${name} (read in ${file})`);
    expect(missing).toEqual([]);
  });

  test("explains each setting in a comment", () => {
    const bare = [...listed].filter(([, comment]) => comment.trim().length < 10).map(([name]) => name);
    expect(bare).toEqual([]);
  });

  test("lists only settings something reads (no stale names)", () => {
    const stale = [...listed.keys()].filter((name) => !read.has(name));
    expect(stale).toEqual([]);
  });

  test("copied as is to .env, it is a valid configuration for the API and the worker", () => {
    const active = Object.fromEntries(
      example.split("\n").flatMap((line) => {
        const m = line.match(/^([A-Z][A-Z0-9_]+)=(.*)$/);
        return m ? [[m[1]!, m[2]!]] : [];
      }),
    );
    expect(() => loadApiEnv(active)).not.toThrow();
    expect(() => loadWorkerEnv(active)).not.toThrow();
  });
});

describe("an invalid setting at start", () => {
  // REDIS_URL points at a closed port: the configuration must be refused before anything connects.
  test.each([
    ["ADMIN_TOKEN shorter than 16 characters", { ADMIN_TOKEN: "short" }, "Invalid API configuration: ADMIN_TOKEN must be at least 16 characters"],
    ["a PORT that is not a number", { PORT: "abc" }, "Invalid API configuration: PORT: Invalid input: expected number, received NaN"],
  ])("%s stops the API with one fatal line naming the rule, no stack trace, exit code 78 (not restarted)", async (_why, env, message) => {
    const api = spawnService("api", { REDIS_URL: "redis://127.0.0.1:1", ...env });
    try {
      expect(await api.exited).toEqual({ code: 78, signal: null });
      const lines = api.output().trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ level: 60, app: "api", msg: message });
      expect(api.output()).not.toMatch(/^\s+at /m);
    } finally {
      await api.kill();
    }
  }, 30_000);
});

describe("an invalid worker setting at start", () => {
  test.each([
    ["a WORKER_CONCURRENCY that is not a number", { WORKER_CONCURRENCY: "many" }, /^Invalid worker configuration: WORKER_CONCURRENCY: /],
    ["a queue that does not exist", { WORKER_QUEUES: "live,slow" }, /^Invalid worker configuration: WORKER_QUEUES/],
    ["a WORKER_SHUTDOWN_TIMEOUT_MS below its minimum", { WORKER_SHUTDOWN_TIMEOUT_MS: "-5" }, /^Invalid worker configuration: WORKER_SHUTDOWN_TIMEOUT_MS/],
  ])("%s stops the worker with one fatal line, no stack trace, exit code 78", async (_why, env, message) => {
    const worker = spawnService("worker", { REDIS_URL: "redis://127.0.0.1:1", ...env });
    try {
      expect(await worker.exited).toEqual({ code: 78, signal: null });
      const lines = worker.output().trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ level: 60, app: "worker", msg: expect.stringMatching(message) });
      expect(worker.output()).not.toMatch(/^\s+at /m);
    } finally {
      await worker.kill();
    }
  }, 30_000);
});
