#!/usr/bin/env bash
# The wire is spelled only in packages/contracts. Fails (exit 1, listing each offending line)
# when code elsewhere spells, as a string literal:
#   - a subject: a string starting with one of the catalog's SUBJECT_PREFIXES and a dot
#     ("work.…", `events.session.${id}`, `${prefix}.dlq.…`); use the contracts' builders;
#   - a status set: two or more session/execution statuses listed together, on one line
#     (["completed", "failed"]) or one per line; use the contracts' *_STATUSES constants.
# A line that names such a literal on purpose (e.g. a test's expected value) ends with a
# comment `// wire-literal: <why>` (`-- wire-literal: <why>` inside SQL).
# Comment lines are not checked. Run from anywhere inside the repository.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"

# The vocabulary comes from the catalog itself, so a new subject root or status is covered.
vocabulary=$(node_modules/.bin/tsx -e '
  import("./packages/contracts/src/index.ts").then((c) => {
    console.log(c.SUBJECT_PREFIXES.join(" "));
    console.log([...new Set([...c.SessionStatusSchema.options, ...c.ExecutionStatusSchema.options])].join(" "));
  });')
prefixes=$(sed -n 1p <<<"$vocabulary")
statuses=$(sed -n 2p <<<"$vocabulary")
if [[ -z $prefixes || -z $statuses ]]; then
  echo "check-wire-literals: could not read SUBJECT_PREFIXES and statuses from packages/contracts" >&2
  exit 2
fi
alt() { sed -e 's/\./\\./g' -e 's/ /|/g' <<<"$1"; }
prefix_re=$(alt "$prefixes")
status_re=$(alt "$statuses")

files=(-- '*.ts' '*.tsx' '*.js' '*.mjs' '*.cjs' ':!packages/contracts/**' ':!**/generated/**')
# Keeps code lines: drops comment lines and lines marked as deliberate.
grep_code() { git grep -nE "$1" "${files[@]}" || true; }
code_only() { grep -vE '^[^:]+:[0-9]+:\s*(\*|//|/\*)' | grep -vE '(//|--) wire-literal: \S' || true; }

q="[\"'\`]"
subject_hits=$(grep_code "(${q}|\\}\\.)(${prefix_re})\\." | code_only)
s="${q}(${status_re})${q}"
inline_sets=$(grep_code "${s}\\s*,\\s*${s}" | code_only)
# One status per line: two such lines in a row in one file are a set spelled over lines.
multiline_sets=$(grep_code "^\\s*${s},?\\s*$" | awk -F: '
  $1 == file && $2 == line + 1 { if (!shown) print prev; print; shown = 1; file = $1; line = $2; prev = $0; next }
  { file = $1; line = $2; prev = $0; shown = 0 }' | code_only)

status=0
report() {
  if [[ -n $2 ]]; then
    echo "$1"
    sed 's/^/  /' <<<"$2"
    status=1
  fi
}
report "Subject literals outside packages/contracts (use its builders, e.g. sessionEventsSubject, WORK_SUBJECTS):" "$subject_hits"
report "Status-set literals outside packages/contracts (use its *_STATUSES constants):" "$inline_sets"
report "Status sets spelled over several lines outside packages/contracts:" "$multiline_sets"
if [[ $status -ne 0 ]]; then
  echo "A line that names such a literal on purpose ends with '// wire-literal: <why>'." >&2
else
  echo "check-wire-literals: no subject or status-set literals outside packages/contracts"
fi
exit "$status"
