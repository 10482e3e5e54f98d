/**
 * A test's heavy computation in a Node process of its own: parsing captured pages under Jest's
 * module sandbox takes three to five times as long as in plain Node (every global the parsers touch
 * is looked up through the sandbox's context), so a suite that parses every captured page runs its
 * work here and keeps its assertions in Jest, checking what the work returned.
 *
 * `inNode(new URL("./x.work.ts", import.meta.url), "name", ...args)` imports that module in
 * `node --import tsx`, calls its export `name` with the arguments (as JSON), and resolves to what it
 * returned (awaited, through JSON: plain data only). Its console output goes to the test's stderr;
 * a throw rejects with the child's error.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** Run in the child: the call comes in IN_NODE_CALL, the answer goes out on fd 3. */
const CHILD = `
const { url, name, args } = JSON.parse(process.env.IN_NODE_CALL);
const fn = (await import(url))[name];
if (typeof fn !== "function") throw new Error(url + " exports no function " + name);
const answer = JSON.stringify((await fn(...args)) ?? null);
const out = (await import("node:fs")).createWriteStream("", { fd: 3 });
await new Promise((done, fail) => out.on("error", fail).end(answer, done));
`;

export function inNode<T>(module: URL, name: string, ...args: unknown[]): Promise<T> {
  const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", CHILD], {
    cwd: fileURLToPath(new URL("../../..", import.meta.url)),
    env: { ...process.env, IN_NODE_CALL: JSON.stringify({ url: module.href, name, args }) },
    stdio: ["ignore", "pipe", "pipe", "pipe"],
  });
  const answer: Buffer[] = [];
  const output: Buffer[] = [];
  child.stdio[3]!.on("data", (b: Buffer) => answer.push(b));
  for (const stream of [child.stdout!, child.stderr!]) stream.on("data", (b: Buffer) => output.push(b));
  return new Promise((ok, fail) => {
    child.once("error", fail);
    child.once("close", (code, signal) => {
      const said = Buffer.concat(output).toString();
      if (code !== 0) return fail(new Error(`${name} in ${fileURLToPath(module)} failed (${code ?? signal}):\n${said}`));
      if (said) process.stderr.write(said);
      ok(JSON.parse(Buffer.concat(answer).toString()) as T);
    });
  });
}

/** What a throw said, or null when nothing was thrown: how a work module returns a throw (an error does not cross as JSON). */
export function thrown(fn: () => unknown): string | null {
  try {
    fn();
    return null;
  } catch (err) {
    return String((err as Error).message);
  }
}
