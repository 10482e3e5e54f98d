/**
 * Ways of asking the upstream (DECISIONS.md, Upstream): transport, user agent, headers, cookies and
 * URL form, kept in ONE table per result kind and tried in order until one gives a page we can read.
 *
 * The table is data: `profiles.json` beside this package (the recipes that work as of its
 * `version`, with their sources), or the file `UPSTREAM_PROFILES_FILE` names, validated by the
 * schema below. A recipe dies every month or two (reference/upstream-2026.md §1); changing the
 * file changes the recipe without a release (profile-source.ts re-reads it).
 *
 * Transports, cheapest first: `http` (got: Node's own TLS, which the upstream refuses since
 * 2026-08-23), `impersonate` (impit: a browser's TLS ClientHello and HTTP/2 settings, from a
 * Rust client, no browser), `browser` (a real Chromium, local or remote, that runs the page's
 * JavaScript challenge: browser.ts).
 */
import { validateHeaderName, validateHeaderValue } from "node:http";
import { z } from "zod";
import type { Endpoint, JobParams, ServedLayout } from "@serp/shared";
import { ConfigFileError } from "./config-file.js";
import { kindOf, PROFILE_SETS, type ProfileSet } from "./kinds/index.js";

export { PROFILE_SETS, type ProfileSet };

export const URL_FORMS = [
  "search", // /search with today's kind switches (udm=2 images, udm=28 shopping)
  "search-basic", // /search with the older switches (tbm=isch, tbm=shop) the basic layout knows
  "wml", // /wml/search, the feature-phone layout
  "product-panel", // /search?ibp=oshop&q=<id>&prds=catalogid:<id>,pvt:hg
  "product-legacy", // /shopping/product/<id> and /shopping/product/<id>/online
  "complete-chrome", // /complete/search?client=chrome
  "complete-firefox", // /complete/search?client=firefox
  "complete-toolbar", // /complete/search?output=toolbar (XML)
] as const;
export type UrlForm = (typeof URL_FORMS)[number];

/** The transports a profile may name; each one's sending is in transports.ts. */
export const TRANSPORT_NAMES = ["http", "impersonate", "browser"] as const;
export type TransportName = (typeof TRANSPORT_NAMES)[number];

/** impit's browser profiles (its `Browser` type) that a profile may impersonate. */
export const IMPERSONATED = [
  "chrome", "chrome100", "chrome101", "chrome104", "chrome107", "chrome110", "chrome116", "chrome124", "chrome125",
  "chrome131", "chrome136", "chrome142", "chrome151", "firefox", "firefox128", "firefox133", "firefox135", "firefox144",
] as const;
export type Impersonated = (typeof IMPERSONATED)[number];

