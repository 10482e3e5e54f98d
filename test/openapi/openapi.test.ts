/**
 * The OpenAPI document: valid 3.1 in shape, covering every route the Express app serves (walked
 * from app.router), served at /openapi.json without a key, with the interactive page at /docs
 * whose assets all come from this server; and the running API answers in the documented shapes.
 */
import request from "supertest";
import type { Express } from "express";
import { buildOpenApiDocument, type OpenApiDocument } from "../../apps/api/src/openapi/document.js";
import { RESULT_SCHEMAS, accountView, compatAccount, compatErrorBody, compatSearchResponse, errorBody, jobAccepted, jobResponse, jsonRpcError } from "../../apps/api/src/openapi/schemas.js";
import { fixturesAvailable, startStack, type Stack } from "../support/stack.js";

/** Internals that are not part of the API: the docs page's own files and the queue dashboard. */
const IGNORED = [/^\/docs\/(assets|init\.js)/, /^\/admin\/queues(\/|$)/];
const METHODS = ["get", "put", "post", "delete", "options", "head", "patch", "trace"] as const;

interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
  rawPath?: string | string[] | RegExp;
}

/** Every (method, path) the app routes, walking mounted routers (Express 5: app.router.stack). */
function appRoutes(app: Express): { method: string; path: string }[] {
  const out: { method: string; path: string }[] = [];
  const join = (a: string, b: string) => (a + (b === "/" ? "" : b)).replace(/\/{2,}/g, "/") || "/";
  const walk = (stack: Layer[], prefix: string) => {
    for (const layer of stack) {
      if (layer.route) {
        for (const p of [layer.route.path].flat()) {
          for (const method of Object.keys(layer.route.methods).filter((m) => layer.route!.methods[m])) {
            out.push({ method, path: join(prefix, p) });
          }
        }
      } else if (layer.handle?.stack) {
        const mounts = layer.rawPath === undefined ? ["/"] : [layer.rawPath].flat();
        for (const mount of mounts) walk(layer.handle.stack, join(prefix, String(mount)));
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, "");
  return out;
}

/** Express `/a/:id{.json}` and OpenAPI `/a/{id}` both become `/a/{}` (optional parts dropped). */
const canonicalExpress = (p: string) => p.replace(/\{[^}]*\}/g, "").replace(/[:*][A-Za-z_$][\w$]*/g, "{}").replace(/(.)\/$/, "$1");
const canonicalOpenApi = (p: string) => p.replace(/\{[^}]+\}/g, "{}").replace(/(.)\/$/, "$1");

function documentedOperations(doc: OpenApiDocument): Map<string, Set<string>> {
  const ops = new Map<string, Set<string>>();
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    const methods = METHODS.filter((m) => (item as Record<string, unknown>)[m]);
    ops.set(canonicalOpenApi(path), new Set(methods));
  }
  return ops;
}

