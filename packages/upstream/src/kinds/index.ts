/**
 * The result kinds the upstream serves, each once: adding a kind is its module and a line here.
 * The table is typed by endpoint, so a kind left out (or one the shared endpoints do not know) fails
 * the typecheck. Read by the generic code: `buildUrl` (urls.ts), `profilesFor` and the table schema
 * (profiles.ts), `classify`, `parsePage` and `coverage` (coverage.ts), the scrape loop's judgement
 * (scrape.ts) and `PARSERS` (below).
 */
import { ENDPOINTS, type BlocksByEndpoint, type Endpoint } from "@serp/shared";
import type { UpstreamKind } from "./kind.js";
import { webAutocomplete } from "./web-autocomplete.js";
import { webImages } from "./web-images.js";
import { webLocal } from "./web-local.js";
import { webNews } from "./web-news.js";
import { webSearch } from "./web-search/index.js";
import { webShoppingProductInfo } from "./web-shopping-product-info.js";
import { webShoppingProduct } from "./web-shopping-product.js";
import { webShoppingSearch } from "./web-shopping-search.js";

export type { UpstreamKind } from "./kind.js";

export const KINDS = {
  "web-search": webSearch,
  "web-news": webNews,
  "web-images": webImages,
  "web-local": webLocal,
  "web-shopping-search": webShoppingSearch,
  "web-shopping-product": webShoppingProduct,
  "web-shopping-product-info": webShoppingProductInfo,
  "web-autocomplete": webAutocomplete,
} as const satisfies { [E in Endpoint]: UpstreamKind<E> };

/** A kind by endpoint, typed by it (the table's own entries keep their literal types for `ProfileSet`). */
export function kindOf<E extends Endpoint>(endpoint: E): UpstreamKind<E> {
  return KINDS[endpoint] as unknown as UpstreamKind<E>;
}

type VariantSet<K> = K extends { variants: readonly { set: infer S }[] } ? S : never;
/** The keys of the profile table: each kind's own set (its endpoint), and the variants kinds declare. */
export type ProfileSet = Endpoint | VariantSet<(typeof KINDS)[Endpoint]>;

/** Every profile-table key, in the table's order: the endpoints', then the variants'. */
export const PROFILE_SETS: readonly ProfileSet[] = [...ENDPOINTS, ...ENDPOINTS.flatMap((e) => kindOf(e).variants?.map((v) => v.set as ProfileSet) ?? [])];

/** One pure parser per result kind, as each kind's module names it: the upstream's body text in, typed blocks out. */
export const PARSERS = Object.fromEntries(ENDPOINTS.map((e) => [e, kindOf(e).parse])) as { [E in Endpoint]: (body: string) => BlocksByEndpoint[E] };

export { parseAutocomplete } from "./web-autocomplete.js";
export { parseImages } from "./web-images.js";
export { parseLocal } from "./web-local.js";
export { parseNews } from "./web-news.js";
export { parseProductInfo } from "./web-shopping-product-info.js";
export { parseSellers } from "./web-shopping-product.js";
export { parseShopping } from "./web-shopping-search.js";
export { parseWebSearch } from "./web-search/index.js";
