import { countryOfLocationName, type Country } from "./countries.js";
import type { JobParams } from "./job.js";
import { KINDS } from "./kinds/index.js";
import type { JobRequestInput } from "./schemas.js";

/**
 * Fills the defaults: country and language, then the kind's own (page, device: see ./kinds).
 * `countryOfLocation` is the location service's answer (geotargets data when configured); a
 * location whose country is not one a job may name leaves the default `us`.
 */
export function withDefaults(
  req: JobRequestInput,
  countryOfLocation: (name: string) => Country | undefined = countryOfLocationName,
): JobParams {
  const p = req.params as Partial<JobParams>;
  const country = p.country ?? (p.location ? countryOfLocation(p.location) : undefined) ?? "us";
  const out: JobParams = { ...p, country, language: p.language ?? "en" };
  const defaults: Partial<JobParams> = KINDS[req.endpoint].defaults ?? {};
  for (const name of Object.keys(defaults) as (keyof JobParams)[]) Object.assign(out, { [name]: out[name] ?? defaults[name] });
  return out;
}
