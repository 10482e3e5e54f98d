/**
 * A job's fields in its Redis hash, derived from its schema (jobSchema in @serp/shared): each field
 * of the job is the hash field of the same name, as text (numbers in decimal, true as "1", objects
 * and anything else as JSON), and a field with nothing to say (null, absent, false) is no hash field
 * at all. A new job field is therefore written and read back with no change here. The format is
 * the one records have always been stored in (test/job-hash.test.ts reads hashes written before
 * this module).
 */
import type { z } from "zod";
import { jobSchema, type Job } from "@serp/shared";

/** A field stored under another name (the records' name for it). */
const HASH_NAMES: Partial<Record<keyof Job, string>> = { cacheMaxAgeSeconds: "cacheMaxAge" };

/**
 * A field shown only beside another: cacheHit tells how a cache opt-in went, so a job has it (false
 * when its hash has no such field) exactly when it has cacheMaxAgeSeconds.
 */
const BESIDE: Partial<Record<keyof Job, keyof Job>> = { cacheHit: "cacheMaxAgeSeconds" };

/** How a field's value is written as text. */
type Form = "text" | "number" | "flag" | "json";
/** What a hash without the field (or with it empty) reads as: the schema's empty value, or nothing. */
type Empty = "null" | "omitted" | "required";

interface Field {
  name: keyof Job;
  /** Its name in the hash. */
  hash: string;
  form: Form;
  empty: Empty;
}

/** The field's form and empty value, read from its schema (optional and nullable wrap the value's own schema). */
function fieldOf(name: keyof Job, schema: z.ZodType): Field {
  let empty: Empty = "required";
  let inner = schema;
  for (;;) {
    const { type } = inner.def;
    if (type !== "optional" && type !== "nullable") break;
    if (empty === "required") empty = type === "nullable" ? "null" : "omitted";
    inner = (inner.def as unknown as { innerType: z.ZodType }).innerType;
  }
  const type = inner.def.type;
  const form: Form = type === "string" || type === "enum" ? "text" : type === "number" ? "number" : type === "boolean" ? "flag" : "json";
  return { name, hash: HASH_NAMES[name] ?? name, form, empty };
}

/** Every job field, in the schema's order (the order the job's JSON lists them). */
const FIELDS: readonly Field[] = Object.entries(jobSchema.shape).map(([name, schema]) => fieldOf(name as keyof Job, schema as z.ZodType));

/** The job's hash fields, flat (name, value, …) as the scripts take them: none for an empty value. */
export function jobToHash(job: Job): string[] {
  return FIELDS.flatMap(({ name, hash }) => {
    const value: unknown = job[name];
    if (value === null || value === undefined || value === false) return [];
    return [hash, value === true ? "1" : typeof value === "object" ? JSON.stringify(value) : String(value)];
  });
}

/** A value as its form reads it; a required field missing from the hash reads as its form's zero. */
function read(form: Form, text: string | undefined): unknown {
  if (form === "number") return Number(text ?? 0);
  if (form === "flag") return text === "1";
  if (form === "json") return JSON.parse(text ?? "{}");
  return text;
}

/** The job from its hash (as HGETALL returns it): the other fields of the record are the caller's. */
export function jobFromHash(h: Record<string, string>): Job {
  const job: Record<string, unknown> = {};
  for (const { name, hash, form, empty } of FIELDS) {
    const text = h[hash];
    const beside = BESIDE[name];
    if (beside !== undefined) {
      if (job[beside] !== undefined) job[name] = read(form, text);
    } else if (empty === "required") job[name] = read(form, text);
    else if (text) job[name] = read(form, text);
    else if (empty === "null") job[name] = null;
  }
  // The hash is the store's own writing (jobToHash and the scripts), not input to check.
  return job as Job;
}
