/**
 * Where the profile table comes from: the shipped `profiles.json`, or the file an operator names
 * (UPSTREAM_PROFILES_FILE). A named file is watched and re-read when it changes, so a dead recipe
 * is replaced without a restart; a file that does not validate is refused with a log line naming
 * the field, and the last good table stays in force.
 */
import { readFileSync, statSync, type Stats } from "node:fs";
import { fileURLToPath } from "node:url";
import { parseProfileTable, ProfileTableError, type ProfileTable } from "./profiles.js";

/** Receives the source's news: a table taken or refused. */
export type UpstreamLog = (level: "info" | "warn" | "error", msg: string, fields?: Record<string, unknown>) => void;

export interface ProfileSource {
  /** The table in force now. */
  current(): ProfileTable;
  /** Re-reads the file now (the watcher calls this on change). Returns whether the new table was taken. */
  reload(): boolean;
  close(): void;
}

/**
 * The shipped table: beside the bundle in production (the Dockerfile copies it next to
 * worker.mjs), one folder above `src/` when running from source.
 */
export function shippedProfilesFile(): string {
  const fromSource = import.meta.url.endsWith(".ts");
  return fileURLToPath(new URL(fromSource ? "../profiles.json" : "./profiles.json", import.meta.url));
}

export interface ProfileSourceOptions {
  /** A table file to use and watch instead of the shipped one. */
  file?: string;
  /** How often a watched file's modification time is checked. Default 1000 ms. */
  watchIntervalMs?: number;
  log?: UpstreamLog;
}

/** A source that always answers `table` (tests, and callers that build their own). */
export function fixedProfileSource(table: ProfileTable): ProfileSource {
  return { current: () => table, reload: () => true, close: () => undefined };
}

/**
 * Reads the table once now (a bad file at start throws, so a deployment never starts without a
 * table), then watches a named file. The shipped file is not watched: it changes only with a release.
 */
export function profileSource(opts: ProfileSourceOptions = {}): ProfileSource {
  const file = opts.file ?? shippedProfilesFile();
  const log = opts.log ?? (() => undefined);
  /** The file's stat as last read (null: it was missing), which each poll compares with. */
  let read = statOf(file);
  let table = parseProfileTable(readFileSync(file, "utf8"));
  log("info", "profile table loaded", { file, version: table.version });

  const reload = (): boolean => {
    read = statOf(file);
    try {
      table = parseProfileTable(readFileSync(file, "utf8"));
    } catch (error) {
      const problems = error instanceof ProfileTableError ? error.problems : [(error as Error).message];
      log("error", `profile table refused, keeping version ${table.version}: ${problems.join("; ")}`, { file, problems });
      return false;
    }
    log("info", "profile table reloaded", { file, version: table.version });
    return true;
  };

  if (!opts.file) return { current: () => table, reload, close: () => undefined };
  // Polling the file's stat survives editors and deploy tools that replace the file by renaming. Each
  // poll compares with the stat of the version last read (not with the previous poll, as fs.watchFile
  // does), so a change made between the first read and the first poll is still seen.
  const poll = setInterval(() => {
    const now = statOf(file);
    const same = now && read ? now.mtimeMs === read.mtimeMs && now.size === read.size : now === read;
    if (!same) reload();
  }, opts.watchIntervalMs ?? 1_000);
  poll.unref();
  return { current: () => table, reload, close: () => clearInterval(poll) };
}

function statOf(file: string): Stats | null {
  try {
    return statSync(file);
  } catch {
    return null;
  }
}
