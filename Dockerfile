# syntax=docker/dockerfile:1.7
#
# Two production images from the same bundles: `runtime`, small, for the API, the CLI and workers
# that use a remote browser; `worker`, the same plus Debian's chromium, for workers that render pages
# with a local browser. The command picks which app runs (docker-compose.yml sets it per service):
#   node --enable-source-maps dist/api.mjs      the HTTP API (port 3000)
#   node --enable-source-maps dist/worker.mjs   BullMQ workers (WORKER_QUEUES; health on HEALTH_PORT)
#   node dist/cli.mjs help                       accounts, keys and credits
#
# Why bundle: the workspace packages export their TypeScript source, and Node 20 cannot run it.
# Rather than ship a TypeScript loader (tsx, esbuild) and the dev toolchain to production, esbuild
# turns each app and the workspace code it imports into one ESM file. Third-party packages are
# NOT bundled (some read their own files at run time: bull-board's UI, swagger-ui's assets); they
# come from a production-only install with a flat (hoisted) node_modules, so the bundles in dist/
# resolve them the way plain Node does.

ARG NODE_IMAGE=node:20-bookworm-slim

# --- pnpm, pinned to the version in package.json "packageManager" -------------------------------
FROM ${NODE_IMAGE} AS pnpm
ENV CI=true
RUN npm install --global pnpm@10.34.8 && npm cache clean --force
WORKDIR /app

# --- the package store, filled from the lockfile alone (cached until pnpm-lock.yaml changes) ----
FROM pnpm AS fetch
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch

# --- full install and the bundles ----------------------------------------------------------------
FROM fetch AS build
COPY . .
RUN pnpm install --frozen-lockfile --offline --config.node-linker=hoisted
RUN node --input-type=module <<'EOF'
import { build } from "esbuild";
await build({
  // parse-thread: the module each worker's parse threads load, found beside worker.mjs.
  entryPoints: { api: "apps/api/src/index.ts", worker: "apps/worker/src/index.ts", cli: "apps/cli/src/main.ts", "parse-thread": "packages/upstream/src/parse-thread.ts" },
  outdir: "dist",
  outExtension: { ".js": ".mjs" },
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: true,
  logLevel: "info",
  plugins: [{
    // Workspace packages (@serp/*) are bundled from source; every other package stays external.
    name: "third-party-external",
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (a) => (a.path.startsWith("@serp/") ? undefined : { path: a.path, external: true }));
    },
  }],
});
EOF
# The shipped fetch profile table is data read at run time, beside the bundles (profile-source.ts).
RUN cp packages/upstream/profiles.json dist/profiles.json
# The SQL migrations the apps run at start (packages/store/src/pg/pool.ts finds them beside the bundles).
RUN cp -r packages/store/migrations dist/migrations

# --- production dependencies only, flat -----------------------------------------------------------
FROM fetch AS prod-deps
COPY . .
# TypeScript arrives only as an optional peer of valibot (via bull-board), for types: 23 MB unused at run time.
RUN pnpm install --frozen-lockfile --offline --prod --ignore-scripts --config.node-linker=hoisted \
 && rm -rf node_modules/typescript

# --- the workers' image: the same bundles, plus Debian's chromium for the browser transport ---------
# (and xvfb for BROWSER_HEADLESS=false). Kept apart so the API image stays small; workers pointed at
# a remote browser fleet (BROWSER_CDP_URL / BROWSER_WS_ENDPOINT) can run the API image instead.
FROM ${NODE_IMAGE} AS worker
ENV NODE_ENV=production
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium xvfb xauth fonts-liberation \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Kept upstream pages (RAW_PAGES_DIR), the one folder the process writes: a volume shared with the
# API goes here, and a new named volume takes this folder's owner.
ENV RAW_PAGES_DIR=/data/raw-pages
RUN mkdir -p /data/raw-pages && chown node:node /data/raw-pages
USER node
EXPOSE 9100
STOPSIGNAL SIGTERM
CMD ["node", "--enable-source-maps", "dist/worker.mjs"]

# --- the image that runs the API and the CLI (and workers that use a remote browser) ---------------
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production
WORKDIR /app
# Owned by root and read-only to the process: the service never writes its own code or modules.
COPY --from=prod-deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# Kept upstream pages (RAW_PAGES_DIR), read by the API and written by workers run from this image.
ENV RAW_PAGES_DIR=/data/raw-pages
RUN mkdir -p /data/raw-pages && chown node:node /data/raw-pages
# The unprivileged user the official Node images ship (uid 1000).
USER node
EXPOSE 3000 9100
STOPSIGNAL SIGTERM
CMD ["node", "--enable-source-maps", "dist/api.mjs"]
