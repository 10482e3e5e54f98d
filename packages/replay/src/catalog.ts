/**
 * The captured pages, read once and kept in memory, and the rule that picks one for a request.
 * Request input only ever selects among listed file names; it is never joined into a path.
 */
import { readdir, readFile } from "node:fs/promises";
import { extname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { slugOf, type ReplayKind, type Target } from "./target.js";

/** Which fixture folders hold each kind's pages, in the order they are tried. */
function foldersFor(target: Target): string[] {
  const web = target.layout === "web" ? ["web"] : [target.layout, "web"];
  switch (target.kind) {
    case "web":
      return web;
    // No local-finder page was captured; web pages carry the local pack the local parser reads.
    case "local":
      return ["local", ...web];
    case "product":
    case "sellers":
      return ["shopping-product"];
    // No capture of the immersive product panel exists: answered like the upstream's 404.
    case "product-panel":
      return [];
    default:
      return [target.kind];
  }
}

const SELLERS_NAME = /(?:^|-)(?:online|offers)(?:-|$)/;

function fitsKind(kind: ReplayKind, base: string): boolean {
  if (kind === "product") return !SELLERS_NAME.test(base);
  if (kind === "sellers") return SELLERS_NAME.test(base);
  return true;
}

/** Kinds that never fall back, even with `fallback`: no other query's data is passed off. */
const NO_FOLDER_DEFAULT: ReadonlySet<ReplayKind> = new Set(["autocomplete", "product-panel"]);

const baseName = (file: string) => file.slice(file.lastIndexOf("/") + 1, file.length - extname(file).length);

/**
 * Names that start with the slug win over names that only contain it between dashes; then a file
 * whose captured query (MANIFEST.md) has the same slug, for queries file names cannot spell (初音ミク).
 */
function slugMatch(files: string[], slug: string, format: Target["format"], captured: ReadonlyMap<string, string>): string | undefined {
  if (!slug) return undefined;
  const starts = files.filter((f) => `${baseName(f)}-`.startsWith(`${slug}-`));
  const contains = files.filter((f) => `-${baseName(f)}-`.includes(`-${slug}-`));
  const byQuery = files.filter((f) => captured.get(f) === slug);
  const pick = (list: string[]) => list.find((f) => format !== undefined && extname(f) === `.${format}`) ?? list[0];
  return pick(starts) ?? pick(contains) ?? pick(byQuery);
}

/**
 * The query each capture was taken for, as a slug, by file (`web/x.html`), from the fixtures'
 * MANIFEST.md table: its first column names the file, and a column `q=<query>` (then `; URL: …`,
 * ` (lang=…)` or `, tbm=…`) gives the query. Rows it cannot read are skipped.
 */
export function capturedQueries(manifest: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of manifest.split("\n")) {
    const cols = line.split(" | ").map((c) => c.trim());
    const file = /^\|\s*`([^`]+)`$/.exec(cols[0] ?? "")?.[1];
    const q = cols.map((c) => /^q=(.*?)(?:; URL:| \(|, tbm=|$)/.exec(c)?.[1]).find((v) => v !== undefined);
    const slug = q && slugOf(q.replace(/\\\|/g, "|"));
    if (file && slug) out.set(file, slug);
  }
  return out;
}

export interface CatalogOptions {
  dir?: string;
  /** Per-kind default file (relative to `dir` or absolute), used when no file matches the query. */
  defaults?: Partial<Record<ReplayKind, string>>;
  /**
   * When no capture matches the query, answer the first capture of the kind's folders anyway, as if
   * it were the page for that query. Off by default: a miss is then answered honestly (no results,
   * or 404 for a product). Only for tests and demos that want some page whatever the query.
   */
  fallback?: boolean;
}

export class Catalog {
  private readonly listings = new Map<string, Promise<string[]>>();
  private readonly bodies = new Map<string, Promise<Buffer>>();
  private manifest: Promise<Map<string, string>> | undefined;

  constructor(private readonly options: CatalogOptions) {}

  /** Absolute path of a configured file: relative ones are taken from `dir`. */
  resolveFile(file: string): string {
    return isAbsolute(file) ? file : resolve(this.options.dir ?? ".", file);
  }

  /** How the file is named in `x-replay-file`: relative to `dir` when inside it. */
  displayName(absolute: string): string {
    const dir = this.options.dir;
    if (dir) {
      const rel = relative(resolve(dir), absolute);
      if (!rel.startsWith("..") && !isAbsolute(rel)) return rel.split(sep).join("/");
    }
    return absolute;
  }

  /** Sorted file names of one fixture folder (empty when it does not exist). */
  list(folder: string): Promise<string[]> {
    let listing = this.listings.get(folder);
    if (!listing) {
      const dir = this.options.dir;
      listing = dir
        ? readdir(join(dir, folder), { withFileTypes: true })
            .then((entries) => entries.filter((e) => e.isFile()).map((e) => `${folder}/${e.name}`).sort())
            .catch(() => [])
        : Promise.resolve([]);
      this.listings.set(folder, listing);
    }
    return listing;
  }

  read(absolute: string): Promise<Buffer> {
    let body = this.bodies.get(absolute);
    if (!body) {
      body = readFile(absolute);
      // A failed read is not cached, so a file put back later is served.
      body.catch(() => this.bodies.delete(absolute));
      this.bodies.set(absolute, body);
    }
    return body;
  }

  /** The captured queries of MANIFEST.md in `dir` (none without one). */
  private captured(): Promise<Map<string, string>> {
    const dir = this.options.dir;
    this.manifest ??= dir
      ? readFile(join(dir, "MANIFEST.md"), "utf8").then(capturedQueries, () => new Map<string, string>())
      : Promise.resolve(new Map<string, string>());
    return this.manifest;
  }

  /**
   * The absolute path of the page answering `target` in directory mode, or undefined when nothing
   * was captured for its query (the server then answers "no results", or 404 for a product).
   */
  async choose(target: Target): Promise<string | undefined> {
    const folders = foldersFor(target);
    const slug = slugOf(target.key);
    const captured = await this.captured();
    const listed: string[][] = [];
    for (const folder of folders) {
      const files = (await this.list(folder)).filter((f) => fitsKind(target.kind, baseName(f)));
      listed.push(files);
      const match = slugMatch(files, slug, target.format, captured);
      if (match) return this.resolveFile(match);
    }
    const configured = this.options.defaults?.[target.kind];
    if (configured) return this.resolveFile(configured);
    if (!this.options.fallback || NO_FOLDER_DEFAULT.has(target.kind)) return undefined;
    const first = listed.find((files) => files.length > 0)?.[0];
    return first ? this.resolveFile(first) : undefined;
  }
}

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=UTF-8",
  ".htm": "text/html; charset=UTF-8",
  ".json": "application/json; charset=UTF-8",
  ".xml": "text/xml; charset=UTF-8",
  ".txt": "text/plain; charset=UTF-8",
};

export function contentTypeOf(file: string): string {
  return CONTENT_TYPES[extname(file).toLowerCase()] ?? "text/html; charset=UTF-8";
}

/** Captured error pages say their status in the name (`bad-request-400-…`, `error-502-…`). */
export function statusOf(file: string): number {
  const m = /(?:^|-)(?:error|bad-request|forbidden|not-found)-([45]\d\d)(?:-|$)/.exec(baseName(file));
  return m ? Number(m[1]) : 200;
}
