/**
 * Result shapes. News and local items are exactly SPEC §2.5; the other kinds use the reference
 * API's block and field names (DECISIONS.md, Results). A field the page does not show is left out.
 */
export interface SearchParameters {
  engine: string;
  query: string;
  country: string;
  language: string;
  page: number;
  device?: string;
  location?: string;
  uule?: string;
  product_id?: string;
}

export interface Link {
  title: string;
  link: string;
}

export interface OrganicResult {
  position: number;
  title: string;
  link: string;
  displayed_link?: string;
  source?: string;
  snippet?: string;
  date?: string;
  sitelinks?: { inline?: Link[]; expanded?: (Link & { snippet?: string })[] };
}

export interface AdResult {
  position: number;
  block_position: "top" | "bottom" | "middle" | "right";
  title: string;
  link: string;
  displayed_link?: string;
  tracking_link?: string;
  description?: string;
  source?: string;
  sitelinks?: Link[];
}

export interface AiOverview {
  text_blocks: { type: "paragraph" | "list" | "heading"; snippet?: string; list?: { snippet: string }[] }[];
  references?: { title: string; link: string; source?: string; index: number }[];
}

export interface RelatedQuestion {
  question: string;
  snippet?: string;
  title?: string;
  link?: string;
  displayed_link?: string;
}

/** One business card: SPEC §2.5 local item (shared by local packs and the local results page). */
export interface LocalPlace {
  position: number;
  title: string;
  rating?: number;
  reviews?: number;
  type?: string;
  address?: string;
  phone?: string | null;
  hours?: string;
  website?: string;
}

export interface TopStory {
  title: string;
  link: string;
  source?: string;
  date?: string;
  thumbnail?: string;
}

export interface KnowledgeGraph {
  title: string;
  type?: string;
  description?: string;
  source?: { name: string; link?: string };
  website?: string;
  /** Attribute rows (`Born: …`) in snake_case keys. */
  attributes?: Record<string, string>;
}

export interface RelatedSearch {
  query: string;
  link: string;
}

export interface WebSearchBlocks {
  organic_results: OrganicResult[];
  ads?: AdResult[];
  ai_overview?: AiOverview;
  related_questions?: RelatedQuestion[];
  local_results?: { places: LocalPlace[]; more_locations_link?: string };
  top_stories?: TopStory[];
  knowledge_graph?: KnowledgeGraph;
  related_searches?: RelatedSearch[];
  search_information?: { total_results?: number; time_taken_displayed?: number; query_displayed?: string };
}

export interface NewsItem {
  position: number;
  title: string;
  link: string;
  source: string;
  date: string;
  snippet: string | null;
  thumbnail?: string;
}
export interface NewsBlocks {
  news_results: NewsItem[];
}

export interface LocalBlocks {
  local_results: LocalPlace[];
}

export interface ImageResult {
  position: number;
  title?: string;
  link?: string;
  source?: string;
  original?: string;
  original_width?: number;
  original_height?: number;
  thumbnail?: string;
}
export interface ImagesBlocks {
  images_results: ImageResult[];
}

export interface ShoppingResult {
  position: number;
  title: string;
  product_id?: string;
  product_link?: string;
  link?: string;
  source?: string;
  price?: string;
  extracted_price?: number;
  old_price?: string;
  extracted_old_price?: number;
  rating?: number;
  reviews?: number;
  delivery?: string;
  extensions?: string[];
  thumbnail?: string;
}
export interface ShoppingBlocks {
  shopping_results: ShoppingResult[];
}

export interface Seller {
  position: number;
  name: string;
  link?: string;
  base_price?: string;
  extracted_base_price?: number;
  shipping?: string;
  total_price?: string;
  extracted_total_price?: number;
  details?: string;
}
export interface SellersBlocks {
  product_title?: string;
  sellers: Seller[];
}

export interface ProductInfo {
  product_id?: string;
  title: string;
  description?: string;
  specs?: Record<string, string>;
  images?: string[];
  rating?: number;
  reviews?: number;
  prices?: string[];
}
export interface ProductInfoBlocks {
  product_results: ProductInfo;
}

export interface Suggestion {
  value: string;
  relevance?: number;
  type?: string;
}
export interface AutocompleteBlocks {
  suggestions: Suggestion[];
}

export interface BlocksByEndpoint {
  "web-search": WebSearchBlocks;
  "web-news": NewsBlocks;
  "web-local": LocalBlocks;
  "web-images": ImagesBlocks;
  "web-shopping-search": ShoppingBlocks;
  "web-shopping-product": SellersBlocks;
  "web-shopping-product-info": ProductInfoBlocks;
  "web-autocomplete": AutocompleteBlocks;
}

export type JobResult = { search_parameters: SearchParameters } & Record<string, unknown>;
