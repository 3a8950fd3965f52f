#!/usr/bin/env bash
# Differential conformance suite: build oh-executor (debug, default target dir) and compare it with
# the OpenHands V0 reference. Extra arguments go to pytest (e.g. -k timeouts, -x, -v).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
VENV_PY="${CONFORMANCE_PYTHON:-${OH_VENV:-$HOME/.cache/openhands-vscode-runtime/venv}/bin/python}"
cd "$REPO"
if [ -z "${OH_EXECUTOR:-}" ]; then
  cargo build -p oh-executor
  export OH_EXECUTOR="$REPO/target/debug/oh-executor"
fi
export CONFORMANCE_SUMMARY_FILE="${CONFORMANCE_SUMMARY_FILE:-$(mktemp /tmp/ohconf-summary.XXXXXX)}"
start=$(date +%s)
set +e
"$VENV_PY" -m pytest "$HERE" -q -p no:cacheprovider -W ignore::DeprecationWarning -o addopts="" "$@"
rc=$?
set -e
echo "conformance wall time: $(( $(date +%s) - start )) s"
[ -s "$CONFORMANCE_SUMMARY_FILE" ] && cat "$CONFORMANCE_SUMMARY_FILE"
exit $rc
