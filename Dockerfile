# syntax=docker/dockerfile:1
# The gateway's image (README "Running in containers"). Not built on the machines this project is
# developed on: they reach no container registry, so neither the base image nor npm packages can be
# fetched there. Three stages: build (all dependencies, tsc), deps (production dependencies only),
# runtime (those plus the compiled code and the manifests, as the unprivileged `node` user).

# Build: the locked dependencies (dev ones too: typescript) and the compiled code. `--ignore-scripts`
# because the package's `prepare` script runs tsc before the sources are copied.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY test/clients/package.json test/clients/package.json
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY src src
COPY codegen codegen
RUN npx tsc -p tsconfig.json

# Production dependencies only (no test clients, no compiler).
FROM node:20-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY test/clients/package.json test/clients/package.json
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

# Runtime: what the gateway reads at run time (src/paths.ts finds the root by package.json): the
# compiled code, the manifests and schemas, the migrations, the console's assets, the OpenAPI document.
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    GATEWAY_HOST=0.0.0.0 \
    PORT=8080 \
    GATEWAY_DATA_DIR=/data
WORKDIR /app
COPY --from=deps /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY package.json gateway.config.yaml ./
COPY routes routes
COPY providers providers
COPY schemas schemas
COPY console console
COPY src/generated/openapi.json src/generated/openapi.json
COPY src/store/migrations src/store/migrations
COPY src/console/assets src/console/assets
RUN mkdir -p /data && chown node:node /data
USER node
EXPOSE 8080
# Ready means the store, the limiter backend and the configuration answer (GET /readyz); node's
# own fetch, since the slim image has no curl.
HEALTHCHECK --interval=10s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM drains (GATEWAY_DRAIN_SECONDS); node runs as PID 1 and handles it itself.
CMD ["node", "--max-semi-space-size=8", "dist/src/main.js"]
