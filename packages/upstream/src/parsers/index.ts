import { ENDPOINTS, type BlocksByEndpoint, type Endpoint } from "@serp/shared";
import { kindOf } from "../kinds/index.js";
import { parseAutocomplete } from "./autocomplete.js";
import { parseImages } from "./images.js";
import { parseLocal } from "./local.js";
import { parseNews } from "./news.js";
import { parseProductInfo } from "./product-info.js";
import { parseSellers } from "./product-sellers.js";
import { parseShopping } from "./shopping.js";
import { parseWebSearch } from "./web/index.js";

/** One pure parser per result kind (each kind's module names its own): the upstream's body text in, typed blocks out. */
export const PARSERS = Object.fromEntries(ENDPOINTS.map((e) => [e, kindOf(e).parse])) as { [E in Endpoint]: (body: string) => BlocksByEndpoint[E] };

export { parseAutocomplete, parseImages, parseLocal, parseNews, parseProductInfo, parseSellers, parseShopping, parseWebSearch };
