/**
 * Every file and function the README and docs/ name exists (issue 28: the README once named a
 * `defineRoute` that was not there). Code spans are read from the markdown; a span that looks like
 * a project path must exist, and one that looks like a code identifier (`camelCase`, `snake_case()`,
 * `name()`) must occur in the project's source.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const root = join(import.meta.dirname, "../..");
const DOCS = ["README.md", ...readdirSync(join(root, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];
const PATH_ROOTS = /^(apps|packages|scripts|test|bench|docs|deploy)\//;
const ROOT_FILES = /^(\.env\.example|docker-compose\.yml|Dockerfile|jest\.config\.js|package\.json|tsconfig\.json)$/;
/** `likeThis`, `likeThis()`, `like_this()`: words a reader would search the code for. */
const IDENTIFIER = /^([a-z][a-z0-9]*(?:[A-Z][a-zA-Z0-9]*)+|[a-zA-Z_][\w]*\(\))$/;

/**
 * The code spans of a page, and the camelCase words of its plain fenced blocks (the layout sketches;
 * blocks tagged with a language, such as `sh` or `json`, are examples, not names of our code).
 */
function codeSpans(markdown: string): string[] {
  const plainBlocks = [...markdown.matchAll(/^```\n([\s\S]*?)^```/gm)].flatMap((m) => m[1]!.match(/\b[a-z]+[A-Z]\w*\b/g) ?? []);
  const withoutBlocks = markdown.replace(/^```[\s\S]*?^```/gm, "");
  return [...[...withoutBlocks.matchAll(/`([^`\n]+)`/g)].map((m) => m[1]!.trim()), ...plainBlocks];
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name.startsWith(".") || name === "dist") continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) sourceFiles(path, out);
    else if (/\.(ts|mts|mjs|js|lua|json|yaml|yml)$/.test(name)) out.push(path);
  }
  return out;
}

const source = ["apps", "packages", "scripts", "test", "bench", "deploy"]
  .filter((d) => existsSync(join(root, d)))
  .flatMap((d) => sourceFiles(join(root, d)))
  .filter((f) => !f.startsWith(join(root, "test/docs")))
  .map((f) => readFileSync(f, "utf8"))
  .join("\n");

describe.each(DOCS)("%s", (doc) => {
  const spans = codeSpans(readFileSync(join(root, doc), "utf8"));

  test("names project files that exist", () => {
    const paths = spans
      .map((s) => s.replace(/[:#].*$/, "").replace(/[),.;]+$/, ""))
      .filter((s) => (PATH_ROOTS.test(s) || ROOT_FILES.test(s)) && !/[<>*{}\s|…]/.test(s));
    const missing = paths.filter((p) => !existsSync(join(root, p)));
    expect(missing).toEqual([]);
  });

  test("names functions and identifiers the code has", () => {
    const identifiers = spans.filter((s) => IDENTIFIER.test(s)).map((s) => s.replace(/\(\)$/, ""));
    const missing = [...new Set(identifiers)].filter((id) => !new RegExp(`\\b${id}\\b`).test(source));
    expect(missing).toEqual([]);
  });
});

test("the check finds what it looks for", () => {
  // Guards against a check that cannot fail: a made-up name and path are reported.
  expect(codeSpans("see `noSuchFunctionHere()` and `apps/none.ts`\n```\nwith madeUp here\n```\n```sh\nnpm run someScript\n```")).toEqual(["noSuchFunctionHere()", "apps/none.ts", "madeUp"]);
  expect(IDENTIFIER.test("defineRoute")).toBe(true);
  expect(IDENTIFIER.test("SPEC")).toBe(false);
  expect(/\bdefineRouteXyz\b/.test(source)).toBe(false);
  expect(relative(root, join(root, "README.md"))).toBe("README.md");
});
