#!/usr/bin/env bash
# `make check`: the static gates. Each must be clean (a warning counts as a finding):
#   rustfmt  cargo fmt --all --check                      (rustfmt.toml)
#   clippy   cargo clippy --workspace --all-targets -- -D warnings
#            (oh-node included: checking the binding needs neither Node nor a link)
#   tsc      the extension's `tsc --noEmit` (its tsconfig; it also reads npm/executor/index.d.ts),
#            then extension/vitest.config.ts, which that tsconfig leaves out
#   node     `node --check` on every .js/.mjs/.cjs file of the checkout
#   ruff     ruff check over every Python file of the checkout             (ruff.toml)
#   v1-lock  openhands-runtime-py/v1-lock.txt still covers pyproject.toml (scripts/check-v1-lock.py)
# Not checked: tests/vscode/fixtures/ide-workspace, whose type error the IDE suite asserts.
# Installs what it needs first (idempotent, stamps): the extension's npm packages and ruff in a
# tools venv of its own (scripts/setup-python-tools.sh; OH_VENV_TOOLS overrides its place).
# Every gate runs even after one failed; the exit status is 1 if any failed. The wall time of each
# step and the total are printed at the end.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
tools=${OH_VENV_TOOLS:-$HOME/.cache/openhands-vscode-runtime/venv-tools}

now() { date +%s.%N; }
seconds_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

summary=()
failed=0
step() {  # step NAME COMMAND...: run it, record its wall time and verdict
  local name=$1 t0 rc
  shift
  echo "== check: $name" >&2
  t0=$(now)
  "$@"
  rc=$?
  if [ "$rc" -eq 0 ]; then
    summary+=("$(printf '%-8s %7ss  ok' "$name" "$(seconds_since "$t0")")")
  else
    summary+=("$(printf '%-8s %7ss  FAILED (exit %d)' "$name" "$(seconds_since "$t0")" "$rc")")
    failed=1
  fi
}

setup() {
  scripts/setup-node.sh extension >&2 && OH_VENV_TOOLS=$tools scripts/setup-python-tools.sh
}

# Incremental: the build info (what was checked, by hash) lives beside the packages, so an
# unchanged tree is re-checked in a fraction of the full time.
typecheck() {
  local tsc=extension/node_modules/.bin/tsc cache=extension/node_modules/.cache
  mkdir -p "$cache"
  "$tsc" -p extension --noEmit --incremental --tsBuildInfoFile "$cache/check-src.tsbuildinfo" &&
    "$tsc" --noEmit --incremental --tsBuildInfoFile "$cache/check-vitest-config.tsbuildinfo" \
      --strict --skipLibCheck --target es2022 --module preserve --moduleResolution bundler extension/vitest.config.ts
}

# Tracked and new (not ignored) files that still exist.
files_named() {
  git ls-files -z --cached --others --exclude-standard -- "$@" |
    while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done
}

node_syntax() {
  # One `node --check` per file (it takes a single file, and knows a module from a script), two at a time.
  files_named '*.js' '*.mjs' '*.cjs' | xargs -0 -r -n1 -P2 node --check
}

t_start=$(now)
step setup setup
step rustfmt cargo fmt --all --check
step clippy cargo clippy --workspace --all-targets -- -D warnings
step tsc typecheck
step node node_syntax
step ruff "$tools/bin/ruff" check .
step v1-lock scripts/check-v1-lock.py

echo
echo "make check:"
printf '  %s\n' "${summary[@]}"
printf '  %-8s %7ss  %s\n' total "$(seconds_since "$t_start")" "$([ "$failed" -eq 0 ] && echo ok || echo FAILED)"
exit "$failed"