describe("OpenAPI document", () => {
  let stack: Stack;
  let doc: OpenApiDocument;
  beforeAll(async () => {
    stack = await startStack({});
    doc = (await request(stack.api.app).get("/openapi.json")).body as OpenApiDocument;
  });
  afterAll(() => stack.close());

  test("is served at /openapi.json without a key, as generated", async () => {
    const res = await request(stack.api.app).get("/openapi.json");
    expect(res.status).toBe(200);
    expect(res.headers["content-type"]).toMatch(/^application\/json/);
    expect(res.body).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument())));
  });

  test("is OpenAPI 3.1.0 in shape: info, unique operation ids, responses on every operation, every path parameter declared", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.info).toMatchObject({ title: expect.any(String), version: "1.0.0" });
    const ids: string[] = [];
    for (const [path, item] of Object.entries(doc.paths ?? {})) {
      expect(path.startsWith("/")).toBe(true);
      for (const method of METHODS) {
        const op = (item as Record<string, { operationId?: string; responses?: Record<string, unknown>; parameters?: { in: string; name: string; required?: boolean }[] }>)[method];
        if (!op) continue;
        ids.push(op.operationId ?? `${method} ${path}`);
        expect(Object.keys(op.responses ?? {}).length).toBeGreaterThan(0);
        for (const [status, response] of Object.entries(op.responses ?? {})) {
          expect(status).toMatch(/^([1-5]\d\d|default)$/);
          expect(response).toHaveProperty("description");
        }
        const declared = (op.parameters ?? []).filter((p) => p.in === "path");
        const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
        expect(declared.map((p) => p.name).sort()).toEqual(inPath.sort());
        for (const p of declared) expect(p.required).toBe(true);
      }
    }
    expect(new Set(ids).size).toBe(ids.length);
  });

  test("every $ref points at something in the document", () => {
    const refs = new Set<string>();
    const collect = (node: unknown) => {
      if (Array.isArray(node)) node.forEach(collect);
      else if (node && typeof node === "object") {
        for (const [k, v] of Object.entries(node)) {
          if (k === "$ref" && typeof v === "string") refs.add(v);
          else collect(v);
        }
      }
    };
    collect(doc);
    expect(refs.size).toBeGreaterThan(10);
    for (const ref of refs) {
      expect(ref.startsWith("#/")).toBe(true);
      const target = ref.slice(2).split("/").reduce<unknown>((node, part) => (node as Record<string, unknown> | undefined)?.[part.replace(/~1/g, "/").replace(/~0/g, "~")], doc);
      expect([ref, target !== undefined]).toEqual([ref, true]);
    }
  });

  test("the job request is the shared discriminated union of the eight endpoints, each with its strict params", () => {
    const schemas = doc.components!.schemas! as Record<string, Record<string, unknown>>;
    const union = schemas.JobRequest as { oneOf: unknown[]; discriminator: { propertyName: string; mapping: Record<string, string> } };
    expect(union.discriminator.propertyName).toBe("endpoint");
    expect(Object.keys(union.discriminator.mapping).sort()).toEqual(Object.keys(RESULT_SCHEMAS).sort());
    expect(union.oneOf).toHaveLength(8);
    expect(schemas.WebNewsParams).toMatchObject({ additionalProperties: false, required: ["query"] });
    expect((schemas.WebSearchParams as { properties: Record<string, unknown> }).properties.page).toMatchObject({ type: "integer", minimum: 1, maximum: 10 });
    // Result shapes name their blocks per endpoint.
    expect(Object.keys((schemas.WebNewsResult as { properties: object }).properties)).toEqual(["search_parameters", "layout", "news_results"]);
    expect(Object.keys((schemas.WebSearchResult as { properties: object }).properties)).toEqual(
      expect.arrayContaining(["organic_results", "ads", "ai_overview", "related_questions", "local_results", "top_stories", "discussions_and_forums", "knowledge_graph", "related_searches"]),
    );
    // A pack's places carry the price their card shows; the local results page keeps SPEC §2.5's fields.
    expect(Object.keys((schemas.LocalPackPlace as { properties: object }).properties)).toContain("price");
    expect(Object.keys((schemas.LocalPlace as { properties: object }).properties)).not.toContain("price");
    // Organic results document the fields of issue 25 the page shows (docs/RESULTS.md).
    const organic = (schemas.OrganicResult as { properties: Record<string, { description?: string }> }).properties;
    for (const field of ["redirect_link", "thumbnail", "favicon", "snippet_highlighted_words", "date", "rich_snippet"]) {
      expect([field, typeof organic[field]?.description]).toEqual([field, "string"]);
    }
  });

  test("documents every route the app serves", () => {
    const documented = documentedOperations(doc);
    const routes = appRoutes(stack.api.app);
    expect(routes.length).toBeGreaterThan(3);
    const missing = routes
      .filter((r) => !IGNORED.some((re) => re.test(r.path)))
      .filter((r) => {
        const methods = documented.get(canonicalExpress(r.path));
        if (!methods) return true;
        return r.method === "_all" ? methods.size === 0 : !methods.has(r.method);
      })
      .map((r) => `${r.method.toUpperCase()} ${r.path}`);
    expect(missing).toEqual([]);
  });

  test("documents the routes the brief names, whoever builds them", () => {
    const documented = documentedOperations(doc);
    const expected: [string, string][] = [
      ["post", "/v1/jobs"], ["get", "/v1/jobs/{}"], ["get", "/v1/account"], ["get", "/search.json"], ["get", "/search"],
      ["post", "/mcp"], ["get", "/v1/webhooks/secret"], ["post", "/v1/webhooks/secret/rotate"], ["get", "/v1/jobs/{}/deliveries"],
      ["get", "/healthz"], ["get", "/readyz"], ["get", "/metrics"], ["get", "/locations.json"], ["get", "/account"],
      ["get", "/searches/{}"], ["get", "/openapi.json"], ["get", "/docs"],
    ];
    for (const [method, path] of expected) expect([method, path, documented.get(path)?.has(method)]).toEqual([method, path, true]);
  });

  test("the rate-limited routes document 429 with Retry-After and the RateLimit headers", () => {
    for (const [path, method] of [["/v1/jobs", "post"], ["/search.json", "get"], ["/search", "get"], ["/mcp", "post"]] as const) {
      const op = (doc.paths![path] as Record<string, { responses: Record<string, { headers?: object }> }>)[method]!;
      expect(Object.keys(op.responses["429"]!.headers ?? {}).sort()).toEqual(["RateLimit", "RateLimit-Policy", "Retry-After"]);
    }
  });

  test("/docs serves its HTML page, and every script and stylesheet it loads comes from this server", async () => {
    const page = await request(stack.api.app).get("/docs");
    expect(page.status).toBe(200);
    expect(page.headers["content-type"]).toMatch(/^text\/html/);
    expect(page.headers["content-security-policy"]).toMatch(/script-src 'self'/);
    expect(page.text).toContain('id="swagger-ui"');
    const assets = [...page.text.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets).toEqual(expect.arrayContaining(["/docs/assets/swagger-ui.css", "/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui-standalone-preset.js", "/docs/init.js"]));
    for (const asset of assets) {
      expect(asset.startsWith("/")).toBe(true);
      const res = await request(stack.api.app).get(asset);
      expect([asset, res.status]).toEqual([asset, 200]);
      if (asset.endsWith(".js")) expect(res.headers["content-type"]).toMatch(/javascript/);
      if (asset.endsWith(".css")) expect(res.headers["content-type"]).toMatch(/^text\/css/);
    }
    const init = await request(stack.api.app).get("/docs/init.js");
    expect(init.text).toContain('url: "/openapi.json"');
    expect(init.text).toContain("validatorUrl: null");
    expect(page.text + init.text).not.toMatch(/https?:\/\//);
    const bundle = await request(stack.api.app).get("/docs/assets/swagger-ui-bundle.js");
    expect(bundle.text.length).toBeGreaterThan(100_000);
  });

  test("the docs assets are served from the swagger-ui package only: no directory listing or stray files", async () => {
    expect((await request(stack.api.app).get("/docs/assets/")).status).toBe(404);
    expect((await request(stack.api.app).get("/docs/assets/../package.json")).status).toBe(404);
  });

  const withFixtures = fixturesAvailable ? test : test.skip;

  withFixtures("the running API answers in the documented shapes", async () => {
    const { auth } = await stack.account(20);
    const endpoints: [keyof typeof RESULT_SCHEMAS, object][] = [
      ["web-search", { query: "coffee" }],
      ["web-news", { query: "schloss johannisberg" }],
      ["web-local", { query: "coffee" }],
      ["web-autocomplete", { query: "cheesecake" }],
    ];
    for (const [endpoint, params] of endpoints) {
      const res = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint, params, queue: "live" });
      expect(res.status).toBe(200);
      expect(res.body.job.status).toBe("completed");
      const parsed = jobResponse.safeParse(res.body);
      expect([endpoint, parsed.success ? "ok" : parsed.error.message]).toEqual([endpoint, "ok"]);
      const result = RESULT_SCHEMAS[endpoint].safeParse(res.body.result);
      expect([endpoint, result.success ? "ok" : result.error.message]).toEqual([endpoint, "ok"]);
    }
    const queued = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: { query: "coffee" } });
    expect(jobAccepted.safeParse(queued.body).success).toBe(true);
    const invalid = await request(stack.api.app).post("/v1/jobs").set("Authorization", auth).send({ endpoint: "web-search", params: {} });
    expect(errorBody.safeParse(invalid.body).success).toBe(true);
    const unauthorized = await request(stack.api.app).get("/v1/account");
    expect(errorBody.safeParse(unauthorized.body).success).toBe(true);
    const account = await request(stack.api.app).get("/v1/account").set("Authorization", auth);
    expect(accountView.safeParse(account.body).success).toBe(true);

    const search = await request(stack.api.app).get("/search.json").query({ q: "coffee" }).set("Authorization", auth);
    expect(search.status).toBe(200);
    expect(compatSearchResponse.safeParse(search.body).success).toBe(true);
    const archived = await request(stack.api.app).get(`/searches/${search.body.search_metadata.id}`).set("Authorization", auth);
    expect(compatSearchResponse.safeParse(archived.body).success).toBe(true);
    const compatAcct = await request(stack.api.app).get("/account").set("Authorization", auth);
    const parsedAcct = compatAccount.safeParse(compatAcct.body);
    expect(parsedAcct.success ? "ok" : parsedAcct.error.message).toBe("ok");
    expect(compatErrorBody.safeParse((await request(stack.api.app).get("/search.json")).body).success).toBe(true);
    const mcp401 = await request(stack.api.app).post("/mcp").send({ jsonrpc: "2.0", id: 1, method: "ping" });
    expect(mcp401.status).toBe(401);
    expect(jsonRpcError.safeParse(mcp401.body).success).toBe(true);
  }, 30_000);
});
