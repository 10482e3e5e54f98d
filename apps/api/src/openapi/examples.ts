/**
 * One example body of POST /v1/jobs per endpoint, for the docs page's "Try it out": each sets its
 * endpoint and realistic params, so sending it as it is runs a real search (test/openapi/examples
 * posts every one to a test stack). Swagger UI would otherwise make one up from the schema, with a
 * language matching the pattern (`mG`), a random uule and no endpoint: a 400.
 */
import type { z } from "zod";
import type { Endpoint, jobRequestSchema } from "@serp/shared";

/** A body as a client sends it (defaults not filled in), checked against the schema's input type. */
type Example<E extends Endpoint> = { summary: string; value: Extract<z.input<typeof jobRequestSchema>, { endpoint: E }> };

export const JOB_REQUEST_EXAMPLES: { [E in Endpoint]: Example<E> } = {
  "web-search": {
    summary: "Web search, live, from a city",
    value: { endpoint: "web-search", queue: "live", params: { query: "coffee", country: "us", language: "en", location: "Austin,Texas,United States", device: "desktop" } },
  },
  "web-news": {
    summary: "News, live",
    value: { endpoint: "web-news", queue: "live", params: { query: "virtual reality experience", country: "us", language: "en" } },
  },
  "web-images": {
    summary: "Images, live, in Japanese",
    value: { endpoint: "web-images", queue: "live", params: { query: "hatsune miku", country: "jp", language: "ja" } },
  },
  "web-local": {
    summary: "Local businesses, live, from a city",
    value: { endpoint: "web-local", queue: "live", params: { query: "coffee", location: "Austin,Texas,United States" } },
  },
  "web-shopping-search": {
    summary: "Shopping, live, a barcode in Brazil",
    value: { endpoint: "web-shopping-search", queue: "live", params: { query: "889894929969", country: "br", language: "pt" } },
  },
  "web-shopping-product": {
    summary: "A product's sellers, on the fast queue (202, then poll)",
    value: { endpoint: "web-shopping-product", queue: "fast", params: { product_id: "13239497633151178800", country: "br", language: "pt" } },
  },
  "web-shopping-product-info": {
    summary: "A product's details, live",
    value: { endpoint: "web-shopping-product-info", queue: "live", params: { product_id: "13239497633151178800", country: "br", language: "pt" } },
  },
  "web-autocomplete": {
    summary: "Autocomplete suggestions, live",
    value: { endpoint: "web-autocomplete", queue: "live", params: { query: "cheesecake", language: "en" } },
  },
};
