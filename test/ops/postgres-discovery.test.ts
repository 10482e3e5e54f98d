/**
 * `npm start`'s private PostgreSQL is found where it is installed (scripts/postgres.mjs
 * findPostgresBinDir): on the PATH, where `pg_config --bindir` says, under Debian's
 * /usr/lib/postgresql/<version>/bin or Homebrew's postgresql@<version>, the newest version first.
 * Each place is a temporary folder of fake executables here, so no real installation decides.
 */
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { findPostgresBinDir } from "../../scripts/postgres.mjs";

const PROGRAMS = ["initdb", "postgres", "pg_isready", "psql"];

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "serp-pg-find-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A folder with executable stand-ins for `programs` (a file without the x bit for `notExecutable`). */
function bin(path: string, programs = PROGRAMS, notExecutable: string[] = []): string {
  const dir = join(root, path);
  mkdirSync(dir, { recursive: true });
  for (const p of programs) {
    writeFileSync(join(dir, p), "#!/bin/sh\nexit 0\n");
    chmodSync(join(dir, p), notExecutable.includes(p) ? 0o644 : 0o755);
  }
  return dir;
}

/** Looks only in this test's folders: a PATH of `path`, and Debian and Homebrew bases that may not exist. */
const find = (path: string[]) =>
  findPostgresBinDir({ env: { PATH: path.join(":") }, debian: join(root, "usr/lib/postgresql"), homebrew: [join(root, "opt/homebrew/opt"), join(root, "usr/local/opt")] });

test("on the PATH: the folder of initdb", () => {
  const dir = bin("pg/bin");
  expect(find([bin("other", ["ls"]), dir])).toEqual({ dir, via: "PATH" });
});

test("on the PATH through a link: the folder the link leads to (initdb and postgres linked into a bin of their own)", () => {
  const real = bin("usr/lib/postgresql/15/bin");
  const links = join(root, "usr/local/bin");
  mkdirSync(links, { recursive: true });
  for (const p of ["initdb", "postgres"]) symlinkSync(join(real, p), join(links, p));
  expect(find([links])).toEqual({ dir: real, via: "PATH" });
});

test("pg_config --bindir when the PATH has no initdb", () => {
  const dir = bin("opt/pg16/bin");
  const tools = join(root, "tools");
  mkdirSync(tools);
  writeFileSync(join(tools, "pg_config"), `#!/bin/sh\n[ "$1" = --bindir ] && echo '${dir}'\n`);
  chmodSync(join(tools, "pg_config"), 0o755);
  expect(find([tools])).toEqual({ dir, via: "pg_config --bindir" });
});

test("Debian: the newest version that has every program", () => {
  bin("usr/lib/postgresql/9.6/bin");
  bin("usr/lib/postgresql/13/bin");
  const v16 = bin("usr/lib/postgresql/16/bin");
  bin("usr/lib/postgresql/17/bin", ["initdb", "postgres", "pg_isready"]);
  bin("usr/lib/postgresql/18/bin", PROGRAMS, ["postgres"]);
  expect(find([])).toEqual({ dir: v16, via: "Debian" });
});

test("Homebrew: postgresql@<newest> under /opt/homebrew/opt or /usr/local/opt", () => {
  bin("usr/local/opt/postgresql@14/bin");
  const v17 = bin("usr/local/opt/postgresql@17/bin");
  expect(find([])).toEqual({ dir: v17, via: "Homebrew" });
  const silicon = bin("opt/homebrew/opt/postgresql@15/bin");
  expect(find([])).toEqual({ dir: silicon, via: "Homebrew" });
});

test("the PATH first, then pg_config, then Debian, then Homebrew", () => {
  const brew = bin("opt/homebrew/opt/postgresql@17/bin");
  expect(find([])?.dir).toBe(brew);
  const debian = bin("usr/lib/postgresql/15/bin");
  expect(find([])?.dir).toBe(debian);
  const onPath = bin("path/bin");
  expect(find([onPath])?.dir).toBe(onPath);
});

test("nowhere: undefined (npm start then says how to install it)", () => {
  bin("path/bin", ["psql", "pg_isready"]);
  expect(find([join(root, "path/bin"), join(root, "missing")])).toBeUndefined();
});
