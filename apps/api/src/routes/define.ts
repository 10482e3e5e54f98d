/**
 * A route declared once: method, path, request schemas and responses, as the OpenAPI document
 * shows them (unkey's `createRoute`, kept on Express and zod-to-openapi). The same declaration
 * validates the request (params, query, headers and the JSON body), types the answer (a handler
 * replies with a body its declared response schema accepts, or the build fails: unkey's typed
 * `c.json`) and mounts the handler, and its table hands it to the document, so what a route
 * accepts and answers and what the document says cannot drift apart.
 */
import type { RouteConfig } from "@asteasolutions/zod-to-openapi";
import type { Request, RequestHandler, Response, Router } from "express";
import type { z } from "zod";
import { fieldIssues, invalidRequest } from "../errors.js";

type Part = "params" | "query" | "headers" | "body";
/** The parts a request carries before its body is read (what `validate` checks). */
const HEAD_PARTS = ["params", "query", "headers"] as const;

/** The refusal of a request whose `part` fails its declared schema. */
export type Refusal = (error: z.ZodError, req: Request) => Error;
type Refusals = Partial<Record<Part, Refusal>>;

export type RouteSpec = RouteConfig & {
  /**
   * The refusal of a request that fails a declared schema, per part; by default the job API's
   * `invalid_request` per field. A refusal that needs the app (the compatibility search's location
   * look-up) is given where the handler is, to `handle`.
   */
  invalid?: Refusals;
};

type Json<T> = T extends { content: { "application/json": { schema: infer Z } } } ? (Z extends z.ZodType ? Z : never) : never;
type Schema<S, K extends Part> = S extends { request: infer R }
  ? K extends "body"
    ? R extends { body: infer B }
      ? Json<B>
      : never
    : R extends { [P in K]: infer T }
      ? T extends z.ZodType
        ? T
        : never
      : never
  : never;
type Declared<S, K extends Part> = [Schema<S, K>] extends [never] ? undefined : z.output<Schema<S, K>>;

/** The request's params, query, headers and JSON body as the declared schemas parsed them. */
export type Input<S> = { [K in Part]: Declared<S, K> };

/** The success statuses a route declares a JSON body for, each with the body its schema accepts. */
type Answers<S> = S extends { responses: infer R }
  ? { [C in keyof R as C extends 200 | 201 | 202 ? C : never]: [Json<R[C]>] extends [never] ? never : z.input<Json<R[C]>> }
  : never;

/** Answers with `body` at `status`: the build fails unless the route declares that status with a schema `body` fits. */
export type Reply<S> = <C extends keyof Answers<S>>(status: C, body: Answers<S>[C]) => void;

export interface Route<S extends RouteSpec> {
  readonly spec: S;
  /** Express's form of the path (`/v1/jobs/:jobId` for `/v1/jobs/{jobId}`). */
  readonly path: string;
  /** Middleware that validates params, query and headers before the rest of the chain runs (a bad header is refused before the body is read). */
  readonly validate: RequestHandler;
  /** The handler, given the parsed input (the body too) and the typed reply; `invalid` adds refusals that need the app. */
  handle(fn: (input: Input<S>, reply: Reply<S>, req: Request, res: Response) => Promise<void> | void, invalid?: Refusals): RequestHandler;
  /**
   * The typed reply on `res` alone, for a handler that reads its request itself (the compatibility
   * archive's `output`, worded as every route of its surface words it; the MCP transport's messages).
   */
  replyOn(res: Response): Reply<S>;
  /** Mounts the chain on the router at this method and path. */
  mount(router: Router, ...handlers: RequestHandler[]): void;
}

/** The routes one file serves, in the order the document lists them, and the webhooks it sends. */
export class RouteTable {
  readonly routes: RouteConfig[] = [];
  readonly webhooks: RouteConfig[] = [];

  define<const S extends RouteSpec>(spec: S): Route<S> {
    const { invalid: declared, ...config } = spec;
    this.routes.push(config);
    const schemaOf = (part: Part): z.ZodType | undefined =>
      (part === "body" ? (spec.request?.body?.content["application/json"] as { schema?: unknown } | undefined)?.schema : spec.request?.[part]) as z.ZodType | undefined;
    const parse = (req: Request, parts: readonly Part[], invalid?: Refusals): Partial<Input<S>> => {
      const out: Record<string, unknown> = {};
      for (const part of parts) {
        const schema = schemaOf(part);
        if (!schema) continue;
        const parsed = schema.safeParse(part === "headers" ? headersOf(req, schema) : req[part]);
        if (!parsed.success) {
          const refuse = invalid?.[part] ?? declared?.[part];
          throw refuse ? refuse(parsed.error, req) : invalidRequest(fieldIssues(parsed.error));
        }
        out[part] = parsed.data;
      }
      return out as Partial<Input<S>>;
    };
    const replyOn = (res: Response) => ((status: number, body: unknown) => void res.status(status).json(body)) as Reply<S>;
    const path = spec.path.replace(/\{([^}]+)\}/g, ":$1");
    return {
      spec,
      path,
      validate: (req, _res, next) => {
        parse(req, HEAD_PARTS);
        next();
      },
      handle: (fn, invalid) => (req, res) => {
        const input = parse(req, [...HEAD_PARTS, "body"], invalid) as Input<S>;
        return fn(input, replyOn(res), req, res);
      },
      replyOn,
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
