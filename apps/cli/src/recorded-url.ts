/**
 * What redis-url.ts and database-url.ts share: the URL a running `npm start` recorded for its
 * private server in `<data dir>/<file>`, whether something answers there, and a URL fit for a log.
 */
import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { join, resolve } from "node:path";

/** The recorded URL ("" when none) and the file it was looked for in, for the note. */
export function recordedUrl(dataDir: string, fileName: string, cwd: string): { url: string; file: string } {
  const file = join(resolve(cwd, dataDir), fileName);
  try {
    return { url: readFileSync(file, "utf8").trim(), file };
  } catch {
    return { url: "", file }; // no npm start running from here (or it never started that server)
  }
}

/**
 * True when the server at `url` answers within a second: a TCP connection, and when `hello` is
 * given, a first reply that `hello.reply` accepts after `hello.send` (a raw exchange: a client
 * library would keep its timers running after a refused connection).
 */
export function answers(url: string, defaultPort: number, hello?: { send: string; reply: RegExp }): Promise<boolean> {
  let host: string;
  let port: number;
  try {
    const u = new URL(url);
    host = u.hostname || "127.0.0.1";
    port = Number(u.port || defaultPort);
  } catch {
    return Promise.resolve(false);
  }
  return new Promise((ok) => {
    const socket = connect({ host, port });
    const done = (yes: boolean) => {
      socket.destroy();
      ok(yes);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.once("connect", () => (hello ? socket.write(hello.send) : done(true)));
    if (hello) socket.once("data", (d) => done(hello.reply.test(d.toString())));
    socket.once("error", () => done(false));
  });
}

/** The URL without its password, for a log line. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(an unparseable URL)";
  }
}
