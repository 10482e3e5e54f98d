/**
 * Landmarks: the elements a parser's blocks start at (a results column, an ad unit, every result
 * title), found by one sweep of the page per parser. A parser declares its landmarks in one index
 * beside its selectors; the first lookup on a page sweeps the page once for all of them and keeps
 * what it found on that page (a document `parseHtml` built; any other root is swept on each lookup).
 * A parser made of several extractors includes their indexes in its own, so one sweep answers them
 * all. The page's nodes are never changed.
 */
import type { AnyNode, Element } from "domhandler";
import { isTag } from "domhandler";
import { Page } from "./tree.js";
import { all, DOWN, OVER, STOP, walk } from "./select.js";
import { compiledTest, Sieve, type Test } from "./sieve.js";

/** What marks a landmark. */
export interface LandmarkSpec {
  /** Candidates carry one of these classes, one of these attribute values (`true`: any value)… */
  classes?: readonly string[];
  attributes?: Readonly<Record<string, string | true>>;
  /** …or are one of these elements… */
  tags?: readonly string[];
  /** …and are the landmark when they also match this selector (tested on candidates only)… */
  selector?: string;
  /**
   * …or pass this test instead: a look at one attribute's value (`href` naming a parameter) costs
   * less than a compiled selector on every link of a page.
   */
  match?: (el: Element) => boolean;
}

/** A lookup: the first element a spec (or a selector) marks, or every one, in document order. */
export type Lookup = { first: LandmarkSpec | string } | { every: LandmarkSpec | string };

/** What an index's lookups found on a page: an element or undefined, or a list. */
export type Landmarks<L extends Record<string, Lookup>> = {
  readonly [K in keyof L]: L[K] extends { every: unknown } ? readonly Element[] : Element | undefined;
};

export interface LandmarkIndex<L extends Record<string, Lookup> = Record<never, Lookup>> {
  /** The landmarks under `root`, from the page's one sweep for this index (or one that included it). */
  of(root: AnyNode): Landmarks<L>;
}

/**
 * A parser's landmarks, by name. `include`: indexes of the extractors the parser calls, answered by
 * this index's sweep too, so they cost no sweep of their own once this one ran on the page.
 */
export function landmarkIndex<L extends Record<string, Lookup>>(lookups: L, include: readonly LandmarkIndex[] = []): LandmarkIndex<L> {
  return new Index(lookups, include as readonly Index<Record<string, Lookup>>[]);
}

/**
 * An index of every element each selector matches, by selector: the parts a parser reads in each of
 * its blocks, given to `scansOf` so the blocks are not walked again.
 */
export function everyMatch(selectors: readonly string[]): LandmarkIndex<Record<string, { every: string }>> {
  return landmarkIndex(Object.fromEntries(selectors.map((selector) => [selector, { every: selector }])));
}

/** Subtrees a sweep does not enter: they never hold a block. */
const NO_LANDMARKS = new Set(["script", "style", "noscript", "template", "svg", "head"]);

class Index<L extends Record<string, Lookup>> implements LandmarkIndex<L> {
  private readonly names: string[];
  private readonly lookups: Lookup[];
  /** This index and those it includes (each once): one sweep answers them all. */
  private readonly members: Index<Record<string, Lookup>>[];
  /** That sweep, compiled on first use. */
  private sweepOf: Sweep | undefined;

  constructor(lookups: L, include: readonly Index<Record<string, Lookup>>[]) {
    this.names = Object.keys(lookups);
    this.lookups = Object.values(lookups);
    const members = new Set<Index<Record<string, Lookup>>>([this as unknown as Index<Record<string, Lookup>>]);
    for (const other of include) for (const m of other.members) members.add(m);
    this.members = [...members];
  }

  of(root: AnyNode): Landmarks<L> {
    const page = root instanceof Page ? root : undefined;
    const kept = page?.landmarks?.get(this);
    if (kept) return kept as Landmarks<L>;
    this.sweepOf ??= compileSweep(this.members.map((m) => m.lookups));
    const found = sweep(root, this.sweepOf);
    let own: Landmarks<L> | undefined;
    let target = 0;
    for (const member of this.members) {
      const record: Record<string, Element | readonly Element[] | undefined> = {};
      member.lookups.forEach((lookup, i) => {
        const matches = found.matches[target++]!;
        record[member.names[i]!] = "every" in lookup ? matches : matches[0];
      });
      if (page) (page.landmarks ??= new Map()).set(member, record);
      if (member === (this as unknown)) own = record as Landmarks<L>;
    }
    if (page && found.scripts) page.scripts = found.scripts;
    return own!;
  }
}

interface Sweep {
  sieve: Sieve;
  targets: number;
  /** Whether every lookup wants a first match only: the sweep then stops once all are found. */
  firstOnly: boolean;
}

/** The lookups of several indexes as one sieve, in order: a selector's keys are read from it, a spec names its own. */
function compileSweep(indexes: readonly (readonly Lookup[])[]): Sweep {
  const sieve = new Sieve();
  const lookups = indexes.flat();
  lookups.forEach((lookup, target) => {
    const spec = "every" in lookup ? lookup.every : lookup.first;
    if (typeof spec === "string") return sieve.addSelector(spec, target);
    const test: Test | undefined = spec.match ?? (spec.selector === undefined ? undefined : compiledTest(spec.selector));
    for (const c of spec.classes ?? []) sieve.add({ class: c }, { target, test });
    for (const tag of spec.tags ?? []) sieve.add({ tag }, { target, test });
    for (const [attribute, value] of Object.entries(spec.attributes ?? {})) {
      sieve.add(value === true ? { attribute } : { attribute, value }, { target, test });
    }
  });
  return { sieve, targets: lookups.length, firstOnly: lookups.length > 0 && lookups.every((l) => "first" in l) };
}

/**
 * One walk of a page (document order, root included) answering a sweep's lookups. It skips `<head>`,
 * scripts, styles, templates and inline SVG icons, which never hold a block, and tests an element
 * only against the specs naming one of its classes, its tag or an attribute it carries (see `Sieve`).
 * It stops early only when every lookup wants a first match and all are found; a whole sweep also
 * notes the page's scripts on the way (see `pageScripts`).
 */
function sweep(root: AnyNode, { sieve, targets, firstOnly }: Sweep): { matches: Element[][]; scripts?: Element[] } {
  const matches: Element[][] = [];
  for (let i = 0; i < targets; i++) matches.push([]);
  const scripts: Element[] = [];
  let whole = true;
  walk(isTag(root) ? [root] : "children" in root ? root.children : [], (el) => {
    if (NO_LANDMARKS.has(el.name)) {
      if (el.name === "script") scripts.push(el);
      return OVER;
    }
    sieve.collect(el, matches);
    if (!firstOnly || !matches.every((m) => m.length > 0)) return DOWN;
    whole = false;
    return STOP;
  });
  return whole ? { matches, scripts } : { matches };
}

/** An index of no landmarks: its sweep only notes the page's scripts. */
const SCRIPTS = landmarkIndex({});

/**
 * The scripts of a page outside `<head>`, in document order: those a landmark sweep met, for a
 * document `parseHtml` built (swept now if no sweep ran yet), else those under `root`.
 */
export function pageScripts(root: AnyNode): readonly Element[] {
  if (!(root instanceof Page)) return all("script", root);
  if (!root.scripts) SCRIPTS.of(root);
  return root.scripts!;
}
