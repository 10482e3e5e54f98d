import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Closers } from "../src/closers.js";

const fixture = fileURLToPath(new URL("./shutdown-process.ts", import.meta.url));

/** Starts the fixture, sends `signals` once it is ready, and resolves with its lines and exit code. */
function run(env: Record<string, string>, signals: NodeJS.Signals[]): Promise<{ lines: string[]; code: number | null }> {
  const child = spawn(process.execPath, ["--import", "tsx", fixture], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  child.stdout.on("data", (chunk: Buffer) => {
    const ready = !out.includes("ready");
    out += chunk.toString();
    if (ready && out.includes("ready")) signals.forEach((s, i) => setTimeout(() => child.kill(s), i * 300));
  });
  return new Promise((resolve) => child.on("exit", (code) => resolve({ lines: out.trim().split("\n"), code })));
}

describe("closers", () => {
  test("close in the reverse order of registration, an adopted registry's in its place, and report whether all closed", async () => {
    const closed: string[] = [];
    const outer = new Closers();
    outer.add("a", () => closed.push("a"));
    const inner = new Closers();
    inner.add("b", () => closed.push("b"));
    inner.add("c", () => closed.push("c"));
    outer.adopt(inner);
    outer.add("d", () => closed.push("d"));
    expect(await outer.closeAll(1_000)).toBe(true);
    expect(closed).toEqual(["d", "c", "b", "a"]);
    expect(await inner.closeAll(1_000)).toBe(true);
    expect(closed).toHaveLength(4);
  });

  test("a closer that fails or outlives the deadline is reported, and the others still close", async () => {
    const errors: string[] = [];
    const closers = new Closers();
    let last = false;
    closers.add("last", () => (last = true));
    closers.add("stuck", () => new Promise(() => undefined));
    closers.add("broken", () => Promise.reject(new Error("boom")));
    expect(await closers.closeAll(200, (name) => errors.push(name))).toBe(false);
    expect(errors).toEqual(["broken", "stuck"]);
    expect(last).toBe(true);
  });
});

describe("onShutdown", () => {
  test.each(["SIGTERM", "SIGINT"] as const)("%s runs begin, the closers in order, then end, and exits 0", async (signal) => {
    const { lines, code } = await run({}, [signal]);
    expect(lines).toEqual(["ready", `begin ${signal}`, "close last opened", "close inner b", "close inner a", "close first opened", "end true"]);
    expect(code).toBe(0);
  }, 20_000);

  test("a closer that fails makes the exit code 1", async () => {
    const { lines, code } = await run({ FAIL: "1" }, ["SIGTERM"]);
    expect(lines).toContain("failed broken: boom");
    expect(lines.at(-1)).toBe("end false");
    expect(code).toBe(1);
  }, 20_000);

  test("a begin that never ends: the process exits 1 at exitAfterMs all the same", async () => {
    const started = Date.now();
    const { lines, code } = await run({ HANG: "1" }, ["SIGTERM"]);
    expect(lines).toEqual(["ready", "begin SIGTERM", "late 1000"]);
    expect(code).toBe(1);
    expect(Date.now() - started).toBeLessThan(8_000);
  }, 20_000);

  test("a second signal while stopping ends the process at once with exit 1, even without again", async () => {
    const { lines, code } = await run({ SLOW: "1", NO_AGAIN: "1" }, ["SIGTERM", "SIGTERM"]);
    expect(lines).toEqual(["ready", "begin SIGTERM"]);
    expect(code).toBe(1);
  }, 20_000);

  test("a signal while stopping goes to again", async () => {
    const { lines, code } = await run({ SLOW: "1" }, ["SIGTERM", "SIGINT"]);
    expect(lines).toEqual(["ready", "begin SIGTERM", "again SIGINT"]);
    expect(code).toBe(3);
  }, 20_000);
});
