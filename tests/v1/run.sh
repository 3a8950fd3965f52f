#!/usr/bin/env bash
# The OpenHands V1 differential suite (`make test-v1`): builds oh-executor, makes sure the V1 venv
# of V1_VERSION exists (scripts/setup-python-v1.sh; default the newest supported release, V1_NEWEST
# in scripts/venv-lib.sh) and the unprivileged test user, then runs tests/v1/diff_v1.py (its root
# and non-root passes) and the end-to-end tests. Arguments are case selectors (then only the
# differential suite runs). `make test-v1-oldest` is V1_VERSION=$V1_OLDEST: the differential
# suite's sample for that release (oldest_sample.json, chosen from the SDK's diff to the newest;
# README.md), whose check needs the newest release's venv too; no end-to-end tests (the SDK code
# they run is the same in both releases: README.md, "The oldest release").
# V1_PART: `differential`, `e2e` or `all` (the default): `make test` runs the differential (a live
# reference) before its background build and the end-to-end tests (no reference) beside it.
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
part=${V1_PART:-all}
case $part in differential|e2e|all) ;; *) echo "tests/v1/run.sh: V1_PART must be differential, e2e or all, not '$part'" >&2; exit 2 ;; esac
source "$repo/scripts/venv-lib.sh"
export V1_VERSION=${V1_VERSION:-$V1_NEWEST}
venv=$(v1_venv_path "$V1_VERSION")
"$repo/scripts/setup-python-v1.sh"
sample=()
if [ "$V1_VERSION" != "$V1_NEWEST" ]; then
  V1_VERSION=$V1_NEWEST "$repo/scripts/setup-python-v1.sh"
  newest=$(v1_venv_path "$V1_NEWEST")
  sample=(--oldest-sample "$("$newest/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')")
fi
# oh-executor for the differential suite, the headless executor for the end-to-end tests.
(cd "$repo" && cargo build -q -p oh-executor --bin oh-executor -p oh-headless --bin openhands-vscode-executor)
target=${CARGO_TARGET_DIR:-$repo/target}
export OH_VSCODE_EXECUTOR=${OH_VSCODE_EXECUTOR:-$target/debug/openhands-vscode-executor}
export OH_EXECUTOR=${OH_EXECUTOR:-$target/debug/oh-executor}
# The non-root pass's user must reach the interpreter (pyenv's lives under root's 0700 home), the
# venv, this checkout and the executor.
export V1_TEST_USER=${V1_TEST_USER:-oh-v1-test}
"$repo/scripts/setup-test-user.sh" "$V1_TEST_USER" "$(readlink -f "$venv/bin/python")" "$venv/bin/python" \
  "$repo/tests/v1" "$repo/tests/conformance/harness_setup.py" "$repo/tests/conformance/harness_compare.py" \
  "$repo/tests/conformance/reference_variants.py" "$repo/tests/conformance/cases" "$OH_EXECUTOR"
# A clean HOME (a host .bashrc can be slow or noisy), the V0 suite's locale, no cost-map download.
home=$(mktemp -d /tmp/ohv1-home.XXXXXX)
trap 'rm -rf "$home"' EXIT
# bash >= 5.1 brackets every command with ESC[?2004l/ESC[?2004h; V1's subprocess backend (a pipe,
# no terminal emulator) passes them into its output. Off for both sides, like a terminal would eat
# them. The non-root pass gets a copy in a HOME of its own.
echo 'set enable-bracketed-paste off' > "$home/.inputrc"
export HOME=$home LANG=C.UTF-8 LC_ALL=C.UTF-8 LITELLM_LOCAL_MODEL_COST_MAP=True PYENV_REHASH_TIMEOUT=1
export OPENHANDS_SUPPRESS_BANNER=1 LOG_LEVEL=${LOG_LEVEL:-WARNING}
unset TMUX NO_CHANGE_TIMEOUT_SECONDS
# V1 1.58.x starts its terminal's bash under `nice -n 10` (OH_TERMINAL_PROCESS_PRIORITY); ours runs
# at the executor's priority. Both sides at the same priority, or a busy machine starves only the
# reference: with the real-host suite running beside it, every C-c case with a 1 s no-change
# timeout answered "no new output" on V1's side (its bash printed the prompt too late).
export OH_TERMINAL_PROCESS_PRIORITY=none
if [ $# -gt 0 ]; then
  # Not exec: the EXIT trap removes the clean HOME (set -e ends here with the suite's status).
  "$venv/bin/python" "$repo/tests/v1/diff_v1.py" "${sample[@]}" "$@"
  exit 0
fi
[ "$part" = e2e ] || "$venv/bin/python" "$repo/tests/v1/diff_v1.py" "${sample[@]}"
[ "$V1_VERSION" = "$V1_NEWEST" ] && [ "$part" != differential ] || exit 0
# End to end: V1 conversations whose tools run in the headless executor. A test that hangs fails
# after 10 minutes (the longest takes well under one) instead of holding the run until CI's limit.
"$venv/bin/python" -m pytest -q -p no:cacheprovider --timeout=600 "$repo/tests/v1" -k 'not diff' -s
