/**
 * Selection: css-select's answers (`selectAll`, `selectOne`, `is`) from precompiled selectors, found
 * in one walk for several selectors at once. Parsers keep their selectors as named constants beside
 * them and query inside the smallest subtree that holds what they want.
 */
import type { AnyNode, Element } from "domhandler";
import { isTag } from "domhandler";
import { removeSubsets } from "domutils";
import { compiledTest, Sieve } from "./sieve.js";
import { text } from "./text.js";

export type Root = AnyNode | AnyNode[];

/** Whether the element matches the selector (compiled once, like `all` and `first`). */
export function matches(el: Element, selector: string): boolean {
  return compiledTest(selector)(el);
}

/**
 * Every element under `root` matching the selector, in document order. Like css-select's `selectAll`
 * (an array root's own nodes are tested too, a `<template>`'s content is not searched), but each
 * element is only tested against the selector's alternatives it could match: see `Sieve`.
 */
export function all(selector: string, root: Root): Element[] {
  const found: Element[][] = [[]];
  const { sieve } = selectionOf(selector);
  walk(start(root), (el) => {
    sieve.collect(el, found);
    return queryStep(el);
  });
  return found[0]!;
}

/** The first element under `root` matching the selector, or null; the walk stops there. */
export function first(selector: string, root: Root): Element | null {
  const found: Element[][] = [[]];
  const { sieve } = selectionOf(selector);
  walk(start(root), (el) => {
    sieve.collect(el, found);
    return found[0]!.length > 0 ? STOP : queryStep(el);
  });
  return found[0]![0] ?? null;
}

/** Text of the first match, or undefined when there is none or it is empty. */
export function textOf(selector: string, root: Root): string | undefined {
  return text(first(selector, root)) || undefined;
}

/** css-select does not search a `<template>`'s content: it is not part of the page. */
function queryStep(el: Element): Step {
  return el.name === "template" ? OVER : DOWN;
}

/** Every match of a fixed set of selectors under one root, read after the one walk that found them. */
export interface Scan {
  /** The selector's matches in document order (the selector must be one of those scanned). */
  all(selector: string): readonly Element[];
  first(selector: string): Element | null;
  /** Text of the first match, or undefined when there is none or it is empty (like `textOf`). */
  textOf(selector: string): string | undefined;
}

/**
 * Every match of each selector under `root`, found in one walk: a parser reading several parts of
 * one block (a result's link, snippet, date, sitelinks) scans the block once instead of querying it
 * once per part. Matches are the same as `all(selector, root)` for each selector; an empty selector
 * matches nothing. Pass the same array (a constant beside the parser) on every call: it is compiled
 * once.
 */
export function scan(root: Root, selectors: readonly string[]): Scan {
  const selected = selection(selectors);
  const found: Element[][] = [];
  for (let i = 0; i < selectors.length; i++) found.push([]);
  walk(start(root), (el) => {
    selected.sieve.collect(el, found);
    return queryStep(el);
  });
  return new Scanned(selected.index, found);
}

class Scanned implements Scan {
  constructor(
    private readonly index: ReadonlyMap<string, number>,
    private readonly found: readonly Element[][],
  ) {}

  all(selector: string): readonly Element[] {
    const i = this.index.get(selector);
    if (i === undefined) throw new Error(`scan: "${selector}" was not scanned`);
    return this.found[i]!;
  }

  first(selector: string): Element | null {
    return this.all(selector)[0] ?? null;
  }

  textOf(selector: string): string | undefined {
    return text(this.first(selector)) || undefined;
  }
}

/**
 * Scans of disjoint blocks (results, tiles, cards) answered from matches already found, by a landmark
 * sweep or a scan of the page: each match goes to the block it lies in, found by going up from it, so
 * the blocks are not walked again. Reading a freshly parsed page costs mostly the first look at each
 * element; a second walk over the same elements costs nearly as much as the first.
 * For each selector, a block gets the matches strictly inside it, in document order: what
 * `scan(block, selectors)` finds, provided `matchesOf(selector)` holds every match under the blocks.
 * Blocks that nest are scanned one by one instead (a match would belong to more than one).
 */
export function scansOf(
  blocks: readonly Element[],
  selectors: readonly string[],
  matchesOf: (selector: string) => readonly Element[],
): Scan[] {
  const blockAt = new Map<AnyNode, number>();
  blocks.forEach((block, i) => blockAt.set(block, i));
  for (const block of blocks) {
    for (let node = block.parent; node; node = node.parent) {
      if (blockAt.has(node)) return blocks.map((b) => scan(b, selectors));
    }
  }
  const found = blocks.map(() => selectors.map((): Element[] => []));
  selectors.forEach((selector, s) => {
    for (const el of matchesOf(selector)) {
      for (let node = el.parent; node; node = node.parent) {
        const i = blockAt.get(node);
        if (i !== undefined) {
          found[i]![s]!.push(el);
          break;
        }
      }
    }
  });
  const { index } = selection(selectors);
  return found.map((f) => new Scanned(index, f));
}

interface Selection {
  sieve: Sieve;
  /** Where each selector's matches go. */
  index: ReadonlyMap<string, number>;
}

/** Selector lists compiled into sieves: by the list itself, or its text for a list built anew. */
const selectionsByList = new WeakMap<readonly string[], Selection>();
const selectionsByText = new Map<string, Selection>();

function selection(selectors: readonly string[]): Selection {
  let s = selectionsByList.get(selectors);
  if (!s) {
    const key = selectors.join("\n");
    s = selectionsByText.get(key) ?? compileSelection(selectors);
    selectionsByText.set(key, s);
    selectionsByList.set(selectors, s);
  }
  return s;
}

const singleSelections = new Map<string, Selection>();

function selectionOf(selector: string): Selection {
  let s = singleSelections.get(selector);
  if (!s) singleSelections.set(selector, (s = compileSelection([selector])));
  return s;
}

function compileSelection(selectors: readonly string[]): Selection {
  const sieve = new Sieve();
  const index = new Map<string, number>();
  selectors.forEach((selector, target) => {
    if (!index.has(selector)) index.set(selector, target);
    sieve.addSelector(selector, target);
  });
  return { sieve, index };
}

/** What a visit tells the walk: go down into the element's children, pass over them, or stop. */
export const DOWN = 0;
export const OVER = 1;
export const STOP = 2;
export type Step = typeof DOWN | typeof OVER | typeof STOP;

/** Where a query starts, as css-select has it: an array's own nodes, else a node's children. */
function start(root: Root): readonly AnyNode[] {
  if (Array.isArray(root)) return removeSubsets(root);
  return "children" in root ? root.children : [];
}

/** Visits the elements of `nodes` and below in document order, as each visit says. */
export function walk(nodes: readonly AnyNode[], visit: (el: Element) => Step): void {
  const stack: Element[] = [];
  pushElements(stack, nodes);
  while (stack.length > 0) {
    const el = stack.pop()!;
    const step = visit(el);
    if (step === STOP) return;
    if (step === DOWN) pushElements(stack, el.children);
  }
}

/** Stacks the elements among `nodes`, the first on top. */
function pushElements(stack: Element[], nodes: readonly AnyNode[]): void {
  for (let i = nodes.length - 1; i >= 0; i--) {
    const node = nodes[i]!;
    if (isTag(node)) stack.push(node);
  }
}
