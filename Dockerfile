# syntax=docker/dockerfile:1
# One image for every role of agent-commerce (docs/deployment.md):
#   docker build -t agent-commerce:2.1.0 .
#   docker run -p 8080:8080 agent-commerce:2.1.0              # embedded: the whole system
#   docker run -e ROLE=pricing agent-commerce:2.1.0            # or: docker run agent-commerce:2.1.0 pricing
# Roles: embedded (default), gateway, pricing, promotions, procurement (gateway/role.ts).
# Node 24 LTS (tested: test/runtime, and .ci/run's smoke set on Node 24). Pin the base by digest in
# your registry mirror (node:24.21.0-bookworm-slim@sha256:…).
ARG NODE_IMAGE=node:24.21.0-bookworm-slim

# Build stage: all dependencies, TypeScript compiled to dist/ (schemas copied beside it).
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# patches/: graphql-shield's fix for Node 23+, applied by the postinstall script (patch-package).
COPY patches ./patches
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY schemas ./schemas
COPY lib ./lib
COPY subgraphs ./subgraphs
COPY gateway ./gateway
COPY console ./console
# The build makes the embedded store's template (dist/embedded-store/, lib/db/pglite-template.ts);
# without it every new volume would run initdb at start, so the image is not made without it.
RUN npm run build && ls dist/embedded-store/pglite-*.tar

# Production dependencies only.
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY patches ./patches
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# Runtime: compiled JavaScript and production dependencies, owned by root and read-only to the
# non-root user that runs it; the only writable place it needs is DATA_DIR (and /tmp).
FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    ROLE=embedded \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data \
    APOLLO_TELEMETRY_DISABLED=1 \
    MALLOC_ARENA_MAX=2
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
RUN mkdir -p /data/keys && chown -R node:node /data
VOLUME ["/data"]
USER node
EXPOSE 8080
# Node runs as PID 1 (exec form, no shell in between) and handles SIGTERM itself
# (lib/http/app.ts closeOnSignals): readiness turns false, then it stops accepting, lets
# in-flight requests finish, flushes buffered audit entries, closes its connections and exits 0.
# It starts no child processes, so there are none to reap.
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# MALLOC_ARENA_MAX=2 (above), as every `npm run start*` script sets it: glibc's malloc keeps at
# most two arenas instead of one per thread that ever allocated (V8's compiler and GC threads,
# libuv's pool), ~9 MB less RSS per process, measured (docs/performance.md).
# V8's memory flags per role, as `npm run start:*` sets them: pass NODE_OPTIONS="--max-semi-space-size=16
# --max-old-space-size=<256 gateway and embedded, 128 subgraphs>" (compose.yaml and deploy/ do). 16 MB
# semi-spaces: a quarter of the scavenges of 4 MB ones under quote load (docs/performance.md).
ENTRYPOINT ["node", "dist/gateway/role.js"]
