/**
 * Selectors sorted by what an element must carry to be worth testing: testing many selectors in one
 * walk then costs little more than the walk, where css-select would try each alternative of each
 * selector on each element. What an alternative requires is read from css-what's parse of it (the
 * parser css-select itself uses); the element still has to pass the whole compiled alternative.
 */
import { compile } from "css-select";
import { parse, type Selector } from "css-what";
import type { Element } from "domhandler";

export type Test = (el: Element) => boolean;

const compiled = new Map<string, Test>();

/** A whole selector compiled once and cached: parsers test the same few selectors on every page. */
export function compiledTest(selector: string): Test {
  let test = compiled.get(selector);
  if (!test) compiled.set(selector, (test = compile(selector) as Test));
  return test;
}

const seen = new Set<string>();

/**
 * Every selector compiled so far in this process, whole: after parsers ran, the selectors they use,
 * which test/html-equivalence.test.ts holds to css-select's own answers on every captured page.
 */
export function selectorsSeen(): readonly string[] {
  return [...new Set([...seen, ...compiled.keys()])];
}

/**
 * The simple thing an element must carry to match a selector alternative: a class, an attribute (an
 * id has a given value) or a tag name, read from the alternative's last compound. Undefined when the
 * last compound names none of them (`*`, pseudo-classes only, namespaced names, `[a!=b]`, which
 * matches without the attribute): such alternatives are tested on every element.
 */
export type Requirement = { class: string } | { attribute: string; value?: string } | { tag: string } | undefined;

/** What an alternative's last compound requires (a class before an id, an attribute, a tag). */
function requirement(tokens: readonly Selector[]): Requirement {
  let from = tokens.length;
  while (from > 0 && !isCombinator(tokens[from - 1]!)) from--;
  let id: string | undefined;
  let attribute: string | undefined;
  let tag: string | undefined;
  for (const token of tokens.slice(from)) {
    if (token.type === "tag" && token.namespace === null) tag = token.name.toLowerCase();
    // Only css-select's case-sensitive comparisons give a key (`[a=b i]` matches other spellings).
    if (token.type !== "attribute" || token.namespace !== null || token.action === "not") continue;
    const exact = token.ignoreCase !== true;
    if (token.name === "class" && token.action === "element" && exact) return { class: token.value };
    if (token.name === "id" && token.action === "equals" && exact) id = token.value;
    else attribute ??= token.name;
  }
  if (id !== undefined) return { attribute: "id", value: id };
  if (attribute !== undefined) return { attribute };
  return tag === undefined ? undefined : { tag };
}

function isCombinator(token: Selector): boolean {
  return (
    token.type === "descendant" || token.type === "child" || token.type === "sibling" ||
    token.type === "adjacent" || token.type === "parent" || token.type === "column-combinator"
  );
}

/** A test an element gets when it carries the rule's key; `target` says what the test decides. */
interface Rule {
  target: number;
  test?: Test;
}

/** The rules keyed by one attribute: whatever its value, or for one value. */
interface AttributeRules {
  name: string;
  any: Rule[];
  byValue: Map<string, Rule[]>;
}

/**
 * Rules by key: a class, a tag name, an attribute (any value or one value). An element is tested only
 * against the rules of what it carries, found with one look at its name, one pattern over its class
 * (for all classes at once) and one lookup per attribute named.
 */
export class Sieve {
  private readonly byClass = new Map<string, Rule[]>();
  private readonly byTag = new Map<string, Rule[]>();
  private readonly byAttribute: AttributeRules[] = [];
  private readonly attributeRules = new Map<string, AttributeRules>();
  private readonly always: Rule[] = [];
  private classPattern: RegExp | null = null;

  /** Each alternative of the selector, keyed by what it requires; its matches go to `target`. An empty selector matches nothing. */
  addSelector(selector: string, target: number): void {
    if (!selector.trim()) return;
    seen.add(selector);
    for (const tokens of parse(selector)) {
      // Keyed before compiling: css-select sorts the tokens it is given in place.
      const key = requirement(tokens);
      this.add(key, { target, test: compile([tokens]) as Test });
    }
  }

  add(key: Requirement, rule: Rule): void {
    if (key === undefined) this.always.push(rule);
    else if ("class" in key) {
      push(this.byClass, key.class, rule);
      const escape = (c: string) => c.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
      this.classPattern = new RegExp(`(?:^|\\s)(?:${[...this.byClass.keys()].map(escape).join("|")})(?:\\s|$)`);
    } else if ("tag" in key) push(this.byTag, key.tag, rule);
    else {
      let entry = this.attributeRules.get(key.attribute);
      if (!entry) {
        entry = { name: key.attribute, any: [], byValue: new Map() };
        this.byAttribute.push(entry);
        this.attributeRules.set(key.attribute, entry);
      }
      if (key.value === undefined) entry.any.push(rule);
      else push(entry.byValue, key.value, rule);
    }
  }

  /**
   * Adds the element to `found[target]` for each rule it passes among those of the keys it carries
   * (once per target: the element is then the last of that list).
   */
  collect(el: Element, found: Element[][]): void {
    const { attribs } = el;
    if (this.classPattern !== null) {
      const cls = attribs.class;
      if (cls !== undefined && this.classPattern.test(cls)) {
        for (const token of cls.split(/\s+/)) {
          const rules = this.byClass.get(token);
          if (rules !== undefined) offer(rules, el, found);
        }
      }
    }
    const byTag = this.byTag.get(el.name);
    if (byTag !== undefined) offer(byTag, el, found);
    const byAttribute = this.byAttribute;
    for (let i = 0; i < byAttribute.length; i++) {
      const entry = byAttribute[i]!;
      const value = attribs[entry.name];
      if (value === undefined) continue;
      if (entry.any.length > 0) offer(entry.any, el, found);
      const rules = entry.byValue.size === 0 ? undefined : entry.byValue.get(value);
      if (rules !== undefined) offer(rules, el, found);
    }
    if (this.always.length > 0) offer(this.always, el, found);
  }
}

function offer(rules: readonly Rule[], el: Element, found: Element[][]): void {
  for (let i = 0; i < rules.length; i++) {
    const rule = rules[i]!;
    const list = found[rule.target]!;
    if (list[list.length - 1] !== el && (rule.test === undefined || rule.test(el))) list.push(el);
  }
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
