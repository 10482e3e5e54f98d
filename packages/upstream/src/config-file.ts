/**
 * Reading a configuration file an operator names (the profile table, the geotargets CSVs, the
 * proxies file): checked like a setting. Only a regular file is read — opened without blocking and
 * checked with fstat on that same descriptor, so a FIFO or a device at the path never hangs the
 * process and a file swapped in between is not read — up to a size bound, as UTF-8 text.
 * Any refusal is a ConfigFileError whose message is one line naming the setting and the file.
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from "node:fs";

/** A configuration file refused: one line, `SETTING: file: why`. Boot exits 78 on it; a reload keeps the last good version. */
export class ConfigFileError extends Error {
  override readonly name: string = "ConfigFileError";
}

export interface ConfigFileRule {
  /** The setting that names the file, for the message (`UPSTREAM_PROFILES_FILE`). */
  setting: string;
  /** The largest file accepted, in bytes. */
  maxBytes: number;
}

/** The file's text; throws ConfigFileError when it is missing, not a regular file, too large or not UTF-8. */
export function readConfigFile(file: string, rule: ConfigFileRule): string {
  const refuse = (why: string) => new ConfigFileError(`${rule.setting}: ${file}: ${why}`);
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
  } catch (error) {
    throw refuse(`cannot open (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw refuse("not a regular file");
    if (stat.size > rule.maxBytes) throw refuse(`${stat.size} bytes, more than the ${rule.maxBytes} allowed`);
    // Read one byte past the bound: a file that grew after fstat is refused, not cut.
    const buffer = Buffer.alloc(Math.min(stat.size, rule.maxBytes) + 1);
    let length = 0;
    for (let n: number; length < buffer.length && (n = readSync(fd, buffer, length, buffer.length - length, null)) > 0; ) length += n;
    if (length > rule.maxBytes) throw refuse(`more than the ${rule.maxBytes} bytes allowed`);
    try {
      return new TextDecoder("utf-8", { fatal: true }).decode(buffer.subarray(0, length));
    } catch {
      throw refuse("not UTF-8 text");
    }
  } catch (error) {
    if (error instanceof ConfigFileError) throw error;
    throw refuse(`cannot read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  } finally {
    closeSync(fd);
  }
}

/** 1 MiB: the shipped profile table is a few kilobytes. */
export const PROFILES_FILE_MAX_BYTES = 1 << 20;
/**
 * 64 MiB per geotargets CSV: the derived cities file is 4 MB and Google's whole official list
 * (every target type in one file) about 25 MB.
 */
export const GEOTARGETS_FILE_MAX_BYTES = 64 << 20;

/**
 * The version of a watched configuration file, by its stat. Polling the stat survives editors and
 * deploy tools that replace the file by renaming. Each poll compares with the stat of the version
 * last read (not with the previous poll, as fs.watchFile does), so a change made between the first
 * read and the first poll is still seen.
 */
export class WatchedFile {
  /** The file's stat as last read (null: it was missing). */
  private read: Stats | null;

  constructor(private readonly file: string) {
    this.read = statOf(file);
  }

  /** Call just before reading the file: the version read is the one later polls compare with. */
  reading(): void {
    this.read = statOf(this.file);
  }

  /** Polls every `intervalMs`, calling `changed` when the file is not the version last read; returns the stop. */
  poll(intervalMs: number, changed: () => void): () => void {
    const timer = setInterval(() => {
      const now = statOf(this.file);
      const same = now && this.read ? now.mtimeMs === this.read.mtimeMs && now.size === this.read.size : now === this.read;
      if (!same) changed();
    }, intervalMs);
    timer.unref();
    return () => clearInterval(timer);
  }
}

function statOf(file: string): Stats | null {
  try {
    return statSync(file);
  } catch {
    return null;
  }
}
