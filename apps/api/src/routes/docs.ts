/**
 * GET /openapi.json and the interactive docs at GET /docs; no authentication. The document is
 * handed in (app.ts builds it from every route table), so this file declares its routes without
 * depending on the document that lists them.
 */
import { createRequire } from "node:module";
import { dirname } from "node:path";
import express, { Router } from "express";
import { z } from "zod";
import { RouteTable } from "./define.js";

/** swagger-ui-dist's files, served from node_modules: the docs page needs no CDN. */
const SWAGGER_UI_DIR = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Search results API</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css">
  <link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

const INIT = `window.ui = SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  // No badge from the public validator: the page contacts no other host.
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  plugins: [SwaggerUIBundle.plugins.DownloadUrl],
  layout: "StandaloneLayout",
});
`;

/** Everything the page loads comes from this server (scripts only from files, no inline code). */
const CSP = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; object-src 'none'; frame-ancestors 'none'";

export const docsRouteTable = new RouteTable();

const openapi = docsRouteTable.define({
  method: "get",
  path: "/openapi.json",
  operationId: "openapi",
  tags: ["Operations"],
  summary: "This document",
  responses: { 200: { description: "OpenAPI 3.1 document", content: { "application/json": { schema: z.object({}).catchall(z.unknown()) } } } },
});

const docs = docsRouteTable.define({
  method: "get",
  path: "/docs",
  operationId: "docs",
  tags: ["Operations"],
  summary: "Interactive documentation of this API",
  responses: { 200: { description: "HTML page", content: { "text/html": { schema: z.string() } } } },
});

/** The docs page's own files are internals, not part of the API: served, not declared. */
export function docsRoutes(document: object): Router {
  const router = Router();
  const body = JSON.stringify(document);

  openapi.mount(
    router,
    openapi.handle((_input, _reply, _req, res) => {
      res.setHeader("Cache-Control", "no-cache");
      res.type("application/json").send(body);
    }),
  );
  docs.mount(
    router,
    docs.handle((_input, _reply, _req, res) => {
      res.setHeader("Content-Security-Policy", CSP);
      res.type("html").send(PAGE);
    }),
  );
  router.get("/docs/init.js", (_req, res) => {
    res.type("application/javascript").send(INIT);
  });
  router.use("/docs/assets", express.static(SWAGGER_UI_DIR, { index: false, maxAge: "1d" }));
  return router;
}
