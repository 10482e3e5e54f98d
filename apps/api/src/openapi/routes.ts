import { createRequire } from "node:module";
import { dirname } from "node:path";
import express, { Router } from "express";
import type { AppContext } from "../context.js";
import { buildOpenApiDocument } from "./document.js";

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

/** GET /openapi.json and the interactive docs at GET /docs; no authentication. */
export function docsRoutes(ctx: AppContext): Router {
  const router = Router();
  const document = JSON.stringify(buildOpenApiDocument(ctx.env.PUBLIC_BASE_URL));

  router.get("/openapi.json", (_req, res) => {
    res.setHeader("Cache-Control", "no-cache");
    res.type("application/json").send(document);
  });
  router.get("/docs", (_req, res) => {
    res.setHeader("Content-Security-Policy", CSP);
    res.type("html").send(PAGE);
  });
  router.get("/docs/init.js", (_req, res) => {
    res.type("application/javascript").send(INIT);
  });
  router.use("/docs/assets", express.static(SWAGGER_UI_DIR, { index: false, maxAge: "1d" }));
  return router;
}
