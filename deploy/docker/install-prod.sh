#!/bin/sh
# Lays out one workspace package for a container image: its sources and those of the
# workspace packages it needs, with production dependencies only, in the monorepo's own
# layout (code finds proto/ and prisma/migrations by relative path, so the layout is kept
# instead of `pnpm deploy`, which moves workspace packages under node_modules/.pnpm).
#
#   sh deploy/docker/install-prod.sh <package name> <output dir>
#
# Run from the repository root after `pnpm install` (which fills the pnpm store: the
# install here is --offline) and `pnpm db:generate` (the Prisma client is generated code,
# not in git). Every Dockerfile in this folder runs it; test/deploy runs it too.
set -eu

pkg="$1"
out="$2"

# The workspace projects the package needs at run time: itself and its workspace
# dependencies (devDependencies not followed).
dirs=$(pnpm ls --filter-prod "$pkg..." --depth -1 --json | node -e '
  let text = "";
  process.stdin.on("data", (d) => { text += d; }).on("end", () => {
    const root = process.cwd();
    for (const p of JSON.parse(text)) console.log(require("node:path").relative(root, p.path));
  });')
if [ -z "$dirs" ]; then
  echo "install-prod: no workspace package named $pkg" >&2
  exit 1
fi

mkdir -p "$out"
cp package.json pnpm-lock.yaml pnpm-workspace.yaml "$out"/
# proto/: the gRPC contract (llm-service, llm-client); prisma/: schema and migrations.
cp -R proto prisma "$out"/

# Every workspace project's package.json, so the shared lockfile matches the workspace;
# full sources only for the projects the package needs.
for manifest in $(node -e '
  const { readFileSync, readdirSync, existsSync } = require("node:fs");
  const globs = readFileSync("pnpm-workspace.yaml", "utf8").match(/^  - .+$/gm) ?? [];
  for (const g of globs) {
    const pattern = g.slice(4).replace(/["\x27]/g, "");
    const dirs = pattern.endsWith("/*")
      ? readdirSync(pattern.slice(0, -2)).map((n) => `${pattern.slice(0, -2)}/${n}`)
      : [pattern];
    for (const d of dirs) if (existsSync(`${d}/package.json`)) console.log(`${d}/package.json`);
  }'); do
  mkdir -p "$out/$(dirname "$manifest")"
  cp "$manifest" "$out/$manifest"
done
for dir in $dirs; do
  mkdir -p "$out/$dir"
  (cd "$dir" && tar --exclude=./node_modules --exclude=./test --exclude=./bench \
    --exclude='*.test.ts' -cf - .) | (cd "$out/$dir" && tar -xf -)
done

cd "$out"
pnpm install --offline --frozen-lockfile --prod --ignore-scripts --filter-prod "$pkg..." \
  --config.confirmModulesPurge=false
