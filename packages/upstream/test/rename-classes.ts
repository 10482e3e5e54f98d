/**
 * A captured page as a redesign would leave it: every `class` attribute rewritten through one random
 * renaming of its class names (the same name always becomes the same new one, as a build of the
 * upstream's stylesheet renames them), or dropped altogether. Ids, tags, `data-*`, `role`, `aria-*`,
 * hrefs and text stay as they are. Seeded, so a failure can be replayed.
 */

/** `class="…"`, `class='…'` and unquoted `class=…` (pages saved by SingleFile leave quotes out). */
const CLASS_ATTRIBUTE = /(\sclass\s*=\s*)("[^"]*"|'[^']*'|[^\s"'=<>`]+)/gi;

/** A small seeded generator (mulberry32): the same seed, the same renaming. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Every class name on the page replaced by a random one of the same kind (letters, 5 to 8 of them). */
export function renameClasses(html: string, seed = 1): string {
  const next = random(seed);
  const names = new Map<string, string>();
  const taken = new Set<string>();
  const rename = (name: string): string => {
    let renamed = names.get(name);
    while (renamed === undefined || (taken.has(renamed) && names.get(name) !== renamed)) {
      const length = 5 + Math.floor(next() * 4);
      renamed = Array.from({ length }, () => String.fromCharCode((next() < 0.5 ? 65 : 97) + Math.floor(next() * 26))).join("");
      if (taken.has(renamed)) renamed = undefined;
    }
    if (!names.has(name)) {
      names.set(name, renamed);
      taken.add(renamed);
    }
    return renamed;
  };
  return html.replace(CLASS_ATTRIBUTE, (_, lead: string, value: string) => {
    const quote = value[0] === '"' || value[0] === "'" ? value[0] : "";
    const inner = quote ? value.slice(1, -1) : value;
    const renamed = inner.replace(/[^\s]+/g, rename);
    return `${lead}${quote || '"'}${renamed}${quote || '"'}`;
  });
}

/** Every `class` attribute removed. */
export function dropClasses(html: string): string {
  return html.replace(CLASS_ATTRIBUTE, "");
}
