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

/** Kinds that only answer a page captured for that very query: no other query's data is passed off. */
const NO_FOLDER_DEFAULT: ReadonlySet<ReplayKind> = new Set(["autocomplete", "product-panel"]);

const baseName = (file: string) => file.slice(file.lastIndexOf("/") + 1, file.length - extname(file).length);

/** Names that start with the slug win over names that only contain it between dashes. */
function slugMatch(files: string[], slug: string, format: Target["format"]): string | undefined {
  if (!slug) return undefined;
  const starts = files.filter((f) => `${baseName(f)}-`.startsWith(`${slug}-`));
  const contains = files.filter((f) => `-${baseName(f)}-`.includes(`-${slug}-`));
  const pick = (list: string[]) => list.find((f) => format !== undefined && extname(f) === `.${format}`) ?? list[0];
  return pick(starts) ?? pick(contains);
}

export interface CatalogOptions {
  dir?: string;
  /** Per-kind default file (relative to `dir` or absolute), used when no file matches the query. */
  defaults?: Partial<Record<ReplayKind, string>>;
}

export class Catalog {
  private readonly listings = new Map<string, Promise<string[]>>();
  private readonly bodies = new Map<string, Promise<Buffer>>();

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

  /** The absolute path of the page answering `target` in directory mode, or undefined (→ 404). */
  async choose(target: Target): Promise<string | undefined> {
    const folders = foldersFor(target);
    const slug = slugOf(target.key);
    const listed: string[][] = [];
    for (const folder of folders) {
      const files = (await this.list(folder)).filter((f) => fitsKind(target.kind, baseName(f)));
      listed.push(files);
      const match = slugMatch(files, slug, target.format);
      if (match) return this.resolveFile(match);
    }
    const configured = this.options.defaults?.[target.kind];
    if (configured) return this.resolveFile(configured);
    if (NO_FOLDER_DEFAULT.has(target.kind)) return undefined;
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
