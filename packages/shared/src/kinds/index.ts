/**
 * The eight result kinds (SPEC §2.1), each in its own module, listed once. The endpoint list, the
 * params schemas, the job request union, the defaults, the credits and the result types derive from
 * this list; its order is the order of the endpoints everywhere (the OpenAPI unions, the MCP tools).
 */
import { webAutocomplete } from "./web-autocomplete.js";
import { webImages } from "./web-images.js";
import { webLocal } from "./web-local.js";
import { webNews } from "./web-news.js";
import { webSearch } from "./web-search.js";
import { webShoppingProductInfo } from "./web-shopping-product-info.js";
import { webShoppingProduct } from "./web-shopping-product.js";
import { webShoppingSearch } from "./web-shopping-search.js";

export const KINDS = {
  "web-shopping-search": webShoppingSearch,
  "web-shopping-product": webShoppingProduct,
  "web-shopping-product-info": webShoppingProductInfo,
  "web-search": webSearch,
  "web-images": webImages,
  "web-news": webNews,
  "web-local": webLocal,
  "web-autocomplete": webAutocomplete,
} as const;

export type { Kind } from "./kind.js";
/** Each kind's schemas and inferred types (NewsItem, WebSearchBlocks, …), for the parsers and the OpenAPI document. */
export * from "./web-autocomplete.js";
export * from "./web-images.js";
export * from "./web-local.js";
export * from "./web-news.js";
export * from "./web-search.js";
export * from "./web-shopping-product-info.js";
export * from "./web-shopping-product.js";
export * from "./web-shopping-search.js";
