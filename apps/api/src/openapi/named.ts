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

/**
 * Compile-time check that a schema's output and a TypeScript type describe the same shape: each
 * way assignable, and the same member names (so an optional field missing on one side shows).
 * Use: `assert<Same<z.output<typeof schema>, Type>>();`
 */
type Mutual<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export type Same<A, B> = Mutual<A, B> extends true ? Mutual<keyof A, keyof B> : false;
export const assert = <T extends true>() => undefined as unknown as T;
