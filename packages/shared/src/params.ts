import { countryOfLocationName, type Country } from "./countries.js";
import type { Endpoint } from "./endpoints.js";
import type { JobRequestInput } from "./schemas.js";

/** A job's params with every default filled (SPEC §2.2): what the worker uses and the job shows. */
export interface JobParams {
  query?: string;
  product_id?: string;
  country: Country;
  language: string;
  page?: number;
  device?: "desktop" | "mobile";
  location?: string;
  uule?: string;
}

const PAGED: ReadonlySet<Endpoint> = new Set([
  "web-shopping-search", "web-search", "web-images", "web-news", "web-local",
]);

/**
 * Fills the defaults. `countryOfLocation` is the location service's answer (geotargets data when
 * configured); a location whose country is not one a job may name leaves the default `us`.
 */
export function withDefaults(
  req: JobRequestInput,
  countryOfLocation: (name: string) => Country | undefined = countryOfLocationName,
): JobParams {
  const p = req.params as Partial<JobParams>;
  const country = p.country ?? (p.location ? countryOfLocation(p.location) : undefined) ?? "us";
  const out: JobParams = { ...p, country, language: p.language ?? "en" };
  if (PAGED.has(req.endpoint)) out.page = p.page ?? 1;
  if (req.endpoint === "web-search") out.device = p.device ?? "desktop";
  return out;
}