/** The browser family a user agent claims, as the upstream reads it; `none` for agents that claim no current browser. */
export function claimedFamily(userAgent: string): "chrome" | "firefox" | "safari" | "none" {
  if (/Firefox\//.test(userAgent)) return "firefox";
  if (/(?:Chrome|Chromium|CriOS|Edg)\//.test(userAgent)) return "chrome";
  if (/Safari\//.test(userAgent) && /Version\//.test(userAgent)) return "safari";
  return "none";
}

/** Whether `check` (one of Node's own header rules: no CR, LF or other control characters in a value) passes. */
const httpRule = (check: (value: string) => void) => (value: string) => {
  try {
    check(value);
    return true;
  } catch {
    return false;
  }
};
const headerName = z
  .string()
  .regex(/^[a-z0-9-]+$/, "header names are lower case")
  .refine(httpRule(validateHeaderName), "not a valid HTTP header name");
/** A value sent as an HTTP header (a header, the cookie, the user agent), checked as HTTP does. */
const headerValue = z.string().refine(
  httpRule((v) => validateHeaderValue("x", v)),
  "not a valid HTTP header value (control characters such as CR or LF are not allowed)",
);

const familyOf = (browser: Impersonated) => (browser.startsWith("firefox") ? "firefox" : "chrome");

const profileSchema = z
  .object({
    transport: z.enum(TRANSPORT_NAMES).meta({ description: "how the request goes out" }),
    /** With `impersonate`: whose TLS and HTTP/2 fingerprint, and (unless `userAgent` is set) headers. */
    browser: z.enum(IMPERSONATED).optional(),
    form: z.enum(URL_FORMS),
    /** Required for `http`. For `impersonate`, unset means the impersonated browser's own agent. */
    userAgent: headerValue.pipe(z.string().min(1)).optional(),
    headers: z.record(headerName, headerValue).default({}),
    cookie: headerValue.default(""),
    /** Why this recipe, with its dated source. */
    note: z.string().optional(),
  })
  .strict()
  .superRefine((p, ctx) => {
    if (p.transport === "http" && !p.userAgent) ctx.addIssue({ code: "custom", path: ["userAgent"], message: "an http profile needs a userAgent" });
    if (p.transport === "impersonate" && !p.browser) {
      ctx.addIssue({ code: "custom", path: ["browser"], message: "an impersonate profile names the browser it impersonates" });
    }
    if (p.transport !== "impersonate" && p.browser) ctx.addIssue({ code: "custom", path: ["browser"], message: "only an impersonate profile takes a browser" });
    // The browser transport is Chromium: its agent may not claim another browser either.
    if (p.transport === "browser" && p.userAgent && !["none", "chrome"].includes(claimedFamily(p.userAgent))) {
      ctx.addIssue({ code: "custom", path: ["userAgent"], message: `claims ${claimedFamily(p.userAgent)} but the browser transport is Chromium` });
    }
    // A browser's TLS under another browser's name is what the upstream refuses first.
    if (p.browser && p.userAgent) {
      const claimed = claimedFamily(p.userAgent);
      if (claimed !== "none" && claimed !== familyOf(p.browser)) {
        ctx.addIssue({
          code: "custom",
          path: ["userAgent"],
          message: `claims ${claimed} but the profile impersonates ${p.browser}: the agent must agree with the TLS fingerprint`,
        });
      }
    }
  });

const profileName = z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, "profile names are lower-case words joined by dashes");

export const profileTableSchema = z
  .object({
    $schema: z.string().optional(),
    /** When these recipes were known to work, e.g. `2026-11`. */
    version: z.string().min(1),
    note: z.string().optional(),
    profiles: z.record(profileName, profileSchema),
    kinds: z.object(Object.fromEntries(PROFILE_SETS.map((k) => [k, z.array(profileName).min(1)])) as Record<ProfileSet, z.ZodArray<typeof profileName>>).strict(),
  })
  .strict()
  .superRefine((t, ctx) => {
    for (const [kind, names] of Object.entries(t.kinds)) {
      names.forEach((name, i) => {
        if (!t.profiles[name]) ctx.addIssue({ code: "custom", path: ["kinds", kind, i], message: `no profile named "${name}"` });
      });
      if (new Set(names).size !== names.length) ctx.addIssue({ code: "custom", path: ["kinds", kind], message: "a profile is listed twice" });
    }
  });

type ProfileData = z.infer<typeof profileSchema>;

export interface Profile extends Readonly<Omit<ProfileData, "headers">> {
  /** Short stable name, reported in each try. */
  name: string;
  headers: Readonly<Record<string, string>>;
}

export interface ProfileTable {
  version: string;
  kinds: Readonly<Record<ProfileSet, readonly Profile[]>>;
}

/** A table that does not validate: each line names the field (`kinds.web-search.2: no profile named "x"`). */
export class ProfileTableError extends ConfigFileError {
  override readonly name = "ProfileTableError";
  constructor(readonly problems: string[]) {
    super(`profile table refused: ${problems.join("; ")}`);
  }
}

/** Validates a parsed table and resolves each kind's names to profiles. Throws ProfileTableError. */
export function profileTable(data: unknown): ProfileTable {
  const parsed = profileTableSchema.safeParse(data);
  if (!parsed.success) {
    throw new ProfileTableError(parsed.error.issues.map((i) => `${i.path.join(".") || "(table)"}: ${i.message}`));
  }
  const { profiles, kinds, version } = parsed.data;
  const byName = new Map(Object.entries(profiles).map(([name, p]) => [name, Object.freeze({ ...p, name }) as Profile]));
  const resolved = Object.fromEntries(Object.entries(kinds).map(([k, names]) => [k, names.map((n) => byName.get(n)!)]));
  return { version, kinds: resolved as unknown as ProfileTable["kinds"] };
}

/** Parses a table file's text (JSON). Throws ProfileTableError. */
export function parseProfileTable(text: string): ProfileTable {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ProfileTableError([`(file): not JSON: ${(error as Error).message}`]);
  }
  return profileTable(data);
}

/** The rungs a job climbs: its kind's own set, or the first of the kind's variants (kinds/) the job takes. */
export function profilesFor(table: ProfileTable, endpoint: Endpoint, params: Pick<JobParams, "device">): readonly Profile[] {
  const variant = kindOf(endpoint).variants?.find((v) => v.when(params));
  return table.kinds[(variant?.set as ProfileSet | undefined) ?? endpoint];
}

/** URL forms of the light page (docs/LAYOUTS.md): the basic layout and the feature-phone one, without the full page's rich blocks. */
export const LIGHT_FORMS: ReadonlySet<UrlForm> = new Set(["search-basic", "wml"]);

/** The layout of the page a profile asks for. */
export function layoutOf(profile: Pick<Profile, "form">): ServedLayout {
  return LIGHT_FORMS.has(profile.form) ? "light" : "full";
}

/** A job's rungs by the layout it asks for: each with `sells` false where it is tried only to tell whether `layout: "any"` would have answered. */
export interface Rung {
  profile: Profile;
  sells: boolean;
}

/**
 * The rungs a job climbs for the layout it asks for (web search, news and images take one; their
 * default, filled in by the job's defaults, is full): `full` its kind's full-page rungs in table
 * order, then the light ones only to find out whether `any` would have answered (never sold);
 * `light` only the light ones; `any` the full ones, then the light ones. A kind that takes no layout
 * climbs its table as it is.
 */
export function rungsFor(table: ProfileTable, endpoint: Endpoint, params: Pick<JobParams, "device" | "layout">): Rung[] {
  const all = profilesFor(table, endpoint, params);
  const { layout } = params;
  if (layout === undefined) return all.map((profile) => ({ profile, sells: true }));
  const full = all.filter((p) => layoutOf(p) === "full");
  const light = all.filter((p) => layoutOf(p) === "light");
  if (layout === "light") return light.map((profile) => ({ profile, sells: true }));
  return [...full.map((profile) => ({ profile, sells: true })), ...light.map((profile) => ({ profile, sells: layout === "any" }))];
}

/** Every profile a table names, once each, in table order. */
export function allProfiles(table: ProfileTable): Profile[] {
  return [...new Set(Object.values(table.kinds).flat())];
}

/** `Accept-Language` for the job's language (`en` → `en-US,en;q=0.9`, `de` → `de,en;q=0.8`). */
export function acceptLanguage(language: string): string {
  return language === "en" ? "en-US,en;q=0.9" : `${language},en;q=0.8`;
}
