import type { BlocksByEndpoint, Endpoint } from "@serp/shared";
import { parseAutocomplete } from "./autocomplete.js";
import { parseImages } from "./images.js";
import { parseLocal } from "./local.js";
import { parseNews } from "./news.js";
import { parseProductInfo } from "./product-info.js";
import { parseSellers } from "./product-sellers.js";
import { parseShopping } from "./shopping.js";
import { parseWebSearch } from "./web/index.js";

/** One pure parser per result kind: the upstream's body text in, typed blocks out. */
export const PARSERS: { [E in Endpoint]: (body: string) => BlocksByEndpoint[E] } = {
  "web-search": parseWebSearch,
  "web-news": parseNews,
  "web-local": parseLocal,
  "web-images": parseImages,
  "web-shopping-search": parseShopping,
  "web-shopping-product": parseSellers,
  "web-shopping-product-info": parseProductInfo,
  "web-autocomplete": parseAutocomplete,
};

export { parseAutocomplete, parseImages, parseLocal, parseNews, parseProductInfo, parseSellers, parseShopping, parseWebSearch };
