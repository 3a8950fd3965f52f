#!/usr/bin/env bash
# Runs make targets one after another, timing each, and prints the per-suite breakdown at the end
# (also when a suite fails: the table then names it and the run stops there, red).
#   scripts/run-suites.sh TIER TARGET...     (the Makefile's `test` and `quick` call it)
# A TARGET `bg:NAME` starts `make NAME` in the background at the lowest CPU priority (its output in
# the artifacts, background-NAME.log) and goes on; `wait:NAME` waits for it and takes its status
# and wall time into the table like a suite's. `make test` builds the distribution (the platform
# builds, CPU-bound) that way, started once the reference differentials are done: no build runs
# beside a suite that compares with a live reference (a loaded machine changes the reference's
# timing-dependent replies).
# One run, one reference: the conformance drivers of the run share the reference's results through
# CONFORMANCE_REFERENCE_STORE (tests/conformance/reference_store.py), a folder made here and removed
# at the end.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tier=$1; shift
run_dir=$(mktemp -d /tmp/oh-run.XXXXXX)
declare -A bg_pid=() bg_start=()
stop_background() {  # a red run leaves no build running behind it
  local n
  for n in "${!bg_pid[@]}"; do kill -- "-${bg_pid[$n]}" 2>/dev/null || true; done
}
trap 'stop_background; rm -rf "$run_dir"' EXIT
export CONFORMANCE_REFERENCE_STORE="$run_dir/reference"
artifacts=${OH_TEST_ARTIFACTS:-$repo/tests/artifacts}
report=$artifacts/timings-$tier.txt
mkdir -p "$artifacts"
names=() secs=() cpus=() status=()
start=$(date +%s)

# Free space (GiB) on the file systems a run writes to: the caches under $HOME and /tmp. A cold
# `make test` writes about 20 GiB (venvs, build caches, the platform builds, test-dist's fresh
# venvs); a run that would fill the disk fails at once with this figure, not an hour in.
free_gib() { df -P -B1G "$HOME" /tmp 2>/dev/null | awk 'NR > 1 { print $4 }' | sort -n | head -1; }
free_at_start=$(free_gib)
min_free=${OH_MIN_FREE_GIB:-$([ "$tier" = test ] && echo 12 || echo 4)}
if [ "${free_at_start:-0}" -lt "$min_free" ]; then
  echo "make $tier: only ${free_at_start} GiB free on \$HOME or /tmp; a run needs up to about 20 (cold)." >&2
  echo "  Free some space (old build caches: ~/.cache/openhands-vscode-runtime/dist-*, /tmp), or set OH_MIN_FREE_GIB to a lower floor." >&2
  exit 1
fi

# CPU seconds (user + sys) used so far by the processes this shell has waited for, and theirs:
# `times` (its second line) in this shell, into a variable, since a $(...) subshell would count
# only its own children. A suite's CPU is the rise across it. The background build is waited for
# only at wait:NAME, so its whole CPU shows on that line and in no suite run beside it: on 2 cores,
# its share of the run's wall time is about half of it.
children_cpu=0
read_children_cpu() {
  times > "$run_dir/times"
  children_cpu=$(awk 'NR == 2 { t = 0; for (i = 1; i <= 2; i++) { split($i, a, /[ms]/); t += a[1] * 60 + a[2] } printf "%d", t }' "$run_dir/times")
}
read_children_cpu
cpu_mark=$children_cpu
take_cpu() {  # appends the CPU used since the last mark
  read_children_cpu
  cpus+=($(( children_cpu - cpu_mark )))
  cpu_mark=$children_cpu
}

print_table() {
  {
    echo "== make $tier: per-suite wall time and CPU (user + sys) (started $(date -u -d "@$start" '+%F %T') UTC, $(nproc) cores)"
    local i cpu_total=0
    for i in "${!names[@]}"; do
      printf '  %-28s %5d s  %3d min %02d s  CPU %5d s  %s\n' "${names[$i]}" "${secs[$i]}" $((secs[i] / 60)) $((secs[i] % 60)) \
        "${cpus[$i]}" "${status[$i]}"
      cpu_total=$((cpu_total + cpus[i]))
    done
    local total=$(( $(date +%s) - start ))
    printf '  %-28s %5d s  %3d min %02d s  CPU %5d s\n' total "$total" $((total / 60)) $((total % 60)) "$cpu_total"
    echo "  free disk: ${free_at_start} GiB at the start, $(free_gib) GiB now (the fuller of \$HOME and /tmp)"
  } | tee "$report"
}

fail() {  # fail NAME RC
  status+=("FAILED (exit $2)")
  print_table
  echo "make $tier: $1 failed; the suites after it did not run" >&2
  exit "$2"
}

for target in "$@"; do
  case $target in
    bg:*)
      name=${target#bg:}
      bg_start[$name]=$(date +%s)
      # Its own process group (setsid), so that a red run can stop the whole build.
      setsid nice -n 19 make --no-print-directory -C "$repo" "$name" > "$artifacts/background-$name.log" 2>&1 &
      bg_pid[$name]=$!
      echo "make $tier: $name started in the background (log: $artifacts/background-$name.log)"
      continue ;;
    wait:*)
      name=${target#wait:}
      set +e
      wait "${bg_pid[$name]}"
      rc=$?
      set -e
      unset "bg_pid[$name]"
      names+=("$name (background)") secs+=($(( $(date +%s) - bg_start[$name] )))
      take_cpu
      if [ $rc -ne 0 ]; then
        tail -40 "$artifacts/background-$name.log" >&2
        fail "$name (background)" $rc
      fi
      status+=(ok)
      continue ;;
  esac
  t0=$(date +%s)
  set +e
  make --no-print-directory -C "$repo" "$target"
  rc=$?
  set -e
  names+=("$target") secs+=($(( $(date +%s) - t0 )))
  take_cpu
  [ $rc -eq 0 ] || fail "$target" $rc
  status+=(ok)
done
print_table
