/**
 * A process for closers.test.ts: registers closers that print their names, wires signals with
 * onShutdown, and says "ready". FAIL=1 makes one closer fail; SLOW=1 makes `begin` wait for a second signal.
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
  begin: async (signal) => {
    console.log(`begin ${signal}`);
    if (process.env.SLOW === "1") await new Promise((resolve) => setTimeout(resolve, 5_000));
  },
  onError: (name, err) => console.log(`failed ${name}: ${(err as Error).message}`),
  end: (clean) => console.log(`end ${clean}`),
  again: (signal) => {
    console.log(`again ${signal}`);
    process.exit(3);
  },
});
console.log("ready");
setInterval(() => undefined, 1_000);
