# syntax=docker/dockerfile:1.7
# TARSy notifier: Slack and webhook notifications of session events. Its one port is the
# ops server (METRICS_PORT 9464: /metrics, /health, /ready); HEALTHCHECK asks /health
# (liveness, see docs/operations.md "Images").
#
#   docker build -f deploy/docker/notifier.Dockerfile -t tarsy/notifier .          (from the repository root)
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
RUN sh deploy/docker/install-prod.sh @tarsy/notifier /out

FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/* \
  && npm install -g tsx@4.23.15 \
  && npm cache clean --force \
  && groupadd --gid 10001 tarsy \
  && useradd --uid 10001 --gid tarsy --home-dir /tmp --no-create-home --shell /usr/sbin/nologin tarsy
ENV NODE_ENV=production HOME=/tmp TARSY_CONFIG_DIR=/etc/tarsy METRICS_PORT=9464
COPY --from=build /out /app
WORKDIR /app/services/notifier
USER 10001:10001
EXPOSE 9464
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.METRICS_PORT}/health`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--", "node", "--import", "file:///usr/local/lib/node_modules/tsx/dist/loader.mjs", "src/main.ts"]
