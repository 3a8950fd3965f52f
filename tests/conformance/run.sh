#!/usr/bin/env bash
# Differential conformance suite: build oh-executor (debug, default target dir) and compare it with
# the OpenHands V0 reference. Extra arguments go to pytest (e.g. -k timeouts, -x, -v).
# `--driver addon` (first argument) runs ours through the napi addon's Executor.execute() with the
# headless executor's JS filesystem callbacks (addon_replay.js) instead of `oh-executor replay`.
# `--sample` (after --driver) runs the representative sample instead of every case.
# `--driver socket` with OH_SOCKET_EXECUTOR (a JSON array, the executor's command) builds nothing
# and runs that executor instead of the addon's CLI (tests/cross: another target's, under qemu).
set -euo pipefail
driver=${CONFORMANCE_DRIVER:-replay}
if [ "${1:-}" = "--driver" ]; then driver=$2; shift 2; fi
# `--sample`: every file case and three bash cases of each group (harness_setup.sample).
if [ "${1:-}" = "--sample" ]; then export CONFORMANCE_SAMPLE=1; shift; fi
# `--as-user USER` (replay driver): both sides run as that unprivileged user (created if missing,
# uid == gid: scripts/setup-test-user.sh), which root hides: permission errors, chown, modes.
as_user=
if [ "${1:-}" = "--as-user" ]; then as_user=$2; shift 2; fi
export CONFORMANCE_DRIVER=$driver
# The socket driver starts a server and the headless executor per case (~3 s each); it serves
# tests/cross (another target's executor binary, OH_SOCKET_EXECUTOR), which passes its own `-k`.
# The hub driver runs the whole case set: a pool of long-lived hub_replay.py processes (OpenHands
# imported once each) gives every case a fresh VsCodeRuntime, workspace and executor.
# CONFORMANCE_REFERENCE_STORE (a folder) shares the reference's results between the drivers of one
# run (reference_store.py); `make test-conformance` sets it.
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENV_PY="${CONFORMANCE_PYTHON:-${OH_VENV:-$HOME/.cache/openhands-vscode-runtime/venv}/bin/python}"
cd "$REPO"
if [ "$driver" = socket ] && [ -n "${OH_SOCKET_EXECUTOR:-}" ]; then
  echo "conformance: the socket driver runs $OH_SOCKET_EXECUTOR (OH_SOCKET_EXECUTOR)" >&2
elif [ "$driver" = addon ] || [ "$driver" = socket ] || [ "$driver" = hub ]; then
  npm/executor/build.sh debug
elif [ -z "${OH_EXECUTOR:-}" ]; then
  cargo build -p oh-executor
  export OH_EXECUTOR="$REPO/target/debug/oh-executor"
fi
export CONFORMANCE_SUMMARY_FILE="${CONFORMANCE_SUMMARY_FILE:-$(mktemp /tmp/ohconf-summary.XXXXXX)}"
runner=()
if [ -n "$as_user" ]; then
  [ "$driver" = replay ] || { echo "conformance: --as-user needs the replay driver" >&2; exit 2; }
  [ "$(id -u)" -eq 0 ] || { echo "conformance: --as-user needs root (to become $as_user)" >&2; exit 2; }
  "$REPO/scripts/setup-test-user.sh" "$as_user" "$(readlink -f "$VENV_PY")" "$VENV_PY" "$HERE/harness.py" "$OH_EXECUTOR"
  home=$(mktemp -d /tmp/ohconf-home.XXXXXX)
  trap 'rm -rf "$home"' EXIT
  export CONFORMANCE_ARTIFACTS="$REPO/tests/artifacts/conformance-$as_user"
  mkdir -p "$CONFORMANCE_ARTIFACTS"
  chown "$as_user:" "$home" "$CONFORMANCE_ARTIFACTS" "$CONFORMANCE_SUMMARY_FILE"
  if [ -n "${CONFORMANCE_REFERENCE_STORE:-}" ]; then
    # Root's results are of no use to this pass (the store's key tells root from not), and the
    # run's folder is root's (0700): the user's results go to a store of their own.
    export CONFORMANCE_REFERENCE_STORE="$home/reference"
  fi
  # SHELL: tmux runs every session's command through `$SHELL -c`, else through the user's login
  # shell, and this user's is nologin: the keeper and each reference session would end at once
  # ("no server running"; CI starts the run without SHELL). OpenHands' sandbox user logs in to bash.
  runner=(setpriv --reuid="$as_user" --regid="$as_user" --init-groups env HOME="$home" SHELL=/bin/bash PYTHONDONTWRITEBYTECODE=1)
  echo "conformance: both sides run as $as_user ($(id "$as_user"))" >&2
fi
start=$(date +%s)
set +e
"${runner[@]}" "$VENV_PY" -m pytest "$HERE" -q -p no:cacheprovider -W ignore::DeprecationWarning -o addopts="" "$@"
rc=$?
set -e
echo "conformance ($driver driver) wall time: $(( $(date +%s) - start )) s"
[ -s "$CONFORMANCE_SUMMARY_FILE" ] && cat "$CONFORMANCE_SUMMARY_FILE"
exit $rc
