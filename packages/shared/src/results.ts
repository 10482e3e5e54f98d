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
  /** Where the ad leads; absent when the page shows only the click redirect (then in `tracking_link`). */
  link?: string;
  displayed_link?: string;
  /** The engine's click redirect (`/aclk?…`): never the destination itself. */
  tracking_link?: string;
  description?: string;
  source?: string;
  sitelinks?: Link[];
}

export interface AiOverview {
  text_blocks: {
    type: "paragraph" | "list" | "heading";
    snippet?: string;
    /** Words the overview highlights in the snippet. */
    snippet_highlighted_words?: string[];
    /** List items; `title` is the bold lead-in some items start with (`Sunlight is White Light:`). */
    list?: { title?: string; snippet: string }[];
  }[];
  references?: { title: string; link: string; snippet?: string; source?: string; index: number }[];
}

export interface RelatedQuestion {
  question: string;
  snippet?: string;
  /** Items of an answer shown as a list (the snippet is then the list's heading). */
  list?: string[];
  /** Date printed under the answer (`Oct 13, 2025`). */
  date?: string;
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

/**
 * A place of a web results page's local or hotel pack: the local item, with the price the card shows
 * (a price level `$$`, or a hotel's nightly price `$152`) as the reference API's local pack has it.
 */
export interface LocalPackPlace extends LocalPlace {
  price?: string;
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

/** A post of a "Discussions and forums" card: only what the card shows. */
export interface DiscussionAndForum {
  position: number;
  title: string;
  link: string;
  /** The site as the card prints it (`www.quora.com`). */
  source?: string;
  date?: string;
  /** Other facts on the card's line (`51 posts`). */
  extensions?: string[];
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
  local_results?: { places: LocalPackPlace[]; more_locations_link?: string };
  top_stories?: TopStory[];
  discussions_and_forums?: DiscussionAndForum[];
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
  /** The merchant's page: the redirect's `adurl` when the card links through one. */
  link?: string;
  /** The engine's click redirect (`/aclk?…`) when the card links through one. */
  tracking_link?: string;
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
  /** Description text some layouts show under the product. */
  snippet?: string;
  /** Stores the product is compared across, as shown (`"25+"`), and the link to that comparison. */
  number_of_comparisons?: string;
  comparison_link?: string;
}
export interface ShoppingBlocks {
  shopping_results: ShoppingResult[];
}

export interface Seller {
  position: number;
  name: string;
  /** The merchant's offer page: the redirect's `adurl` when the row links through one. */
  link?: string;
  /** The engine's click redirect (`/aclk?…`) when the row links through one. */
  tracking_link?: string;
  base_price?: string;
  extracted_base_price?: number;
  shipping?: string;
  total_price?: string;
  extracted_total_price?: number;
  details?: string;
  /** The merchant's own rating line, e.g. "90% positivos" → 90. */
  positive_reviews_percent?: number;
  /** How many reviews the merchant (not the product) has. */
  reviews?: number;
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
  /** Short attributes under "product details" (brand · burners · width …). */
  extensions?: string[];
  /** Bullet points the page lists beside the images. */
  highlights?: string[];
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
  /** How the upstream scores the typed text itself (client=chrome `google:verbatimrelevance`). */
  verbatim_relevance?: number;
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
