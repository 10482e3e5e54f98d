/**
 * LogOutput, in a real process logging through pino to a real pipe: a reader that is gone or that
 * stalls never keeps the process from stopping on SIGTERM; a reader that keeps up gets every line.
 * (pino's own stream, in the same place, retried the dead pipe forever at exit.)
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const fixture = fileURLToPath(new URL("./log-output-process.ts", import.meta.url));
/**
 * "At once": within its own deadlines (1 s of drain, 1 s for what waits at exit) and the start of a
 * Node process on a machine other test files keep busy, far before the guard's SIGKILL at 15 s (what
 * a process that retried its dead pipe forever would meet).
 */
const AT_ONCE_MS = 10_000;

interface Run {
  /** Everything read from its standard output until the reader went or stalled. */
  out: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; afterTermMs: number }>;
}

/** Starts the fixture; once it is ready, does `toReader` to its output's reader, then sends SIGTERM. */
function run(lines: number, toReader: "close" | "pause" | "read"): Run {
  const child = spawn(process.execPath, ["--import", "tsx", fixture], { env: { ...process.env, LINES: String(lines) }, stdio: ["ignore", "pipe", "inherit"] });
  let out = "";
  let termAt = 0;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; afterTermMs: number }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal, afterTermMs: Date.now() - termAt })),
  );
  const onData = (chunk: Buffer) => {
    const wasReady = out.includes('"msg":"ready"');
    out += chunk.toString();
    if (wasReady || !out.includes('"msg":"ready"')) return;
    if (toReader === "close") child.stdout.destroy();
    if (toReader === "pause") {
      child.stdout.off("data", onData);
      child.stdout.pause();
    }
    termAt = Date.now();
    child.kill("SIGTERM");
  };
  child.stdout.on("data", onData);
  // Never left behind by a failed test.
  const guard = setTimeout(() => child.kill("SIGKILL"), 15_000);
  void exited.then(() => clearTimeout(guard));
  return { out: () => out, exited };
}

test("its reader gone, the app logs a thousand lines while stopping and still exits 0 at once", async () => {
  const { code, afterTermMs } = await run(1_000, "close").exited;
  expect(code).toBe(0);
  expect(afterTermMs).toBeLessThan(AT_ONCE_MS);
}, 20_000);

test("its reader stalled with the pipe full (4 MB of lines waiting), the app still exits 0 at once", async () => {
  const { code, afterTermMs } = await run(30_000, "pause").exited;
  expect(code).toBe(0);
  expect(afterTermMs).toBeLessThan(AT_ONCE_MS);
}, 20_000);

test("a reader that keeps up gets every line, in order, the last one included", async () => {
  const r = run(5_000, "read");
  expect((await r.exited).code).toBe(0);
  const lines = r.out().trim().split("\n").map((l) => JSON.parse(l) as { msg: string; i?: number; clean?: boolean });
  expect(lines.filter((l) => l.i !== undefined).map((l) => l.i)).toEqual(Array.from({ length: 5_000 }, (_, i) => i));
  expect(lines.at(-1)).toMatchObject({ msg: "stopped", clean: true });
}, 20_000);
