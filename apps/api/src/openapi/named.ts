import { zodToOpenAPIRegistry } from "@asteasolutions/zod-to-openapi";
import type { z } from "zod";
import type { Endpoint } from "@serp/shared";

/**
 * Names a schema as a component (`#/components/schemas/{name}`) without cloning it, so the shared
 * request schemas are referenced by name wherever they are nested (jobRequestSchema's variants).
 */
export function named<T extends z.ZodType>(schema: T, name: string): T {
  if (!zodToOpenAPIRegistry.has(schema)) zodToOpenAPIRegistry.add(schema, { _internal: { refId: name } });
  return schema;
}

/** `web-shopping-product` → `WebShoppingProduct`. */
export const pascal = (endpoint: Endpoint) =>
  endpoint.split("-").map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
