#!/usr/bin/env bash
# Runs make targets one after another, timing each, and prints the per-suite breakdown at the end
# (also when a suite fails: the table then names it and the run stops there, red).
#   scripts/run-suites.sh TIER TARGET...     (the Makefile's `test` and `quick` call it)
# One run, one reference: the conformance drivers of the run share the reference's results through
# CONFORMANCE_REFERENCE_STORE (tests/conformance/reference_store.py), a folder made here and removed
# at the end. Suites run strictly one at a time: nothing builds beside a suite that compares with a
# live reference (a loaded machine changes the reference's timing-dependent replies).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tier=$1; shift
run_dir=$(mktemp -d /tmp/oh-run.XXXXXX)
trap 'rm -rf "$run_dir"' EXIT
export CONFORMANCE_REFERENCE_STORE="$run_dir/reference"
report=${OH_TEST_ARTIFACTS:-$repo/tests/artifacts}/timings-$tier.txt
mkdir -p "$(dirname "$report")"
names=() secs=() status=()
start=$(date +%s)

print_table() {
  {
    echo "== make $tier: per-suite wall time (started $(date -u -d "@$start" '+%F %T') UTC, $(nproc) cores)"
    local i
    for i in "${!names[@]}"; do
      printf '  %-24s %5d s  %3d min %02d s  %s\n' "${names[$i]}" "${secs[$i]}" $((secs[i] / 60)) $((secs[i] % 60)) "${status[$i]}"
    done
    local total=$(( $(date +%s) - start ))
    printf '  %-24s %5d s  %3d min %02d s\n' total "$total" $((total / 60)) $((total % 60))
  } | tee "$report"
}

for target in "$@"; do
  t0=$(date +%s)
  set +e
  make --no-print-directory -C "$repo" "$target"
  rc=$?
  set -e
  names+=("$target") secs+=($(( $(date +%s) - t0 )))
  if [ $rc -ne 0 ]; then
    status+=("FAILED (exit $rc)")
    print_table
    echo "make $tier: $target failed; the suites after it did not run" >&2
    exit $rc
  fi
  status+=(ok)
done
print_table
