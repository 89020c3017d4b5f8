# syntax=docker/dockerfile:1.7
# TARSy llm-service: stateless gRPC LLM proxy (Generate; grpc.health.v1 on the same port) and
# the ops server (METRICS_PORT 9464: /metrics, /health, /ready). HEALTHCHECK asks gRPC health:
# SERVING is what compose's dependants wait for (see docs/operations.md "Images").
#
#   docker build -f deploy/docker/llm-service.Dockerfile -t tarsy/llm-service .      (from the repository root)
#
# Services run their TypeScript sources through tsx (no build step): node loads tsx's
# loader with --import, so node itself is the process tini signals (SIGTERM reaches
# runService directly). See docs/operations.md "Images".
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
ENV CI=true PNPM_HOME=/pnpm PATH=/pnpm:$PATH
RUN npm install -g pnpm@10.34.9
WORKDIR /src
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch
COPY . .
RUN pnpm install --offline --frozen-lockfile && pnpm db:generate
RUN sh deploy/docker/install-prod.sh @tarsy/llm-service /out

FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/* \
  && npm install -g tsx@4.23.15 \
  && npm cache clean --force \
  && groupadd --gid 10001 tarsy \
  && useradd --uid 10001 --gid tarsy --home-dir /tmp --no-create-home --shell /usr/sbin/nologin tarsy
ENV NODE_ENV=production HOME=/tmp TARSY_CONFIG_DIR=/etc/tarsy LLM_SERVICE_PORT=50051 METRICS_PORT=9464
COPY --from=build /out /app
COPY deploy/docker/grpc-health.mjs /app/llm-service/grpc-health.mjs
WORKDIR /app/llm-service
USER 10001:10001
EXPOSE 50051 9464
HEALTHCHECK --interval=15s --timeout=5s --start-period=20s --retries=3 \
  CMD node grpc-health.mjs "127.0.0.1:${LLM_SERVICE_PORT}"
ENTRYPOINT ["/usr/bin/tini", "--", "node", "--import", "file:///usr/local/lib/node_modules/tsx/dist/loader.mjs", "src/main.ts"]
