/**
 * Where the profile table comes from: the shipped `profiles.json`, or the file an operator names
 * (UPSTREAM_PROFILES_FILE). A named file is watched and re-read when it changes, so a dead recipe
 * is replaced without a restart; a file that does not validate is refused with a log line naming
 * the field, and the last good table stays in force. The file is read as every configuration file
 * is (config-file.ts): a regular file of at most 1 MiB.
 */
import { fileURLToPath } from "node:url";
import { ConfigFileError, PROFILES_FILE_MAX_BYTES, readConfigFile, WatchedFile } from "./config-file.js";
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

/** The table in `file`; throws ConfigFileError (unreadable) or ProfileTableError (naming each bad field). */
function readTable(file: string, setting: string): ProfileTable {
  return parseProfileTable(readConfigFile(file, { setting, maxBytes: PROFILES_FILE_MAX_BYTES }));
}

/**
 * Reads the table once now (a bad file at start throws a ConfigFileError, so a deployment never
 * starts without a table: the apps exit 78 on it), then watches a named file. The shipped file is
 * not watched: it changes only with a release.
 */
export function profileSource(opts: ProfileSourceOptions = {}): ProfileSource {
  const file = opts.file ?? shippedProfilesFile();
  const log = opts.log ?? (() => undefined);
  const watched = new WatchedFile(file);
  const setting = opts.file ? "UPSTREAM_PROFILES_FILE" : "the shipped profiles.json";
  let table: ProfileTable;
  try {
    table = readTable(file, setting);
  } catch (error) {
    if (error instanceof ProfileTableError) throw new ConfigFileError(`${setting}: ${file}: ${error.message}`);
    throw error;
  }
  log("info", "profile table loaded", { file, version: table.version });

  const reload = (): boolean => {
    watched.reading();
    try {
      table = readTable(file, setting);
    } catch (error) {
      const problems = error instanceof ProfileTableError ? error.problems : [(error as Error).message];
      log("error", `profile table refused, keeping version ${table.version}: ${problems.join("; ")}`, { file, problems });
      return false;
    }
    log("info", "profile table reloaded", { file, version: table.version });
    return true;
  };

  if (!opts.file) return { current: () => table, reload, close: () => undefined };
  const stop = watched.poll(opts.watchIntervalMs ?? 1_000, () => void reload());
  return { current: () => table, reload, close: stop };
}

