/**
 * Private PostgreSQL servers, for `npm start` (data in .pg-data/, kept), `npm test`, the benchmarks
 * and the drills (a temporary folder each), when DATABASE_URL is not given.
 * - PostgreSQL where it is installed (findPostgresBinDir): on the PATH, where `pg_config --bindir`
 *   says, Debian's /usr/lib/postgresql/<version>/bin or Homebrew's postgresql@<version>, the newest
 *   version first; when there is none, Debian's `postgresql` package (apt-get installs it, as root).
 * - `initdb` into the data folder (trust authentication: the server listens on loopback only, and
 *   its Unix socket is inside the data folder), then `postgres` on a free loopback port.
 * - PostgreSQL refuses to run as root: when we are root, the data folder is given to the package's
 *   `postgres` user and the server runs as that user.
 * Plain JavaScript with Node's standard library only: it runs before dependencies are installed.
 */
import { spawn, spawnSync } from "node:child_process";
import { accessSync, chmodSync, chownSync, constants, existsSync, mkdirSync, openSync, readdirSync, realpathSync, closeSync, statSync } from "node:fs";
import { delimiter, dirname, join, resolve } from "node:path";
import { freePort } from "./redis.mjs";

/** The data folder `npm start` keeps its private PostgreSQL in when PG_DATA_DIR is unset. */
export const DEFAULT_DATA_DIR = ".pg-data";
/** The file in the data folder naming the DATABASE_URL of the server `npm start` runs, while it runs (the CLI reads it). */
export const URL_FILE = "postgres-url";
/** The database the apps use on a private server. */
export const DATABASE = "serp";

const isRoot = () => process.getuid?.() === 0;

/** An executable file at `path`. */
function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/** A folder with the programs used here: initdb, postgres, pg_isready and psql. */
const isBinDir = (dir) => Boolean(dir) && ["initdb", "postgres", "pg_isready", "psql"].every((p) => executable(join(dir, p)));

/** `base`/<entry>/`sub` for each entry whose version (the digits after `prefix`) is a number, newest first. */
function versionedDirs(base, prefix, sub) {
  if (!existsSync(base)) return [];
  const version = (name) => name.slice(prefix.length).split(".").map(Number);
  return readdirSync(base)
    .filter((name) => name.startsWith(prefix) && /^\d+(\.\d+)?$/.test(name.slice(prefix.length)))
    .sort((a, b) => {
      const [x, y] = [version(a), version(b)];
      return y[0] - x[0] || (y[1] ?? 0) - (x[1] ?? 0);
    })
    .map((name) => join(base, name, sub));
}

/**
 * Where PostgreSQL's programs are installed, and how that was found, trying in turn: the PATH (the
 * folder of its initdb, or of the file a link there leads to), `pg_config --bindir`, Debian's /usr/lib/postgresql/<version>/bin
 * and Homebrew's postgresql@<version> (Apple silicon, then Intel), the newest version first.
 * Undefined when none has them. `o` replaces the places looked in (tests).
 */
export function findPostgresBinDir(o = {}) {
  const env = o.env ?? process.env;
  const debian = o.debian ?? "/usr/lib/postgresql";
  const homebrew = o.homebrew ?? ["/opt/homebrew/opt", "/usr/local/opt"];
  const path = (env.PATH ?? "").split(delimiter).filter(Boolean);
  // initdb on the PATH, or where its link leads (a link in /usr/local/bin to an installation's bin).
  for (const initdb of path.map((dir) => join(dir, "initdb")).filter(executable)) {
    for (const dir of new Set([dirname(initdb), dirname(realpathSync(initdb))])) if (isBinDir(dir)) return { dir, via: "PATH" };
  }
  const pgConfig = path.map((dir) => join(dir, "pg_config")).find(executable);
  if (pgConfig) {
    const r = spawnSync(pgConfig, ["--bindir"], { encoding: "utf8", env });
    const dir = r.status === 0 ? r.stdout.trim() : undefined;
    if (isBinDir(dir)) return { dir, via: "pg_config --bindir" };
  }
  for (const dir of versionedDirs(debian, "", "bin")) if (isBinDir(dir)) return { dir, via: "Debian" };
  for (const base of homebrew) {
    for (const dir of [...versionedDirs(base, "postgresql@", "bin"), join(base, "postgresql", "bin")]) if (isBinDir(dir)) return { dir, via: "Homebrew" };
  }
  return undefined;
}

let found;
/** The folder holding initdb, postgres, pg_isready and psql (findPostgresBinDir); Debian's installed with apt-get when none is and allowed (root). */
export function postgresBinDir() {
  if (found) return found.dir;
  found = findPostgresBinDir();
  if (!found && isRoot() && spawnSync("sh", ["-c", "command -v apt-get"]).status === 0) {
    console.log("[run] PostgreSQL not found: installing Debian's postgresql…");
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    for (const args of [["update", "-qq"], ["install", "-y", "-qq", "postgresql"]]) {
      if (spawnSync("apt-get", args, { stdio: "inherit", env }).status !== 0) break;
    }
    found = findPostgresBinDir();
  }
  if (!found) {
    throw new Error(
      "PostgreSQL is needed: install it (apt-get install postgresql, brew install postgresql@17…) so that initdb is on the PATH or pg_config --bindir names it, or set DATABASE_URL",
    );
  }
  return found.dir;
}

