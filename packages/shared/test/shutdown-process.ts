/**
 * A process for closers.test.ts: registers closers that print their names, wires signals with
 * onShutdown, and says "ready". FAIL=1 makes one closer fail; SLOW=1 makes `begin` wait for a second signal;
 * HANG=1 makes `begin` never end (exitAfterMs 1 s); NO_AGAIN=1 leaves `again` unset.
 */
import { Closers, onShutdown } from "../src/closers.js";

const closers = new Closers();
closers.add("first opened", () => console.log("close first opened"));
if (process.env.FAIL === "1") closers.add("broken", () => Promise.reject(new Error("boom")));
const inner = new Closers();
inner.add("inner a", () => console.log("close inner a"));
inner.add("inner b", () => console.log("close inner b"));
closers.adopt(inner);
closers.add("last opened", () => console.log("close last opened"));
onShutdown(closers, {
  deadlineMs: 2_000,
  exitAfterMs: process.env.HANG === "1" ? 1_000 : 10_000,
  begin: async (signal) => {
    console.log(`begin ${signal}`);
    if (process.env.SLOW === "1") await new Promise((resolve) => setTimeout(resolve, 5_000));
    if (process.env.HANG === "1") await new Promise(() => setInterval(() => undefined, 1_000));
  },
  onError: (name, err) => console.log(`failed ${name}: ${(err as Error).message}`),
  end: (clean) => console.log(`end ${clean}`),
  late: (ms) => console.log(`late ${ms}`),
  again:
    process.env.NO_AGAIN === "1"
      ? undefined
      : (signal) => {
          console.log(`again ${signal}`);
          process.exit(3);
        },
});
console.log("ready");
setInterval(() => undefined, 1_000);
