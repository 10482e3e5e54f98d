/**
 * A route declared once: method, path, request schemas and responses, as the OpenAPI document
 * shows them (unkey's `createRoute`, kept on Express and zod-to-openapi). The same declaration
 * validates the request and mounts the handler, and its table hands it to the document, so what a
 * route accepts and what the document says it accepts cannot drift apart.
 */
import type { RouteConfig } from "@asteasolutions/zod-to-openapi";
import type { Request, RequestHandler, Response, Router } from "express";
import type { z } from "zod";
import { fieldIssues, invalidRequest } from "../errors.js";

type Part = "params" | "query" | "headers";
const PARTS: Part[] = ["params", "query", "headers"];

export type RouteSpec = RouteConfig & {
  /**
   * false when the handler validates instead: the compatibility routes, whose refusals keep the
   * reference API's wording (the search parses with its declared schema, then looks the location up
   * in the app's list).
   */
  validate?: false;
  /** The refusal of a request that fails a declared schema; by default the job API's `invalid_request` per field. */
  invalid?: (part: Part, error: z.ZodError, req: Request) => Error;
};

type Declared<S, K extends Part> = S extends { request: infer R } ? (R extends { [P in K]: infer T } ? (T extends z.ZodType ? z.output<T> : undefined) : undefined) : undefined;

/** The request's params, query and headers as the declared schemas parsed them. */
export type Input<S> = { [K in Part]: Declared<S, K> };

export interface Route<S extends RouteSpec> {
  readonly spec: S;
  /** Express's form of the path (`/v1/jobs/:jobId` for `/v1/jobs/{jobId}`). */
  readonly path: string;
  /** Parses the declared params, query and headers; throws the route's refusal. */
  input(req: Request): Input<S>;
  /** Middleware that validates before the rest of the chain runs (a bad header is refused before the body is read). */
  readonly validate: RequestHandler;
  /** The handler, given the parsed input. */
  handle(fn: (input: Input<S>, req: Request, res: Response) => Promise<void> | void): RequestHandler;
  /** Mounts the chain on the router at this method and path. */
  mount(router: Router, ...handlers: RequestHandler[]): void;
}

/** The routes one file serves, in the order the document lists them, and the webhooks it sends. */
export class RouteTable {
  readonly routes: RouteConfig[] = [];
  readonly webhooks: RouteConfig[] = [];

  define<const S extends RouteSpec>(spec: S): Route<S> {
    const { validate, invalid, ...config } = spec;
    this.routes.push(config);
    const refuse = invalid ?? ((_part: Part, error: z.ZodError, _req: Request) => invalidRequest(fieldIssues(error)));
    const input = (req: Request): Input<S> => {
      const out: Record<string, unknown> = {};
      for (const part of PARTS) {
        const schema = spec.request?.[part] as z.ZodType | undefined;
        if (!schema || validate === false) continue;
        const parsed = schema.safeParse(part === "headers" ? headersOf(req, schema) : req[part]);
        if (!parsed.success) throw refuse(part, parsed.error, req);
        out[part] = parsed.data;
      }
      return out as Input<S>;
    };
    const path = spec.path.replace(/\{([^}]+)\}/g, ":$1");
    return {
      spec,
      path,
      input,
      validate: (req, _res, next) => {
        input(req);
        next();
      },
      handle: (fn) => (req, res) => fn(input(req), req, res),
      mount: (router, ...handlers) => {
        router[spec.method]!(path, ...handlers);
      },
    };
  }

  /** A request this service sends (a webhook): documented, never served. */
  webhook(config: RouteConfig): void {
    this.webhooks.push(config);
  }
}

/** The declared headers, read by name (Express keeps them lower-cased). */
function headersOf(req: Request, schema: z.ZodType): Record<string, string | undefined> {
  const shape = (schema as unknown as { shape?: Record<string, unknown> }).shape ?? {};
  return Object.fromEntries(Object.keys(shape).map((name) => [name, req.get(name)]));
}