/** Spawn options that run a command as the `postgres` user when we are root (PostgreSQL refuses root). */
function asServerUser() {
  if (!isRoot()) return {};
  const id = (flag) => Number(spawnSync("id", [flag, "postgres"], { encoding: "utf8" }).stdout.trim());
  const uid = id("-u");
  const gid = id("-g");
  if (!Number.isInteger(uid) || uid <= 0) throw new Error("running as root, but there is no `postgres` user to run PostgreSQL as (apt-get install postgresql makes one)");
  return { uid, gid };
}

/**
 * A cluster in `dir`, made with initdb unless there is one already. `fast` (tests, benchmarks):
 * initdb does not fsync; the data is thrown away after the run.
 */
export function initCluster(dir, { fast = false } = {}) {
  if (existsSync(join(dir, "PG_VERSION"))) return;
  mkdirSync(dir, { recursive: true });
  const user = asServerUser();
  if (user.uid !== undefined) chownSync(dir, user.uid, user.gid);
  chmodSync(dir, 0o700);
  const args = ["-D", dir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-locale", ...(fast ? ["--no-sync"] : [])];
  const r = spawnSync(join(postgresBinDir(), "initdb"), args, { encoding: "utf8", ...user, cwd: "/" });
  if (r.status !== 0) throw new Error(`initdb ${dir} failed: ${(r.stderr || r.stdout || r.error?.message || "").trim()}`);
}

/**
 * The `postgres` server of the cluster in `dir` on loopback `port` (its socket in `dir` too, its
 * log in dir/postgres.log). `fast`: no fsync, for data thrown away after a test run.
 */
export function postgresProcess(port, dir, { fast = false } = {}) {
  const log = openSync(join(dir, "postgres.log"), "a");
  const settings = ["listen_addresses=127.0.0.1", `unix_socket_directories=${dir}`, "max_connections=200"];
  if (fast) settings.push("fsync=off", "synchronous_commit=off", "full_page_writes=off");
  const child = spawn(join(postgresBinDir(), "postgres"), ["-D", dir, "-p", String(port), ...settings.flatMap((s) => ["-c", s])], {
    stdio: ["ignore", log, log],
    cwd: "/",
    ...asServerUser(),
  });
  closeSync(log);
  return child;
}

/** True when the server on `port` accepts connections. */
export function isReady(port) {
  return spawnSync(join(postgresBinDir(), "pg_isready"), ["-q", "-h", "127.0.0.1", "-p", String(port)]).status === 0;
}

/** Resolves once the server `child` accepts connections on `port`; kills it after 30 s without. */
export async function waitForPostgres(port, child, dir) {
  for (let i = 0; i < 300; i++) {
    if (isReady(port)) return child;
    if (child.exitCode !== null || child.signalCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill("SIGKILL");
  throw new Error(`PostgreSQL did not start on port ${port} (log: ${join(dir, "postgres.log")})`);
}

/** Creates `database` on the server at `port` unless it exists. */
export function createDatabase(port, database = DATABASE) {
  const psql = (sql) =>
    spawnSync(join(postgresBinDir(), "psql"), ["-h", "127.0.0.1", "-p", String(port), "-U", "postgres", "-d", "postgres", "-tAc", sql], { encoding: "utf8" });
  const found = psql(`SELECT 1 FROM pg_database WHERE datname = '${database}'`);
  if (found.status !== 0) throw new Error(`psql failed: ${found.stderr.trim()}`);
  if (found.stdout.trim() === "1") return;
  const made = psql(`CREATE DATABASE "${database}"`);
  if (made.status !== 0 && !/already exists/.test(made.stderr)) throw new Error(`creating database ${database} failed: ${made.stderr.trim()}`);
}

/** The URL the apps connect with. */
export const databaseUrl = (port, database = DATABASE) => `postgres://postgres@127.0.0.1:${port}/${database}`;

/**
 * A private PostgreSQL with its cluster in `dir` (made when missing) on a free loopback port (or
 * `port`), with the apps' database: `{ url, port, child, stop() }`. stop() shuts it down fast
 * (SIGINT: open sessions are ended, then a clean checkpoint) and resolves once it has exited.
 */
export async function startPostgres(dir, { fast = false, port } = {}) {
  dir = resolve(dir);
  initCluster(dir, { fast });
  port ??= await freePort();
  const child = await waitForPostgres(port, postgresProcess(port, dir, { fast }), dir);
  createDatabase(port);
  const exited = new Promise((r) => (child.exitCode !== null ? r() : child.once("exit", r)));
  return {
    url: databaseUrl(port),
    port,
    child,
    stop: async (signal = "SIGINT") => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}
