#!/usr/bin/env bash
# packages/db is the only data access: outside it, no code calls the Prisma client
# (`prisma.<model>`, `prisma.$transaction`, `tx.$executeRaw`, …). Services and tests call
# @tarsy/db functions (and tests @tarsy/db/testing), passing the client along.
# Prints every offending line and exits 1 when there is one.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"

pattern='prisma\.|\.\$(transaction|queryRaw|executeRaw|queryRawUnsafe|executeRawUnsafe)\b'
if offenders=$(git grep -n -E "$pattern" -- '*.ts' '*.tsx' ':!packages/db/**'); then
  echo "Prisma client used outside packages/db (call a @tarsy/db function instead):" >&2
  echo "$offenders" >&2
  exit 1
fi
echo "check-prisma: no Prisma client calls outside packages/db"
