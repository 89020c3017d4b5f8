# syntax=docker/dockerfile:1.7
# TARSy database migrations: a one-shot that runs `pnpm db:migrate` (prisma/migrations in
# order, with Prisma's _prisma_migrations bookkeeping) against $DATABASE_URL and exits.
# Used by deploy/compose.yaml (service "migrate") and the Kubernetes Job "tarsy-migrate".
#
#   docker build -f deploy/docker/migrate.Dockerfile -t tarsy/migrate .   (from the repository root)
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
ENV CI=true PNPM_HOME=/pnpm PATH=/pnpm:$PATH
RUN npm install -g pnpm@10.34.9
WORKDIR /src
COPY pnpm-lock.yaml pnpm-workspace.yaml ./
RUN pnpm fetch
COPY . .
RUN pnpm install --offline --frozen-lockfile && pnpm db:generate
RUN sh deploy/docker/install-prod.sh @tarsy/db /out

FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/* \
  && npm install -g pnpm@10.34.9 tsx@4.23.15 \
  && npm cache clean --force \
  && groupadd --gid 10001 tarsy \
  && useradd --uid 10001 --gid tarsy --home-dir /tmp --no-create-home --shell /usr/sbin/nologin tarsy
ENV NODE_ENV=production HOME=/tmp CI=true
COPY --from=build /out /app
WORKDIR /app
USER 10001:10001
ENTRYPOINT ["/usr/bin/tini", "--", "pnpm", "db:migrate"]
