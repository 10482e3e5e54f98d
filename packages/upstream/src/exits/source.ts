/**
 * Where the pools come from: UPSTREAM_PROXIES_FILE, watched and re-read when it changes (as the
 * profile table is: a file that does not validate is refused with one log line naming the field,
 * and the last good pools stay), else UPSTREAM_PROXIES as one pool, else none.
 */
import { WatchedFile } from "../config-file.js";
import type { UpstreamLog } from "../profile-source.js";
import { ExitsConfigError, poolsOfList, readExitsFile, type ExitsConfig } from "./config.js";

export interface ExitsSource {
  current(): ExitsConfig;
  /** Called with each new configuration taken from the file. */
  onChange(listener: (config: ExitsConfig) => void): void;
  reload(): boolean;
  close(): void;
}

/** Reads the file (or the list) once now: a bad file at start throws, so a worker never starts on a broken one. */
export function exitsSource(opts: { file?: string; list?: readonly string[]; watchIntervalMs?: number; log?: UpstreamLog }): ExitsSource {
  const log = opts.log ?? (() => undefined);
  if (!opts.file) {
    const config = poolsOfList(opts.list ?? []);
    return { current: () => config, onChange: () => undefined, reload: () => true, close: () => undefined };
  }
  const file = opts.file;
  const watched = new WatchedFile(file);
  let config = readExitsFile(file);
  const listeners: ((c: ExitsConfig) => void)[] = [];
  log("info", "proxy pools loaded", { file, pools: config.pools.map((p) => p.name) });
  const reload = (): boolean => {
    watched.reading();
    try {
      config = readExitsFile(file);
    } catch (error) {
      const problems = error instanceof ExitsConfigError ? error.problems : [(error as Error).message];
      log("error", `proxy pools refused, keeping the last good ones: ${problems.join("; ")}`, { file, problems });
      return false;
    }
    log("info", "proxy pools reloaded", { file, pools: config.pools.map((p) => p.name) });
    for (const l of listeners) l(config);
    return true;
  };
  const stop = watched.poll(opts.watchIntervalMs ?? 1_000, () => void reload());
  return { current: () => config, onChange: (l) => listeners.push(l), reload, close: stop };
}

